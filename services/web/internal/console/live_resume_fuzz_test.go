package console

import (
	"strings"
	"testing"
)

// FuzzResumeFrom: whatever a request sends as Last-Event-ID and rv, the
// versions a stream resumes from are one per watch, each only digits and
// letters, or the request is refused.
func FuzzResumeFrom(f *testing.F) {
	for _, seed := range []struct {
		id, rv  string
		watches int
	}{
		{"", "123", 2}, {"124 125", "123", 2}, {"124", "123", 2}, {"124 12%5", "123", 2},
		{"", "", 1}, {"", "1\n2", 1}, {"1 2 3", "9", 3}, {strings.Repeat("9", 300), "9", 1}, {"\u00a0", "x", 1},
	} {
		f.Add(seed.id, seed.rv, seed.watches)
	}
	f.Fuzz(func(t *testing.T, id, rv string, watches int) {
		if watches < 1 || watches > 4 {
			return
		}
		rvs, err := resumeFrom(id, rv, watches)
		if err != nil {
			return
		}
		if len(rvs) != watches {
			t.Fatalf("%d versions for %d watches", len(rvs), watches)
		}
		for _, v := range rvs {
			if notResourceVersion(v) || len(v) > maxResumeBytes {
				t.Fatalf("resumes from %q", v)
			}
		}
	})
}
