package delivery

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzFindComment: whatever a host answers for a comment list, FindComment
// returns an error or the id of a comment, not a system note, that starts
// with the marker, or zero when none does; and it counts the page's
// comments so that paging stops.
func FuzzFindComment(f *testing.F) {
	const marker = "<!-- kuvryn-sync preview shop/api -->"
	for _, seed := range []string{
		`[]`,
		`[{"id":1,"body":"LGTM"},{"id":2,"body":"` + marker + `\nplan"}]`,
		`[{"id":3,"body":"` + marker + `","system":true},{"id":4,"body":"> ` + marker + `"}]`,
		`[{"id":-5,"body":"` + marker + `"}]`,
		`[{"id":"6","body":"x"}]`,
		`{"message":"Bad credentials"}`,
		`[{"id":7,"body":null,"user":{"login":"x"}}]`,
		`null`,
		`[`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, page []byte) {
		id, n, err := FindComment(page, marker)
		if err != nil {
			if id != 0 || n != 0 || strings.Contains(err.Error(), string(page)) && len(page) > 8 {
				t.Fatalf("error %v with id %d, n %d", err, id, n)
			}
			return
		}
		var list []map[string]any
		if json.Unmarshal(page, &list) != nil || n != len(list) {
			t.Fatalf("accepted %q as %d comments", page, n)
		}
		if id == 0 {
			return
		}
		for _, c := range list {
			if v, _ := c["id"].(float64); int64(v) == id {
				if body, _ := c["body"].(string); strings.HasPrefix(body, marker) && c["system"] != true {
					return
				}
			}
		}
		t.Fatalf("returned id %d, which is no comment of ours in %q", id, page)
	})
}
