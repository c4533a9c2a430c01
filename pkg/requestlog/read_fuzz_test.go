package requestlog_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kuvryn/kuvryn-sync/pkg/requestlog"
)

// FuzzRead feeds Read any file: it returns entries or an error, never
// panics, and what it returns writes back to lines it reads the same.
func FuzzRead(f *testing.F) {
	for _, seed := range []string{
		"",
		"\n\n",
		`{"time":"2026-12-07T21:00:00Z","method":"GET","path":"/api/v1/namespaces/bench/secrets/a","status":200}` + "\n",
		`{"time":"2026-12-07T21:00:00Z","method":"PATCH","path":"/apis/apps/v1/namespaces/bench/deployments/a","query":"fieldManager=x","user":"system:serviceaccount:bench:deployer","contentType":"application/apply-patch+yaml","status":200,"body":"{\"kind\":\"Deployment\"}"}`,
		`{"time":"2026-12-07T21:00:00Z","method":"POST","path":"/api/v1/namespaces/bench/events","status":201,"binaryBody":"azhzAAo="}`,
		`{"method":"GET"}`,
		`{"time":"2026-12-07T21:00:00Z","method":"GET","path":"/a","status":200}` + "\n" + `{"time":`,
		"not json\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := requestlog.Read(bytes.NewReader(data), nil)
		if err != nil {
			return
		}
		var again bytes.Buffer
		for _, e := range entries {
			line, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			again.Write(append(line, '\n'))
		}
		back, err := requestlog.Read(&again, nil)
		if err != nil {
			t.Fatalf("what Read returned does not read back: %v", err)
		}
		if len(back) != len(entries) {
			t.Fatalf("%d entries read back, want %d", len(back), len(entries))
		}
		for i := range back {
			if back[i].Method != entries[i].Method || back[i].Path != entries[i].Path || !bytes.Equal(back[i].Payload(), entries[i].Payload()) {
				t.Fatalf("entry %d read back as %+v, want %+v", i, back[i], entries[i])
			}
		}
	})
}
