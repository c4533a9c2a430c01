package testgit

import (
	"strings"
	"testing"
)

// TestServer_StopRefusesConnectionsAndStartServesTheSameRepositories: a
// stopped server refuses connections at its address, keeps what was
// pushed, and serves it again at the same URL once started; twice, so a
// restarted server stops like the first.
func TestServer_StopRefusesConnectionsAndStartServesTheSameRepositories(t *testing.T) {
	s := Start(t, Options{})
	r := mustRepo(t, s, "team/outage")
	head, err := r.Commit(map[string]string{"a.yaml": "a: 1\n"}, "before the outage")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := s.Stop(); err != nil {
			t.Fatalf("outage %d: stopping: %v", i, err)
		}
		out, err := gitClient(t, t.TempDir(), "ls-remote", r.URL())
		if err == nil || !strings.Contains(out, "Connection refused") && !strings.Contains(out, "Failed to connect") {
			t.Fatalf("outage %d: ls-remote of a stopped server: err %v, output %q; want the connection refused", i, err, out)
		}
		if _, err := r.Commit(map[string]string{"b.yaml": "b: 1\n"}, "during the outage"); err == nil {
			t.Fatalf("outage %d: a push to a stopped server succeeded", i)
		}
		if err := s.Start(); err != nil {
			t.Fatalf("outage %d: starting: %v", i, err)
		}
		if err := s.Start(); err == nil {
			t.Fatalf("outage %d: starting a running server succeeded", i)
		}
		if got := strings.Fields(mustGit(t, t.TempDir(), "ls-remote", r.URL(), "refs/heads/"+DefaultBranch)); len(got) == 0 || got[0] != head {
			t.Fatalf("outage %d: after the restart %s is at %v, want %s", i, DefaultBranch, got, head)
		}
	}
}
