package preview

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

const (
	// maxPreviews bounds status.previews, as its schema does.
	maxPreviews = 100
	// maxBranchBytes is the longest branch name status.previews holds; a
	// longer one on the remote is not previewed.
	maxBranchBytes = 255
	// DefaultMaxActive and DefaultKeepAfterClose apply when a Repository
	// stored before their schema defaults leaves them unset.
	DefaultMaxActive      = 10
	DefaultKeepAfterClose = time.Hour
)

// states works out, without any I/O, which previews the Repository has and
// in which state: from its request annotations, the branches listed on the
// remote that match spec.previews.branches (listed is false when the list
// failed, and branch previews then stay as they were), and the previous
// status. Entries left with an empty State are to be rendered. The result
// is sorted open ones first (those to render, then the others), then by
// name, and bounded.
func states(repo *syncv1.Repository, branches []string, listed bool, now time.Time) []syncv1.PreviewStatus {
	spec := repo.Spec.Previews
	old := map[string]syncv1.PreviewStatus{}
	for _, p := range repo.Status.Previews {
		old[p.Name] = p
	}
	seen := map[string]bool{}
	var out []syncv1.PreviewStatus
	add := func(p syncv1.PreviewStatus) {
		seen[p.Name] = true
		out = append(out, p)
	}

	keys := make([]string, 0, len(repo.Annotations))
	for k := range repo.Annotations {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		name, req, ok, err := syncv1.ParsePreviewRequest(k, repo.Annotations[k])
		if !ok {
			continue
		}
		if err != nil {
			// One malformed request is refused on its own; the others go on.
			add(syncv1.PreviewStatus{Name: name, State: syncv1.PreviewRefused, Message: ssa.Truncate(err.Error()),
				RequestedAt: requestedAt(old[name], metav1.NewTime(now))})
			continue
		}
		add(fromRequest(spec, name, req, old[name]))
	}

	if len(spec.Branches) > 0 && listed {
		for _, b := range branches {
			name := syncv1.BranchPreviewName(b)
			if seen[name] || len(b) > maxBranchBytes || !matches(spec.Branches, b) {
				continue
			}
			p := syncv1.PreviewStatus{Name: name, Ref: "refs/heads/" + b, Branch: b, RequestedAt: requestedAt(old[name], metav1.NewTime(now))}
			if o, ok := old[name]; ok && o.State != syncv1.PreviewClosed {
				p.Commit = o.Commit
			}
			add(p)
		}
	}

	// A preview known before that nothing asks for now: a branch that is
	// gone or no longer matches, or a request annotation removed by hand.
	for _, o := range repo.Status.Previews {
		if seen[o.Name] {
			continue
		}
		switch {
		case o.State == syncv1.PreviewClosed:
		case !listed && o.Branch != "" && o.Name == syncv1.BranchPreviewName(o.Branch):
			o.State = ""
		default:
			o.State = syncv1.PreviewClosed
			o.Message = "no longer requested: the request annotation is gone, or the branch no longer exists or matches spec.previews.branches"
			o.ClosedAt = new(metav1.NewTime(now))
		}
		add(o)
	}

	keep := keepAfterClose(spec)
	live := out[:0]
	for _, p := range out {
		if p.State == syncv1.PreviewClosed && p.ClosedAt != nil && !now.Before(p.ClosedAt.Add(keep)) {
			continue
		}
		live = append(live, p)
	}
	out = live
	queue(spec, out, old)

	// The bound drops closed previews first, then waiting ones, never one
	// to render.
	slices.SortFunc(out, func(a, b syncv1.PreviewStatus) int {
		if c := rank(a.State) - rank(b.State); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	if len(out) > maxPreviews {
		out = out[:maxPreviews]
	}
	return out
}

// rank orders previews in status: to render, waiting or refused, closed.
func rank(s syncv1.PreviewState) int {
	switch s {
	case "":
		return 0
	case syncv1.PreviewClosed:
		return 2
	}
	return 1
}

// fromRequest is the preview one well-formed request asks for.
func fromRequest(spec *syncv1.PreviewsSpec, name string, req syncv1.PreviewRequest, old syncv1.PreviewStatus) syncv1.PreviewStatus {
	p := syncv1.PreviewStatus{
		Name: name, Ref: syncv1.PreviewRef(name, req), Number: req.Number,
		Branch: req.Branch, Fork: req.Fork, RequestedAt: req.At,
	}
	if old.State != syncv1.PreviewClosed {
		p.Commit = old.Commit
	}
	kind := "pull request"
	if strings.HasPrefix(name, "mr-") {
		kind = "merge request"
	}
	switch {
	case req.Closed:
		p.State = syncv1.PreviewClosed
		p.Commit = old.Commit
		p.Applications = old.Applications
		p.ClosedAt = &req.At
		if old.State == syncv1.PreviewClosed && old.ClosedAt != nil {
			p.ClosedAt = old.ClosedAt
		}
		p.Message = fmt.Sprintf("%s %d closed", kind, req.Number)
		if req.Number == 0 {
			p.Message = "closed"
		}
	case strings.HasPrefix(name, "pr-") || strings.HasPrefix(name, "mr-"):
		if want := syncv1.PullRequestPreviewName(spec.PullRequests, req.Number); spec.PullRequests == "" || want != name {
			p.State = syncv1.PreviewRefused
			p.Message = fmt.Sprintf("annotation %s: this Repository previews no %ss: spec.previews.pullRequests is %q",
				syncv1.PreviewRequestAnnotation(name), kind, spec.PullRequests)
		} else if req.Fork && !spec.Forks {
			p.State = syncv1.PreviewRefused
			p.Message = fmt.Sprintf("%s %d comes from a fork; set spec.previews.forks: true to preview forks", kind, req.Number)
		}
	}
	return p
}

// queue leaves at most spec.previews.maxActive previews to render, the ones
// rendered already first so that a new request never takes a running
// preview's place, then the oldest requests; the rest wait, Queued.
func queue(spec *syncv1.PreviewsSpec, ps []syncv1.PreviewStatus, old map[string]syncv1.PreviewStatus) {
	var open []int
	for i, p := range ps {
		if p.State == "" {
			open = append(open, i)
		}
	}
	active := func(i int) bool {
		s := old[ps[i].Name].State
		return s == syncv1.PreviewRendered || s == syncv1.PreviewFailed
	}
	slices.SortStableFunc(open, func(i, j int) int {
		if ai, aj := active(i), active(j); ai != aj {
			if ai {
				return -1
			}
			return 1
		}
		if c := ps[i].RequestedAt.Compare(ps[j].RequestedAt.Time); c != 0 {
			return c
		}
		return strings.Compare(ps[i].Name, ps[j].Name)
	})
	limit := maxActive(spec)
	for n, i := range open {
		if n < limit {
			ps[i].State = ""
			continue
		}
		ps[i].State = syncv1.PreviewQueued
		ps[i].Message = fmt.Sprintf("queued: %d previews are active, spec.previews.maxActive is %d", limit, limit)
	}
}

func requestedAt(old syncv1.PreviewStatus, now metav1.Time) metav1.Time {
	if old.Name != "" && old.State != syncv1.PreviewClosed && !old.RequestedAt.IsZero() {
		return old.RequestedAt
	}
	return now
}

// matches reports whether branch matches one of the path.Match patterns;
// a malformed pattern matches nothing.
func matches(patterns []string, branch string) bool {
	for _, p := range patterns {
		if ok, err := path.Match(p, branch); err == nil && ok {
			return true
		}
	}
	return false
}

func maxActive(spec *syncv1.PreviewsSpec) int {
	if spec.MaxActive < 1 {
		return DefaultMaxActive
	}
	return int(spec.MaxActive)
}

func keepAfterClose(spec *syncv1.PreviewsSpec) time.Duration {
	if spec.KeepAfterClose == nil || spec.KeepAfterClose.Duration < 0 {
		return DefaultKeepAfterClose
	}
	return spec.KeepAfterClose.Duration
}
