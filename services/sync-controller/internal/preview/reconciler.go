// Package preview plans preview Revisions: the Revisions the
// source-controller renders from a pull request, merge request or branch,
// labelled sync.kuvryn.io/preview. Each is planned once, exactly as a
// desired Revision is (package planner: a Server-Side Apply dry-run of every
// object as the Application's service account, compared with live state,
// redacted and digested, with the deletes a prune would make), and the
// result is recorded in its status: the plan, phase Planned or Failed, the
// Planned condition and, on a failure, a diagnosis. Nothing else is
// written: no object is applied or pruned, no hook is created, and the
// Application is left as it is.
package preview

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/diagnosis"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/impersonate"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/memory"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// waitForRender is how soon a preview Revision whose desired-state Secret
// does not exist yet is looked at again: the source-controller creates the
// Revision first, then its Secret. A render failure is in the Revision's
// spec from its creation.
const waitForRender = 2 * time.Second

// Reconciler plans preview Revisions.
type Reconciler struct {
	// Client reads Revisions and Applications through the manager's cache
	// and writes the preview Revisions' status.
	Client client.Client
	// APIReader reads the desired-state Secrets and service accounts
	// without a cache.
	APIReader client.Reader
	// Clients act as the Applications' service accounts.
	Clients *impersonate.Clients
	Planner planner.Planner
	// DefaultServiceAccount acts for Applications that name none, as it
	// does for their rollouts (--default-service-account).
	DefaultServiceAccount string

	desiredStates memory.DesiredStates
}

// New builds a Reconciler from the manager's clients. handEditManagers is
// the list of --hand-edit-field-managers, whose fields a plan shows taken
// back.
func New(mgr ctrl.Manager, defaultServiceAccount string, handEditManagers []string) *Reconciler {
	r := &Reconciler{
		Client:                mgr.GetClient(),
		APIReader:             mgr.GetAPIReader(),
		Clients:               impersonate.NewClients(mgr.GetConfig(), mgr.GetScheme(), mgr.GetRESTMapper()),
		DefaultServiceAccount: defaultServiceAccount,
	}
	r.Planner = planner.Planner{
		Cache:            mgr.GetClient(),
		APIReader:        mgr.GetAPIReader(),
		Mapper:           mgr.GetRESTMapper(),
		HandEditManagers: handEditManagers,
		DesiredStates:    &r.desiredStates,
	}
	return r
}

// SetupWithManager watches the Revisions labelled with a preview that have
// no plan result yet.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	labelled, err := predicate.LabelSelectorPredicate(metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: syncv1.PreviewLabel, Operator: metav1.LabelSelectorOpExists},
	}})
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("preview").
		For(&syncv1.Revision{}, builder.WithPredicates(labelled, unplanned())).
		WithOptions(manager.ControllerOptions()).
		Complete(r)
}

// unplanned lets through the preview Revisions that have no plan result
// yet: once planned, a preview Revision is never planned again (a new commit
// is a new preview Revision), so this controller's own status writes do not
// wake it.
func unplanned() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj client.Object) bool {
		rev, ok := obj.(*syncv1.Revision)
		return ok && rev.IsPreview() && !hasResult(rev)
	})
}

// hasResult reports whether rev's plan result is recorded: its Planned
// condition is True or False.
func hasResult(rev *syncv1.Revision) bool {
	c := meta.FindStatusCondition(rev.Status.Conditions, syncv1.ConditionPlanned)
	return c != nil && c.Status != metav1.ConditionUnknown
}

// Reconcile plans one preview Revision that has no plan result yet.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rev := &syncv1.Revision{}
	if err := r.Client.Get(ctx, req.NamespacedName, rev); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !rev.IsPreview() || hasResult(rev) || !rev.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	p, err := r.plan(ctx, rev)
	if errors.Is(err, planner.ErrDesiredStateMissing) {
		return ctrl.Result{RequeueAfter: waitForRender}, nil
	}
	if f, ok := planner.AsFailure(err); ok {
		return ctrl.Result{}, r.record(ctx, rev, syncv1.RevisionStatus{
			Phase:      syncv1.PhaseFailed,
			Conditions: planned(rev, false, f.Reason, f.Message),
			Diagnosis:  diagnosis.OfPlanFailure(f.Reason, f.Message, f.Object),
		})
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("planning preview Revision %s/%s: %w", rev.Namespace, rev.Name, err)
	}
	return ctrl.Result{}, r.record(ctx, rev, syncv1.RevisionStatus{
		Phase:      syncv1.PhasePlanned,
		Plan:       &p,
		Conditions: planned(rev, true, syncv1.ReasonSucceeded, planner.Summary(&p)),
	})
}

// plan plans rev as the service account of its Application, or of the
// Application the preview declares. Failures are *planner.Failure.
func (r *Reconciler) plan(ctx context.Context, rev *syncv1.Revision) (syncv1.Plan, error) {
	if f := planner.RenderFailure(rev); f != nil {
		return syncv1.Plan{}, f
	}
	app, err := r.application(ctx, rev)
	if err != nil {
		return syncv1.Plan{}, err
	}
	sa, f := planner.ServiceAccount(app, r.DefaultServiceAccount)
	if f != nil {
		return syncv1.Plan{}, f
	}
	if err := r.APIReader.Get(ctx, sa, &corev1.ServiceAccount{}); err != nil {
		if apierrors.IsNotFound(err) {
			return syncv1.Plan{}, planner.ServiceAccountNotFound(sa)
		}
		return syncv1.Plan{}, fmt.Errorf("reading ServiceAccount %s: %w", sa, err)
	}
	c, err := r.Clients.For(sa)
	if err != nil {
		return syncv1.Plan{}, err
	}
	return r.Planner.Plan(ctx, &planner.Scope{App: app, Rev: rev, Client: c, Now: metav1.Now(), ReadOnly: true})
}

// application is the Application rev plans: the live one, whose service
// account, ignore rules, force setting and deployed Revision the plan uses,
// or, when there is none, the one spec.preview.newApplication declares.
func (r *Reconciler) application(ctx context.Context, rev *syncv1.Revision) (*syncv1.Application, error) {
	app := &syncv1.Application{}
	err := r.Client.Get(ctx, rev.ApplicationKey(), app)
	if err == nil {
		return app, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading Application %s: %w", rev.ApplicationKey(), err)
	}
	declared := rev.Spec.Preview.NewApplication
	if declared == nil {
		return nil, &planner.Failure{Reason: syncv1.ReasonPlanFailed, Message: fmt.Sprintf(
			"preview Revision %s/%s: Application %s not found and spec.preview.newApplication is not set, so there is no service account to plan as",
			rev.Namespace, rev.Name, rev.ApplicationKey())}
	}
	return &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: rev.Namespace, Name: rev.Spec.ApplicationName},
		Spec: syncv1.ApplicationSpec{
			ServiceAccountName: declared.ServiceAccountName,
			Destination:        syncv1.Destination{Namespace: declared.DestinationNamespace},
		},
	}, nil
}

// planned is rev's Planned condition, the only condition this controller
// writes on a preview Revision, set as given.
func planned(rev *syncv1.Revision, ok bool, reason, message string) []metav1.Condition {
	return ssa.Conditions(rev.Status.Conditions, []string{syncv1.ConditionPlanned},
		ssa.Condition(syncv1.ConditionPlanned, ok, reason, message, rev.Generation))
}

// record writes status, all of a preview Revision's status, which only
// this controller writes, as field manager kuvryn-sync: a merge patch from
// the status as read, as the Revision reconciler writes Revisions.
func (r *Reconciler) record(ctx context.Context, rev *syncv1.Revision, status syncv1.RevisionStatus) error {
	if err := ssa.MergeStatus(ctx, r.Client, rev, syncv1.FieldManagerSync, rev.Status.DeepCopy(), status); err != nil {
		return fmt.Errorf("recording the plan of preview Revision %s/%s: %w", rev.Namespace, rev.Name, err)
	}
	return nil
}
