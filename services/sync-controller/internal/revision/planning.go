package revision

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/desired"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/plan"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/wave"
)

func planSummary(p *syncv1.Plan) string {
	return fmt.Sprintf("plan %s: %d to create, %d to update, %d to delete, %d unchanged",
		p.Digest, p.Summary.Create, p.Summary.Update, p.Summary.Delete, p.Summary.Unchanged)
}

// computePlan plans every object of ro's desired state. Failures name the
// object; a refused read or dry-run is PlanFailed unless it is a conflict or
// an invalid object.
func (r *Reconciler) computePlan(ctx context.Context, ro *rollout) (syncv1.Plan, error) {
	entries, err := r.planEntries(ctx, ro, true)
	if f, ok := asFailure(err); ok && f.reason == syncv1.ReasonApplyFailed {
		return syncv1.Plan{}, &failure{reason: syncv1.ReasonPlanFailed, message: f.message + ro.destinationHint(f.message)}
	}
	if err != nil {
		return syncv1.Plan{}, err
	}
	p := plan.Build(entries)
	p.PlannedAt = ro.now
	return p, nil
}

// planEntries plans the waves' objects, and, with hooks, the hooks (which
// every attempt creates anew) and the deletes prune would make.
func (r *Reconciler) planEntries(ctx context.Context, ro *rollout, withHooksAndDeletes bool) ([]plan.Entry, error) {
	ds, err := r.loadDesired(ctx, ro)
	if err != nil {
		return nil, err
	}
	var entries []plan.Entry
	if withHooksAndDeletes {
		for _, stage := range hookStages {
			for _, obj := range ds.Hooks(stage) {
				e, err := plan.NewEntry(nil, obj)
				if err != nil {
					return nil, err
				}
				e.Hook = string(stage)
				if e.Wave, err = wave.Wave(obj); err != nil {
					return nil, err
				}
				entries = append(entries, e)
			}
		}
	}
	planned, err := r.planObjects(ctx, ro, ds)
	if err != nil {
		return nil, err
	}
	entries = append(entries, planned...)
	if withHooksAndDeletes && ro.pruneEnabled() {
		stale, err := r.pruneCandidates(ctx, ro, ds)
		if err != nil {
			return nil, err
		}
		for _, live := range stale {
			e, err := plan.NewEntry(live, nil)
			if err != nil {
				return nil, err
			}
			entries = append(entries, e)
		}
	}
	return entries, nil
}

// planObjects plans the objects of every wave, objectsAtOnce at a time: no
// plan of one depends on another's. What each took back by hand is
// recorded in order, and the failure reported is the first object's, as
// one after the other would have stopped at. Objects an apply would leave
// exactly as they are go into ro.noops, for the waves of this reconcile.
func (r *Reconciler) planObjects(ctx context.Context, ro *rollout, ds *desired.State) ([]plan.Entry, error) {
	var objs []*unstructured.Unstructured
	var waves []int32
	for _, g := range ds.Groups.Waves {
		for _, obj := range g.Objects {
			objs = append(objs, obj)
			waves = append(waves, g.Wave)
		}
	}
	planned := make([]objectPlan, len(objs))
	errs := inParallel(len(objs), func(i int) (err error) {
		planned[i], err = r.planObject(ctx, ro, ds, objs[i])
		planned[i].entry.Wave = waves[i]
		return err
	})
	entries := make([]plan.Entry, len(objs))
	ro.noops = nil
	ro.handEdited = map[objectID]*unstructured.Unstructured{}
	for i, obj := range objs {
		ro.recordHandEdits(idOf(obj), planned[i].taken, !ro.app.Spec.Sync.Automatic)
		entries[i] = planned[i].entry
		if planned[i].noop != nil {
			ro.noop(planned[i].noop)
		}
		if planned[i].handEdited != nil {
			ro.handEdited[idOf(obj)] = planned[i].handEdited
		}
	}
	if _, err := firstError(errs); err != nil {
		return nil, err
	}
	ro.planned = true
	return entries, nil
}

// objectPlan is the plan of one object.
type objectPlan struct {
	entry plan.Entry
	// taken are the hand-edited fields taken back before the dry-run or,
	// for a manual Application, that the rollout takes back.
	taken []string
	// noop is the live object when its dry-run returned it unchanged,
	// managed fields included: applying it would change nothing.
	noop *unstructured.Unstructured
	// handEdited is the live object of a manual Application whose rollout
	// takes back hand-edited fields of it.
	handEdited *unstructured.Unstructured
}

// planObject compares obj's live state with its dry-run, once an automatic
// Application has taken back the fields people edited by hand, or as a manual
// one's rollout will take them back (planTakeover); returned, for the caller
// to record. Fields the ignore rules name are dry-run with their
// live values, so they never show. An object whose kind or namespace the
// desired state itself creates cannot be dry-run before they exist; it is
// planned as the create it will be. An object its kind's watch cache does
// not hold is planned from its dry-run without being read first, unless
// that may plan it otherwise (errMayExist). It reads ro and never changes it.
func (r *Reconciler) planObject(ctx context.Context, ro *rollout, ds *desired.State, obj *unstructured.Unstructured) (objectPlan, error) {
	if r.absent != nil && r.absent(ctx, obj) {
		if op, err := r.planObjectRead(ctx, ro, ds, obj, false); !errors.Is(err, errMayExist) {
			return op, err
		}
	}
	return r.planObjectRead(ctx, ro, ds, obj, true)
}

// errMayExist says an object planned without being read may exist after
// all, or needs its live values: it is read and planned again.
var errMayExist = errors.New("the object may exist")

// planObjectRead is planObject, reading obj's live state first or, without
// read, taking it to be absent. Unread, ignore rules, a dry-run that fails
// other than for a kind or namespace that does not exist yet, and one that
// returns a resourceVersion (the object exists; the cache had not seen it)
// are errMayExist.
func (r *Reconciler) planObjectRead(ctx context.Context, ro *rollout, ds *desired.State, obj *unstructured.Unstructured, read bool) (objectPlan, error) {
	newKind := ds.NewKinds[obj.GroupVersionKind().GroupKind()]
	var live *unstructured.Unstructured
	if read {
		var err error
		if live, err = getLive(ctx, ro.client, obj); err != nil && !(newKind && errors.Is(err, errKindNotServed)) {
			return objectPlan{}, err
		}
	}
	if owner := ro.ownedByAnother(live); owner != "" {
		return objectPlan{}, &failure{reason: syncv1.ReasonApplyConflict, message: fmt.Sprintf(
			"%s belongs to Application %s (annotation %s); an object is managed by one Application only: remove it from one of them",
			idOf(obj), owner, syncv1.OwnedByAnnotation)}
	}
	force, err := ro.forced(obj)
	if err != nil {
		return objectPlan{}, err
	}
	obj, ignored, err := ro.respectIgnored(ctx, obj, live, true)
	if err != nil {
		return objectPlan{}, err
	}
	if !read && len(ignored) > 0 {
		return objectPlan{}, errMayExist
	}
	if !ro.app.Spec.Sync.Automatic && live != nil {
		return r.planTakeover(ctx, ro, obj, live, ignored, force)
	}
	live, taken, err := r.reclaimHandEdits(ctx, ro, live, ignored)
	if err != nil {
		return objectPlan{taken: taken}, err
	}
	dryRun, err := applyObject(ctx, ro.client, obj, true, force, syncv1.ReasonValidationFailure)
	switch {
	case err == nil && !read && dryRun.GetResourceVersion() != "":
		return objectPlan{}, errMayExist
	case err == nil:
	case newKind && errors.Is(err, errKindNotServed),
		ds.Namespaces[obj.GetNamespace()] && isNamespaceNotFound(err, obj.GetNamespace()):
		dryRun = obj
	case !read:
		return objectPlan{}, errMayExist
	default:
		return objectPlan{taken: taken}, err
	}
	entry, err := plan.NewEntry(live, dryRun)
	entry.Force = force
	op := objectPlan{entry: entry, taken: taken}
	// Ignored fields are applied from a fresh read, which the plan's may not be.
	if err == nil && live != nil && len(ignored) == 0 && equality.Semantic.DeepEqual(live.Object, dryRun.Object) {
		op.noop = live
	}
	return op, err
}

// isNamespaceNotFound reports whether err says namespace does not exist.
func isNamespaceNotFound(err error, namespace string) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d != nil && d.Kind == "namespaces" && d.Name == namespace
}

// destinationHint names spec.destination.namespace when a refusal is about
// that namespace and it is not the Application's own: the service account
// acts in the Application's namespace, and a destination elsewhere needs
// RoleBindings of its own there, which a refusal alone does not say.
func (ro *rollout) destinationHint(refusal string) string {
	dest := ro.app.Spec.Destination.Namespace
	if dest == "" || dest == ro.app.Namespace || !strings.Contains(refusal, fmt.Sprintf("namespace %q", dest)) {
		return ""
	}
	return fmt.Sprintf("; spec.destination.namespace is %s, where the service account needs a RoleBinding to act", dest)
}
