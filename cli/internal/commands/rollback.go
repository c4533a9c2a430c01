package commands

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func rollbackCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "rollback",
		Usage:     "roll an Application back to its newest known-good Revision other than the desired and deployed ones",
		ArgsUsage: "<application>",
		Description: "Names the target Revision, asks for confirmation, then sets the Application annotations\n" +
			syncv1.RollbackRequestedAnnotation + " and " + syncv1.RollbackRequestIDAnnotation + " (a new id, so every\n" +
			"rollback is a new request). The sync-controller rolls back through the normal rollout and holds the\n" +
			"Revision rolled back from. ksync waits until the rollout of the target has started under this\n" +
			"request, and fails if it has not within --timeout.",
		Flags: append(clusterFlags(), yesFlag(),
			&cli.DurationFlag{Name: flagTimeout, Value: 2 * time.Minute, Usage: "how long to wait for the sync-controller to act on the request; 0 does not wait"},
		),
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
			// The sync-controller decides what it holds by the same rule
			// when the rollout of target starts.
			held := app.Status.RollbackHold(target)
			if held == "" {
				fmt.Fprintf(e.out, "Rolling back %s to Revision %s\n", app.Name, target)
			} else {
				fmt.Fprintf(e.out, "Rolling back %s to Revision %s (from %s)\n", app.Name, target, held)
			}

			if !c.Bool(flagYes) {
				ok, err := e.confirm("Roll back?")
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("rollback to Revision %s cancelled; Application %s/%s not changed", target, app.Namespace, app.Name)
				}
			}
			id := rand.Text()
			err = annotateApplication(c.Context, k8s, app, map[string]string{
				syncv1.RollbackRequestedAnnotation: target,
				syncv1.RollbackRequestIDAnnotation: id,
			})
			if msg, refused := refusal(err); refused {
				return fmt.Errorf("rollback refused: %s", msg)
			}
			if err != nil {
				return fmt.Errorf("requesting rollback of Application %s/%s to Revision %s: %w", app.Namespace, app.Name, target, err)
			}
			fmt.Fprintf(e.out, "Requested rollback of Application %s/%s to Revision %s (request %s).\n", app.Namespace, app.Name, target, id)
			timeout := c.Duration(flagTimeout)
			if timeout <= 0 {
				return nil
			}
			if err := awaitRollback(c.Context, k8s, app, target, id, timeout); err != nil {
				return err
			}
			if held == "" {
				fmt.Fprintf(e.out, "Rollback started: Revision %s is rolling out; no Revision is held.\n", target)
			} else {
				fmt.Fprintf(e.out, "Rollback started: Revision %s is rolling out; Revision %s is held until a newer desired state arrives.\n", target, held)
			}
			return nil
		},
	}
}

// rollbackPoll is how often ksync reads the target Revision while it waits.
const rollbackPoll = time.Second

// awaitRollback waits until the sync-controller has started the rollout of
// target under request id (it copies the id into the Revision's
// status.approval), and fails, saying why as far as the cluster tells, if
// it has not within timeout.
func awaitRollback(ctx context.Context, k8s client.Client, app *syncv1.Application, target, id string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(rollbackPoll)
	defer tick.Stop()
	for {
		rev := &syncv1.Revision{}
		err := k8s.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: target}, rev)
		if err == nil && rev.Status.Approval != nil && rev.Status.Approval.Rollback && rev.Status.Approval.RequestID == id {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("rollback request %s of Application %s/%s to Revision %s was not acted on within %s: %s",
				id, app.Namespace, app.Name, target, timeout, whyNotActedOn(context.WithoutCancel(ctx), k8s, app, id))
		}
	}
}

// whyNotActedOn says what the Application shows about a request that was
// not acted on.
func whyNotActedOn(ctx context.Context, k8s client.Client, app *syncv1.Application, id string) string {
	current := &syncv1.Application{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(app), current); err != nil {
		return fmt.Sprintf("reading the Application: %v", err)
	}
	a := current.Annotations
	switch {
	case a[syncv1.RollbackRequestIDAnnotation] != id:
		return fmt.Sprintf("a newer request (%s) replaced it", a[syncv1.RollbackRequestIDAnnotation])
	case a[syncv1.RollbackRequestedByAnnotation] == "":
		return "the sync-controller's admission webhook did not record it (annotation " + syncv1.RollbackRequestedByAnnotation + " is empty): is the sync-controller running?"
	}
	if c := meta.FindStatusCondition(current.Status.Conditions, syncv1.ConditionReady); c != nil {
		return fmt.Sprintf("Application Ready=%s %s: %s", c.Status, c.Reason, c.Message)
	}
	return "the Application reports no Ready condition: is the sync-controller running?"
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
		if err := k8s.List(ctx, &list, client.InNamespace(app.Namespace), client.MatchingLabelsSelector{Selector: syncv1.DesiredRevisionSelector(app.Name)}); err != nil {
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
