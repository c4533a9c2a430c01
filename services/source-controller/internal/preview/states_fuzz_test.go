package preview

import (
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// FuzzStates feeds request annotations from anyone who may annotate a
// Repository: whatever they hold, status.previews stays bounded, every
// entry is a valid state with a name and requestedAt, and no more than
// maxActive previews are rendered at once.
func FuzzStates(f *testing.F) {
	f.Add("pr-1", `{"number":1,"at":"2026-12-07T12:00:00Z"}`, "branch-0123456789", `{"branch":"x","at":"2026-12-07T12:00:00Z"}`, int32(1))
	f.Add("pr-2", `{"number":2,"fork":true,"at":"2026-12-07T12:00:00Z"}`, "mr-2", `{"number":2,"closed":true,"at":"2026-12-07T12:00:00Z"}`, int32(5))
	f.Add("x", `{}`, "pr-0", `{"number":0,"at":"2026-12-07T12:00:00Z"}`, int32(0))
	f.Add("pr-3", `{"number":3,"at":"2026-12-07T12:00:00Z"}{}`, "pr-4", `{"number":4,"commit":"abc","at":"2026-12-07T12:00:00Z"}`, int32(50))
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string, max int32) {
		repo := &syncv1.Repository{
			Spec: syncv1.RepositorySpec{Previews: &syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub, MaxActive: max}},
		}
		repo.Annotations = map[string]string{
			syncv1.PreviewRequestAnnotation(k1): v1,
			syncv1.PreviewRequestAnnotation(k2): v2,
		}
		got := states(repo, nil, true, t0)
		if len(got) > maxPreviews {
			t.Fatalf("%d previews, more than %d", len(got), maxPreviews)
		}
		active := 0
		for _, p := range got {
			switch p.State {
			case "":
				active++
			case syncv1.PreviewQueued, syncv1.PreviewRefused, syncv1.PreviewClosed:
			default:
				t.Fatalf("preview %q in state %q", p.Name, p.State)
			}
			if p.Name == "" && k1 != "" && k2 != "" || p.RequestedAt.IsZero() || len(p.Message) > syncv1.MaxMessageBytes {
				t.Fatalf("preview %+v", p)
			}
		}
		if active > maxActive(repo.Spec.Previews) {
			t.Fatalf("%d previews to render, more than maxActive", active)
		}
	})
}
