package preview

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

var t0 = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func request(t *testing.T, req syncv1.PreviewRequest) string {
	t.Helper()
	v, err := syncv1.MarshalPreviewRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func at(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }

func TestStates_RequestsBranchesAndLimits(t *testing.T) {
	branchX := syncv1.BranchPreviewName("preview/x")
	for _, tc := range []struct {
		name        string
		spec        syncv1.PreviewsSpec
		annotations func(t *testing.T) map[string]string
		old         []syncv1.PreviewStatus
		branches    []string
		listed      bool
		// want is name -> state ("" is to be rendered) and, when not
		// empty, a piece of the message.
		want map[string][2]string
	}{
		{
			name: "a fork is refused without forks: true",
			spec: syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub},
			annotations: func(t *testing.T) map[string]string {
				return map[string]string{syncv1.PreviewRequestAnnotation("pr-12"): request(t, syncv1.PreviewRequest{Number: 12, Fork: true, At: at(0)})}
			},
			want: map[string][2]string{"pr-12": {"Refused", "pull request 12 comes from a fork; set spec.previews.forks: true to preview forks"}},
		},
		{
			name: "a fork is previewed with forks: true",
			spec: syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub, Forks: true},
			annotations: func(t *testing.T) map[string]string {
				return map[string]string{syncv1.PreviewRequestAnnotation("pr-12"): request(t, syncv1.PreviewRequest{Number: 12, Fork: true, At: at(0)})}
			},
			want: map[string][2]string{"pr-12": {"", ""}},
		},
		{
			name: "a malformed request is refused, naming its annotation, and the others go on",
			spec: syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitLab},
			annotations: func(t *testing.T) map[string]string {
				return map[string]string{
					syncv1.PreviewRequestAnnotation("mr-3"): "{not json",
					syncv1.PreviewRequestAnnotation("mr-4"): request(t, syncv1.PreviewRequest{Number: 4, At: at(0)}),
					"unrelated.example.com/x":               "y",
				}
			},
			want: map[string][2]string{"mr-3": {"Refused", "annotation preview.sync.kuvryn.io/mr-3"}, "mr-4": {"", ""}},
		},
		{
			name: "a pull request on a Repository that previews merge requests is refused",
			spec: syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitLab},
			annotations: func(t *testing.T) map[string]string {
				return map[string]string{syncv1.PreviewRequestAnnotation("pr-5"): request(t, syncv1.PreviewRequest{Number: 5, At: at(0)})}
			},
			want: map[string][2]string{"pr-5": {"Refused", `spec.previews.pullRequests is "gitlab"`}},
		},
		{
			name: "maxActive queues the newest requests; a rendered preview keeps its place",
			spec: syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub, MaxActive: 2},
			annotations: func(t *testing.T) map[string]string {
				return map[string]string{
					syncv1.PreviewRequestAnnotation("pr-1"): request(t, syncv1.PreviewRequest{Number: 1, At: at(time.Minute)}),
					syncv1.PreviewRequestAnnotation("pr-2"): request(t, syncv1.PreviewRequest{Number: 2, At: at(2 * time.Minute)}),
					syncv1.PreviewRequestAnnotation("pr-3"): request(t, syncv1.PreviewRequest{Number: 3, At: at(3 * time.Minute)}),
					syncv1.PreviewRequestAnnotation("pr-4"): request(t, syncv1.PreviewRequest{Number: 4, At: at(4 * time.Minute)}),
				}
			},
			old:  []syncv1.PreviewStatus{{Name: "pr-4", State: syncv1.PreviewRendered, RequestedAt: at(0)}},
			want: map[string][2]string{"pr-1": {"", ""}, "pr-2": {"Queued", "spec.previews.maxActive is 2"}, "pr-3": {"Queued", ""}, "pr-4": {"", ""}},
		},
		{
			name: "a closed request is Closed, and dropped after keepAfterClose",
			spec: syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub, KeepAfterClose: &metav1.Duration{Duration: time.Hour}},
			annotations: func(t *testing.T) map[string]string {
				return map[string]string{
					syncv1.PreviewRequestAnnotation("pr-1"): request(t, syncv1.PreviewRequest{Number: 1, Closed: true, At: at(-time.Minute)}),
					syncv1.PreviewRequestAnnotation("pr-2"): request(t, syncv1.PreviewRequest{Number: 2, Closed: true, At: at(-2 * time.Hour)}),
				}
			},
			want: map[string][2]string{"pr-1": {"Closed", "pull request 1 closed"}},
		},
		{
			name:     "branches matching the patterns are previewed; a gone one closes",
			spec:     syncv1.PreviewsSpec{Branches: []string{"preview/*"}},
			branches: []string{"main", "preview/x", "feature/y"},
			listed:   true,
			old:      []syncv1.PreviewStatus{{Name: syncv1.BranchPreviewName("preview/gone"), Branch: "preview/gone", State: syncv1.PreviewRendered, RequestedAt: at(0)}},
			want: map[string][2]string{
				branchX:                                  {"", ""},
				syncv1.BranchPreviewName("preview/gone"): {"Closed", "no longer requested"},
			},
		},
		{
			name:     "a branch name longer than status can hold is not previewed",
			spec:     syncv1.PreviewsSpec{Branches: []string{"preview/*"}},
			branches: []string{"preview/" + strings.Repeat("x", 250), "preview/x"},
			listed:   true,
			want:     map[string][2]string{branchX: {"", ""}},
		},
		{
			name: "branch previews stay as they were when the list fails",
			spec: syncv1.PreviewsSpec{Branches: []string{"preview/*"}},
			old:  []syncv1.PreviewStatus{{Name: branchX, Branch: "preview/x", State: syncv1.PreviewRendered, RequestedAt: at(0)}},
			want: map[string][2]string{branchX: {"", ""}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := &syncv1.Repository{Spec: syncv1.RepositorySpec{Previews: &tc.spec}, Status: syncv1.RepositoryStatus{Previews: tc.old}}
			if tc.annotations != nil {
				repo.Annotations = tc.annotations(t)
			}
			got := states(repo, tc.branches, tc.listed, t0)
			if len(got) != len(tc.want) {
				t.Fatalf("states = %+v, want %d previews", got, len(tc.want))
			}
			for _, p := range got {
				want, ok := tc.want[p.Name]
				if !ok {
					t.Fatalf("unexpected preview %+v", p)
				}
				if string(p.State) != want[0] || !strings.Contains(p.Message, want[1]) {
					t.Errorf("preview %s: state %q message %q, want %q containing %q", p.Name, p.State, p.Message, want[0], want[1])
				}
				if p.RequestedAt.IsZero() {
					t.Errorf("preview %s has no requestedAt", p.Name)
				}
			}
		})
	}
}
