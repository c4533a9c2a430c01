package v1alpha1

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPreviewRequest_ParsesWhatTheReceiverWrites(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC))
	commit := strings.Repeat("ab", 20)
	for _, tc := range []struct {
		name, key string
		req       PreviewRequest
		ref       string
	}{
		{"github pull request", PreviewRequestAnnotation("pr-12"), PreviewRequest{Number: 12, Branch: "feature/x", Commit: commit, At: at}, "refs/pull/12/head"},
		{"gitlab merge request", PreviewRequestAnnotation("mr-7"), PreviewRequest{Number: 7, Closed: true, Fork: true, At: at}, "refs/merge-requests/7/head"},
		{"branch", PreviewRequestAnnotation(BranchPreviewName("preview/a")), PreviewRequest{Branch: "preview/a", At: at}, "refs/heads/preview/a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			value, err := MarshalPreviewRequest(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			name, got, ok, err := ParsePreviewRequest(tc.key, value)
			if err != nil || !ok {
				t.Fatalf("ParsePreviewRequest(%s, %s) = ok %v, %v", tc.key, value, ok, err)
			}
			if !got.At.Equal(&tc.req.At) || got.Number != tc.req.Number || got.Branch != tc.req.Branch || got.Commit != tc.req.Commit || got.Fork != tc.req.Fork || got.Closed != tc.req.Closed {
				t.Errorf("parsed %+v, want %+v", got, tc.req)
			}
			if ref := PreviewRef(name, got); ref != tc.ref {
				t.Errorf("ref %s, want %s", ref, tc.ref)
			}
		})
	}
}

func TestPreviewRequest_RefusesWhatItCannotPreview(t *testing.T) {
	for _, tc := range []struct {
		name, key, value, want string
	}{
		{"not json", "preview.sync.kuvryn.io/pr-1", "{", "not a preview request"},
		{"unknown field", "preview.sync.kuvryn.io/pr-1", `{"number":1,"at":"2026-12-07T10:00:00Z","ref":"refs/heads/main"}`, "unknown field"},
		{"no time", "preview.sync.kuvryn.io/pr-1", `{"number":1}`, "at is missing"},
		{"number mismatch", "preview.sync.kuvryn.io/pr-2", `{"number":1,"at":"2026-12-07T10:00:00Z"}`, "does not match number"},
		{"leading zero", "preview.sync.kuvryn.io/pr-01", `{"number":1,"at":"2026-12-07T10:00:00Z"}`, "does not match number"},
		{"branch hash mismatch", "preview.sync.kuvryn.io/branch-0000000000", `{"branch":"a","at":"2026-12-07T10:00:00Z"}`, "is not the preview name"},
		{"branch with ..", "preview.sync.kuvryn.io/" + BranchPreviewName("a..b"), `{"branch":"a..b","at":"2026-12-07T10:00:00Z"}`, "not a Git branch name"},
		{"short commit", "preview.sync.kuvryn.io/pr-1", `{"number":1,"commit":"abc","at":"2026-12-07T10:00:00Z"}`, "not a full commit hash"},
		{"other prefix", "preview.sync.kuvryn.io/tag-1", `{"number":1,"at":"2026-12-07T10:00:00Z"}`, "is not pr-<n>"},
		{"two objects", "preview.sync.kuvryn.io/pr-1", `{"number":1,"at":"2026-12-07T10:00:00Z"}{}`, "more than one"},
		{"too long", "preview.sync.kuvryn.io/pr-1", `{"branch":"` + strings.Repeat("a", MaxPreviewRequestBytes) + `"}`, "more than 1024"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, ok, err := ParsePreviewRequest(tc.key, tc.value)
			if !ok || err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.key) {
				t.Errorf("ParsePreviewRequest(%s) = ok %v, %v; want an error naming the annotation and %q", tc.key, ok, err, tc.want)
			}
		})
	}
	if _, _, ok, err := ParsePreviewRequest("sync.kuvryn.io/reconcile-requested-at", "x"); ok || err != nil {
		t.Errorf("another annotation: ok %v, %v", ok, err)
	}
}

func FuzzParsePreviewRequest(f *testing.F) {
	f.Add("preview.sync.kuvryn.io/pr-12", `{"number":12,"branch":"feature/x","at":"2026-12-07T10:00:00Z"}`)
	f.Add("preview.sync.kuvryn.io/mr-3", `{"number":3,"closed":true,"at":"2026-12-07T10:00:00Z"}`)
	f.Add("preview.sync.kuvryn.io/"+BranchPreviewName("preview/a"), `{"branch":"preview/a","at":"2026-12-07T10:00:00Z"}`)
	f.Add("preview.sync.kuvryn.io/pr-1", `{"number":1e3}`)
	f.Fuzz(func(t *testing.T, key, value string) {
		name, req, ok, err := ParsePreviewRequest(key, value)
		if err != nil || !ok {
			return
		}
		if PreviewRequestAnnotation(name) != key {
			t.Fatalf("name %q from key %q", name, key)
		}
		ref := PreviewRef(name, req)
		if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") {
			t.Fatalf("ref %q from %q", ref, value)
		}
		again, err := MarshalPreviewRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := ParsePreviewRequest(key, again); err != nil {
			t.Fatalf("re-parsing %s: %v", again, err)
		}
	})
}
