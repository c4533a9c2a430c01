package repository

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func stored(pollInterval any) *unstructured.Unstructured {
	u := Unstructured()
	u.SetNamespace("payments")
	u.SetName("platform")
	u.SetGeneration(3)
	u.Object["spec"] = map[string]any{
		"git":          map[string]any{"url": "https://git.example.com/platform.git", "revision": "main"},
		"pollInterval": pollInterval,
	}
	u.Object["status"] = map[string]any{"artifact": map[string]any{"revision": "refs/heads/main", "commit": "abc"}}
	return u
}

func TestDecode_NamesTheFieldThatDoesNotDecode(t *testing.T) {
	cases := []struct {
		name         string
		pollInterval any
		wantPoll     time.Duration // PollInterval of the decoded Repository
		wantErr      string        // empty: decodes
	}{
		{"a duration", "90s", 90 * time.Second, ""},
		{"below the floor, from before the API server refused it", "1ms", MinPollInterval, ""},
		{"negative, from before the API server refused it", "-5m", DefaultPollInterval, ""},
		{"text", "soon", DefaultPollInterval, `spec.pollInterval: "soon" is not a duration`},
		{"a number", int64(5), DefaultPollInterval, `spec.pollInterval: "5" is not a duration`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			repo, err := Decode(stored(tc.pollInterval))
			var specErr *SpecError
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Decode: %v", err)
			case tc.wantErr != "" && (!errors.As(err, &specErr) || !strings.Contains(err.Error(), tc.wantErr) ||
				!strings.HasPrefix(err.Error(), "Repository payments/platform: ")):
				t.Fatalf("Decode error %v, want a SpecError naming the Repository and %q", err, tc.wantErr)
			}
			if repo.Name != "platform" || repo.Generation != 3 || repo.Spec.Git.URL == "" ||
				repo.Status.Artifact == nil || repo.Status.Artifact.Commit != "abc" {
				t.Fatalf("Decode lost the rest of the Repository: %+v", repo)
			}
			if got := PollInterval(repo); got != tc.wantPoll {
				t.Fatalf("PollInterval = %s, want %s", got, tc.wantPoll)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{"1m", "soon", "", "-5m", "1ms", "9999999999999h", "1h30m", "µs", "0x10s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pollInterval string) {
		repo, err := Decode(stored(pollInterval))
		if repo == nil || repo.Name != "platform" {
			t.Fatalf("Decode(%q) returned no Repository", pollInterval)
		}
		_, perr := time.ParseDuration(pollInterval)
		if (perr != nil) != (err != nil) {
			t.Fatalf("Decode(%q) error %v, time.ParseDuration error %v", pollInterval, err, perr)
		}
		if p := PollInterval(repo); p < MinPollInterval {
			t.Fatalf("Decode(%q) polls every %s, below %s", pollInterval, p, MinPollInterval)
		}
	})
}
