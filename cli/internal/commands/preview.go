package commands

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/cli/internal/printers"
)

// planPreview is `ksync plan <app> --ref <ref>`: it stamps the preview
// request on the Application's Repository, waits for the Application's
// preview Revision at the preview's current commit to be Planned or Failed,
// and prints it. A Failed plan is printed and exits 1.
func (e *env) planPreview(c *cli.Context, ref, format string) error {
	k8s, app, err := e.application(c)
	if err != nil {
		return err
	}
	repo, err := getRepository(c.Context, k8s, app.Namespace, app.Spec.Source.RepositoryRef.Name)
	if err != nil {
		return fmt.Errorf("%w (spec.source.repositoryRef of Application %s/%s)", err, app.Namespace, app.Name)
	}
	name, req, err := previewRequest(repo, ref, metav1.NewTime(e.now().UTC().Truncate(time.Second)))
	if err != nil {
		return err
	}
	value, err := syncv1.MarshalPreviewRequest(req)
	if err != nil {
		return fmt.Errorf("encoding preview request %s: %w", name, err)
	}
	key := syncv1.PreviewRequestAnnotation(name)
	// The source-controller parses the annotation by the same rules, so a
	// ref it would reject (such as a branch name Git does not allow) is
	// refused here, before anything is written.
	if _, _, _, err := syncv1.ParsePreviewRequest(key, value); err != nil {
		return usageError{fmt.Errorf("--ref %q: %w", ref, err)}
	}
	err = annotate(c.Context, k8s, &syncv1.Repository{ObjectMeta: metav1.ObjectMeta{Namespace: repo.Namespace, Name: repo.Name}}, map[string]string{key: value})
	if msg, refused := refusal(err); refused {
		return fmt.Errorf("preview request refused: %s", msg)
	}
	if err != nil {
		return fmt.Errorf("requesting preview %s on Repository %s/%s: %w", name, repo.Namespace, repo.Name, err)
	}
	fmt.Fprintf(e.errOut, "Requested preview %s of Repository %s/%s; waiting for the plan of Application %s.\n", name, repo.Namespace, repo.Name, app.Name)

	rev, err := awaitPreview(c.Context, k8s, app, repo.Name, name, req.At, c.Duration(flagTimeout))
	if err != nil {
		return err
	}
	plan := e.conceal(rev)
	if format != outputTable {
		err = e.encode(format, planExport{
			Namespace: app.Namespace, Application: app.Name, Revision: rev.Name, Phase: rev.Status.Phase, Plan: plan, Preview: rev.Spec.Preview,
		})
	} else {
		err = printers.PreviewResult(e.out, rev, plan, e.printOptions(false, false))
	}
	if err == nil && rev.Status.Phase == syncv1.PhaseFailed {
		err = fmt.Errorf("the plan of preview %s failed for Application %s/%s (Revision %s)", name, app.Namespace, app.Name, rev.Name)
	}
	return err
}

// previewRequest is the request `--ref` stands for: a number is a pull
// (github) or merge (gitlab) request by spec.previews.pullRequests,
// anything else a branch. What an earlier request of the same preview
// knew (fork, head branch, closed) is kept, so that asking again never
// turns a refused fork's pull request into a previewed one; the commit is
// left out so the source-controller fetches the ref's tip.
func previewRequest(repo *syncv1.Repository, ref string, at metav1.Time) (string, syncv1.PreviewRequest, error) {
	previews := repo.Spec.Previews
	if previews == nil {
		return "", syncv1.PreviewRequest{}, fmt.Errorf("Repository %s/%s does not preview: set spec.previews.pullRequests (github or gitlab) to preview pull or merge requests, or spec.previews.branches to preview branches", repo.Namespace, repo.Name)
	}
	var name string
	req := syncv1.PreviewRequest{At: at}
	if n, err := strconv.ParseInt(ref, 10, 32); err == nil {
		if n <= 0 {
			return "", syncv1.PreviewRequest{}, usageError{fmt.Errorf("--ref %q is not a pull request number", ref)}
		}
		if previews.PullRequests == "" {
			return "", syncv1.PreviewRequest{}, fmt.Errorf("Repository %s/%s does not preview pull requests: set spec.previews.pullRequests to github or gitlab", repo.Namespace, repo.Name)
		}
		req.Number = int32(n)
		name = syncv1.PullRequestPreviewName(previews.PullRequests, req.Number)
	} else {
		req.Branch = ref
		name = syncv1.BranchPreviewName(ref)
	}
	if value, ok := repo.Annotations[syncv1.PreviewRequestAnnotation(name)]; ok {
		if _, earlier, _, err := syncv1.ParsePreviewRequest(syncv1.PreviewRequestAnnotation(name), value); err == nil {
			req.Fork, req.Closed = earlier.Fork, earlier.Closed
			if earlier.Branch != "" {
				req.Branch = earlier.Branch
			}
		}
	}
	for _, p := range repo.Status.Previews {
		if p.Name == name && p.Fork {
			req.Fork = true
		}
	}
	return name, req, nil
}

// awaitPreview polls, as rollback does, until the preview has taken the
// request made at and the Application's preview Revision at the preview's
// commit is Planned or Failed. It fails at once when the preview is
// refused or closed, or renders nothing for the Application, and after
// timeout saying where the preview stands.
func awaitPreview(ctx context.Context, k8s client.Client, app *syncv1.Application, repoName, name string, at metav1.Time, timeout time.Duration) (*syncv1.Revision, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(rollbackPoll)
	defer tick.Stop()
	subject := fmt.Sprintf("preview %s of Repository %s/%s", name, app.Namespace, repoName)
	for {
		if _, rev, err := previewProgress(ctx, k8s, app, repoName, name, at); err != nil || rev != nil {
			return rev, err
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			// Read once more past the deadline, so that the error says
			// where the preview stands rather than that a read timed out.
			why, rev, err := previewProgress(context.WithoutCancel(ctx), k8s, app, repoName, name, at)
			if err != nil || rev != nil {
				return rev, err
			}
			return nil, fmt.Errorf("%s was not planned for Application %s within %s: %s", subject, app.Name, timeout, why)
		}
	}
}

// previewProgress reads the preview once: the planned or failed Revision
// when there is one, an error when the preview cannot plan the
// Application, else why it is still waiting.
func previewProgress(ctx context.Context, k8s client.Client, app *syncv1.Application, repoName, name string, at metav1.Time) (string, *syncv1.Revision, error) {
	subject := fmt.Sprintf("preview %s of Repository %s/%s", name, app.Namespace, repoName)
	repo := &syncv1.Repository{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: repoName}, repo); err != nil {
		return fmt.Sprintf("reading the Repository: %v", err), nil, nil
	}
	i := slices.IndexFunc(repo.Status.Previews, func(p syncv1.PreviewStatus) bool { return p.Name == name })
	if i < 0 || repo.Status.Previews[i].RequestedAt.Before(&at) {
		return "the source-controller has not taken the request into status.previews: is it running?", nil, nil
	}
	p := repo.Status.Previews[i]
	switch p.State {
	case syncv1.PreviewRefused:
		return "", nil, fmt.Errorf("%s was refused: %s", subject, p.Message)
	case syncv1.PreviewClosed:
		return "", nil, fmt.Errorf("%s is closed; a closed pull request is not previewed", subject)
	case syncv1.PreviewQueued:
		return "it is Queued until fewer than spec.previews.maxActive previews are active", nil, nil
	case syncv1.PreviewFailed:
		return "it is Failed and the source-controller retries: " + p.Message, nil, nil
	case syncv1.PreviewRendered:
	default:
		return fmt.Sprintf("it is %q", p.State), nil, nil
	}
	if !slices.Contains(p.Applications, app.Name) {
		rendered := "none"
		if len(p.Applications) > 0 {
			rendered = strings.Join(p.Applications, ", ")
		}
		return "", nil, fmt.Errorf("%s at commit %s changes nothing in Application %s (status.previews lists the Applications it renders: %s)", subject, printers.ShortCommit(p.Commit), app.Name, rendered)
	}
	var list syncv1.RevisionList
	if err := k8s.List(ctx, &list, client.InNamespace(app.Namespace), client.MatchingLabels{syncv1.PreviewLabel: name, syncv1.ApplicationLabel: app.Name}); err != nil {
		return fmt.Sprintf("listing its Revisions: %v", err), nil, nil
	}
	why := fmt.Sprintf("no preview Revision of commit %s yet", printers.ShortCommit(p.Commit))
	for i := range list.Items {
		rev := &list.Items[i]
		pv := rev.Spec.Preview
		if pv == nil || pv.Repository != repoName || pv.Commit != p.Commit || rev.Spec.ApplicationName != app.Name {
			continue
		}
		switch rev.Status.Phase {
		case syncv1.PhasePlanned, syncv1.PhaseFailed:
			return "", rev, nil
		case "":
			why = fmt.Sprintf("Revision %s is not planned yet: is the sync-controller running?", rev.Name)
		default:
			why = fmt.Sprintf("Revision %s is %s", rev.Name, rev.Status.Phase)
		}
	}
	return why, nil, nil
}

func getRepository(ctx context.Context, k8s client.Client, namespace, name string) (*syncv1.Repository, error) {
	repo := &syncv1.Repository{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, repo); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("Repository %s/%s not found", namespace, name)
		}
		return nil, fmt.Errorf("reading Repository %s/%s: %w", namespace, name, err)
	}
	return repo, nil
}

func previewsCommand(e *env) *cli.Command {
	formats := []string{outputTable, outputWide}
	return &cli.Command{
		Name:      "previews",
		Usage:     "list the previews of pull requests and branches in status.previews; -o wide adds each preview Revision's phase and plan summary",
		ArgsUsage: "[<repository>]",
		Flags:     append(clusterFlags(), allNamespacesFlag(), outputFlag(formats...)),
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usageError{fmt.Errorf("previews takes at most one Repository name, got %d arguments", c.NArg())}
			}
			format, err := output(c, formats...)
			if err != nil {
				return err
			}
			all := c.Bool(flagAllNamespaces)
			if all && c.NArg() == 1 {
				return usageError{fmt.Errorf("previews takes a Repository name or -A, not both")}
			}
			k8s, namespace, err := e.connect(c)
			if err != nil {
				return err
			}
			var repos []syncv1.Repository
			if c.NArg() == 1 {
				repo, err := getRepository(c.Context, k8s, namespace, c.Args().First())
				if err != nil {
					return err
				}
				repos = []syncv1.Repository{*repo}
			} else {
				var opts []client.ListOption
				if !all {
					opts = append(opts, client.InNamespace(namespace))
				}
				var list syncv1.RepositoryList
				if err := k8s.List(c.Context, &list, opts...); err != nil {
					return fmt.Errorf("listing Repositories in %s: %w", scope(namespace, all), err)
				}
				repos = list.Items
			}
			repos = slices.DeleteFunc(repos, func(r syncv1.Repository) bool { return len(r.Status.Previews) == 0 })
			if len(repos) == 0 {
				where := scope(namespace, all)
				if c.NArg() == 1 {
					where = fmt.Sprintf("Repository %s/%s", namespace, c.Args().First())
				}
				fmt.Fprintf(e.errOut, "No previews found in %s.\n", where)
				return nil
			}
			slices.SortFunc(repos, func(a, b syncv1.Repository) int {
				return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
			})
			o := e.printOptions(all, format == outputWide)
			if err := printers.Previews(e.out, repos, o); err != nil || format != outputWide {
				return err
			}
			revs, err := previewRevisions(c.Context, k8s, repos, namespace, all)
			if err != nil || len(revs) == 0 {
				return err
			}
			fmt.Fprintln(e.out)
			return printers.PreviewRevisions(e.out, revs, o)
		},
	}
}

// previewRevisions lists the preview Revisions of repos, sorted by
// namespace, Repository, preview, Application and name.
func previewRevisions(ctx context.Context, k8s client.Client, repos []syncv1.Repository, namespace string, all bool) ([]syncv1.Revision, error) {
	opts := []client.ListOption{client.HasLabels{syncv1.PreviewLabel}}
	if !all {
		opts = append(opts, client.InNamespace(namespace))
	}
	var list syncv1.RevisionList
	if err := k8s.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("listing preview Revisions in %s: %w", scope(namespace, all), err)
	}
	shown := map[string]bool{}
	for _, r := range repos {
		shown[r.Namespace+"/"+r.Name] = true
	}
	key := func(r *syncv1.Revision) string {
		return strings.Join([]string{r.Namespace, r.Spec.Preview.Repository, r.Spec.Preview.Name, r.Spec.ApplicationName, r.Name}, "\x00")
	}
	revs := slices.DeleteFunc(list.Items, func(r syncv1.Revision) bool {
		return r.Spec.Preview == nil || !shown[r.Namespace+"/"+r.Spec.Preview.Repository]
	})
	slices.SortFunc(revs, func(a, b syncv1.Revision) int { return strings.Compare(key(&a), key(&b)) })
	return revs, nil
}
