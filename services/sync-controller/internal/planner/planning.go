package planner

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

// Summary is the message of a Planned condition.
func Summary(p *syncv1.Plan) string {
	return fmt.Sprintf("plan %s: %d to create, %d to update, %d to delete, %d unchanged",
		p.Digest, p.Summary.Create, p.Summary.Update, p.Summary.Delete, p.Summary.Unchanged)
}

// Plan plans every object of the scope's desired state. Failures name the
// object; a refused read or dry-run is PlanFailed unless it is a conflict or
// an invalid object.
func (p *Planner) Plan(ctx context.Context, s *Scope) (syncv1.Plan, error) {
	entries, err := p.Entries(ctx, s, true)
	if f, ok := AsFailure(err); ok && f.Reason == syncv1.ReasonApplyFailed {
		return syncv1.Plan{}, &Failure{Reason: syncv1.ReasonPlanFailed, Message: f.Message + s.destinationHint(f.Message), Object: f.Object}
	}
	if err != nil {
		return syncv1.Plan{}, err
	}
	built := plan.Build(entries)
	built.PlannedAt = s.Now
	return built, nil
}

// Entries plans the waves' objects, and, with hooks, the hooks (which
// every attempt creates anew) and the deletes prune would make.
func (p *Planner) Entries(ctx context.Context, s *Scope, withHooksAndDeletes bool) ([]plan.Entry, error) {
	ds, err := p.LoadDesired(ctx, s)
	if err != nil {
		return nil, err
	}
	var entries []plan.Entry
	if withHooksAndDeletes {
		for _, stage := range HookStages {
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
	planned, err := p.planObjects(ctx, s, ds)
	if err != nil {
		return nil, err
	}
	entries = append(entries, planned...)
	if withHooksAndDeletes && s.PruneEnabled() {
		stale, err := p.PruneCandidates(ctx, s, ds)
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

// planObjects plans the objects of every wave, ObjectsAtOnce at a time: no
// plan of one depends on another's. What each took back by hand is
// recorded in order, and the failure reported is the first object's, as
// one after the other would have stopped at. Objects an apply would leave
// exactly as they are go into s.Noops, for the waves of this reconcile.
func (p *Planner) planObjects(ctx context.Context, s *Scope, ds *desired.State) ([]plan.Entry, error) {
	var objs []*unstructured.Unstructured
	var waves []int32
	for _, g := range ds.Groups.Waves {
		for _, obj := range g.Objects {
			objs = append(objs, obj)
			waves = append(waves, g.Wave)
		}
	}
	planned := make([]objectPlan, len(objs))
	errs := InParallel(len(objs), func(i int) (err error) {
		planned[i], err = p.planObject(ctx, s, ds, objs[i])
		planned[i].entry.Wave = waves[i]
		return err
	})
	entries := make([]plan.Entry, len(objs))
	s.Noops = nil
	s.HandEdited = map[ObjectID]*unstructured.Unstructured{}
	s.HandEdits = nil
	for i, obj := range objs {
		if len(planned[i].taken) > 0 {
			s.HandEdits = append(s.HandEdits, HandEdits{ID: IDOf(obj), Fields: planned[i].taken})
		}
		entries[i] = planned[i].entry
		if planned[i].noop != nil {
			if s.Noops == nil {
				s.Noops = map[ObjectID]*unstructured.Unstructured{}
			}
			s.Noops[IDOf(obj)] = planned[i].noop
		}
		if planned[i].handEdited != nil {
			s.HandEdited[IDOf(obj)] = planned[i].handEdited
		}
	}
	if _, err := FirstError(errs); err != nil {
		return nil, err
	}
	s.Planned = true
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
// that may plan it otherwise (errMayExist). It reads s and never changes it.
func (p *Planner) planObject(ctx context.Context, s *Scope, ds *desired.State, obj *unstructured.Unstructured) (objectPlan, error) {
	if p.Absent != nil && p.Absent(ctx, obj) {
		if op, err := p.planObjectRead(ctx, s, ds, obj, false); !errors.Is(err, errMayExist) {
			return op, err
		}
	}
	return p.planObjectRead(ctx, s, ds, obj, true)
}

// errMayExist says an object planned without being read may exist after
// all, or needs its live values: it is read and planned again.
var errMayExist = errors.New("the object may exist")

// planObjectRead is planObject, reading obj's live state first or, without
// read, taking it to be absent. Unread, ignore rules, a dry-run that fails
// other than for a kind or namespace that does not exist yet, and one that
// returns a resourceVersion (the object exists; the cache had not seen it)
// are errMayExist.
func (p *Planner) planObjectRead(ctx context.Context, s *Scope, ds *desired.State, obj *unstructured.Unstructured, read bool) (objectPlan, error) {
	newKind := ds.NewKinds[obj.GroupVersionKind().GroupKind()]
	var live *unstructured.Unstructured
	if read {
		var err error
		if live, err = GetLive(ctx, s.Client, obj); err != nil && !(newKind && errors.Is(err, ErrKindNotServed)) {
			return objectPlan{}, err
		}
	}
	if owner := s.OwnedByAnother(live); owner != "" {
		return objectPlan{}, &Failure{Reason: syncv1.ReasonApplyConflict, Message: fmt.Sprintf(
			"%s belongs to Application %s (annotation %s); an object is managed by one Application only: remove it from one of them",
			IDOf(obj), owner, syncv1.OwnedByAnnotation), Object: RefOf(obj)}
	}
	force, err := s.Forced(obj)
	if err != nil {
		return objectPlan{}, err
	}
	obj, ignored, err := s.RespectIgnored(ctx, obj, live, true)
	if err != nil {
		return objectPlan{}, err
	}
	if !read && len(ignored) > 0 {
		return objectPlan{}, errMayExist
	}
	if (!s.App.Spec.Sync.Automatic || s.ReadOnly) && live != nil {
		return p.planTakeover(ctx, s, obj, live, ignored, force)
	}
	live, taken, err := p.reclaimHandEdits(ctx, s, live, ignored)
	if err != nil {
		return objectPlan{taken: taken}, err
	}
	dryRun, err := ApplyObject(ctx, s.Client, obj, true, force, syncv1.ReasonValidationFailure)
	switch {
	case err == nil && !read && dryRun.GetResourceVersion() != "":
		return objectPlan{}, errMayExist
	case err == nil:
	case newKind && errors.Is(err, ErrKindNotServed),
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
func (s *Scope) destinationHint(refusal string) string {
	dest := s.App.Spec.Destination.Namespace
	if dest == "" || dest == s.App.Namespace || !strings.Contains(refusal, fmt.Sprintf("namespace %q", dest)) {
		return ""
	}
	return fmt.Sprintf("; spec.destination.namespace is %s, where the service account needs a RoleBinding to act", dest)
}
