package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func rollbackCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "rollback",
		Usage:     "roll an Application back to its newest known-good Revision other than the desired and deployed ones",
		ArgsUsage: "<application>",
		Description: "Names the target Revision, asks for confirmation, then sets the Application annotation\n" +
			syncv1.RollbackRequestedAnnotation + ". The sync-controller rolls back through the normal rollout\n" +
			"and holds the Revision rolled back from.",
		Flags:        append(clusterFlags(), yesFlag()),
		BashComplete: e.completeApplications,
		Action: func(c *cli.Context) error {
			k8s, app, err := e.application(c)
			if err != nil {
				return err
			}
			target, err := rollbackTarget(app, revisionExists(c.Context, k8s, app.Namespace), revisionsOf(c.Context, k8s, app))
			if err != nil {
				return err
			}
			// What the sync-controller will hold: the desired Revision, even
			// one that never deployed (a failing hook), else the deployed one.
			from := app.Status.DesiredRevision
			if from == "" {
				from = app.Status.DeployedRevision
			}
			if from == "" {
				from = "no deployed Revision"
			}
			fmt.Fprintf(e.out, "Rolling back %s to Revision %s (from %s)\n", app.Name, target, from)

			if !c.Bool(flagYes) {
				ok, err := e.confirm("Roll back?")
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("rollback to Revision %s cancelled; Application %s/%s not changed", target, app.Namespace, app.Name)
				}
			}
			err = annotateApplication(c.Context, k8s, app, map[string]string{syncv1.RollbackRequestedAnnotation: target})
			if msg, refused := refusal(err); refused {
				return fmt.Errorf("rollback refused: %s", msg)
			}
			if err != nil {
				return fmt.Errorf("requesting rollback of Application %s/%s to Revision %s: %w", app.Namespace, app.Name, target, err)
			}
			fmt.Fprintf(e.out, "Requested rollback of Application %s/%s to Revision %s.\n", app.Namespace, app.Name, target)
			return nil
		},
	}
}

// rollbackTarget is the Revision of the newest Healthy entry of
// status.history (newest first) that is neither status.desiredRevision nor
// status.deployedRevision and still exists: a Revision pruned by the history
// limit cannot be rolled back to, so the next known-good one is taken. When
// the bounded history holds none (failed retries can fill it), the newest
// Healthy Revision of the Application still in the cluster is the target.
func rollbackTarget(app *syncv1.Application, exists func(name string) (bool, error), revisions func() ([]syncv1.Revision, error)) (string, error) {
	desired, deployed := app.Status.DesiredRevision, app.Status.DeployedRevision
	seen := map[string]bool{}
	var gone []string
	for _, h := range app.Status.History {
		if h.Result != syncv1.PhaseHealthy || h.Revision == desired || h.Revision == deployed || seen[h.Revision] {
			continue
		}
		seen[h.Revision] = true
		ok, err := exists(h.Revision)
		if err != nil {
			return "", err
		}
		if ok {
			return h.Revision, nil
		}
		gone = append(gone, h.Revision)
	}
	revs, err := revisions()
	if err != nil {
		return "", err
	}
	var newest *syncv1.Revision
	for i := range revs {
		r := &revs[i]
		if r.Status.Phase != syncv1.PhaseHealthy || r.Name == desired || r.Name == deployed {
			continue
		}
		if newest == nil || r.CreationTimestamp.After(newest.CreationTimestamp.Time) ||
			(r.CreationTimestamp.Equal(&newest.CreationTimestamp) && r.Name > newest.Name) {
			newest = r
		}
	}
	if newest != nil {
		return newest.Name, nil
	}
	msg := fmt.Sprintf("Application %s/%s has no Revision to roll back to: neither status.history nor its Revisions hold a Healthy one other than desired %q and deployed %q",
		app.Namespace, app.Name, desired, deployed)
	if len(gone) > 0 {
		msg += fmt.Sprintf(" that still exists (deleted: %s)", strings.Join(gone, ", "))
	}
	return "", errors.New(msg)
}

// revisionsOf lists the Application's Revisions.
func revisionsOf(ctx context.Context, k8s client.Client, app *syncv1.Application) func() ([]syncv1.Revision, error) {
	return func() ([]syncv1.Revision, error) {
		var list syncv1.RevisionList
		if err := k8s.List(ctx, &list, client.InNamespace(app.Namespace), client.MatchingLabels{syncv1.ApplicationLabel: app.Name}); err != nil {
			return nil, fmt.Errorf("listing Revisions of Application %s/%s: %w", app.Namespace, app.Name, err)
		}
		return list.Items, nil
	}
}

// revisionExists reports whether a Revision of the Application is still there.
func revisionExists(ctx context.Context, k8s client.Client, namespace string) func(string) (bool, error) {
	return func(name string) (bool, error) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &syncv1.Revision{})
		switch {
		case apierrors.IsNotFound(err):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("reading Revision %s/%s: %w", namespace, name, err)
		}
		return true, nil
	}
}
