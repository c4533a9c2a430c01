package planner

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/ignore"
)

// ApplyObject server-side applies obj as the client's user under the
// kuvryn-sync field manager, with force only when asked (see
// Scope.Forced), and returns the object the API server answered with.
// invalidReason is the failure reason of an object the API server refuses
// as invalid: ValidationFailure while planning, ApplyFailed while applying.
func ApplyObject(ctx context.Context, c client.Client, obj *unstructured.Unstructured, dryRun, force bool, invalidReason string) (*unstructured.Unstructured, error) {
	out := obj.DeepCopy()
	opts := []client.ApplyOption{client.FieldOwner(syncv1.FieldManagerSync)}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	if force {
		opts = append(opts, client.ForceOwnership)
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(out), opts...); err != nil {
		return nil, FailureOf(obj, "apply", err, invalidReason)
	}
	return out, nil
}

// Forced reports whether obj is applied with force: its Application's
// spec.sync.force, or the object's own annotation sync.kuvryn.io/force
// "true". Any value of the annotation other than "true" or "false" is refused.
func (s *Scope) Forced(obj *unstructured.Unstructured) (bool, error) {
	switch v, ok := obj.GetAnnotations()[syncv1.ForceAnnotation]; {
	case !ok || v == "false":
		return s.App.Spec.Sync.Force, nil
	case v == "true":
		return true, nil
	default:
		return false, &Failure{Reason: syncv1.ReasonValidationFailure, Message: fmt.Sprintf(
			"%s: annotation %s is %q, want \"true\" or \"false\"", IDOf(obj), syncv1.ForceAnnotation, v)}
	}
}

// RespectIgnored returns obj with the fields the Application's ignore rules
// name holding their live values (see ignore.Respect), and the rules'
// pointers for obj. live is read only when a rule matches obj.
func (s *Scope) RespectIgnored(ctx context.Context, obj, live *unstructured.Unstructured, liveRead bool) (*unstructured.Unstructured, []ignore.Pointer, error) {
	ptrs, err := ignore.For(s.App.Spec.IgnoreDifferences, obj)
	if err != nil {
		return nil, nil, &Failure{Reason: syncv1.ReasonValidationFailure, Message: fmt.Sprintf("Application %s/%s: %v", s.App.Namespace, s.App.Name, err)}
	}
	if len(ptrs) == 0 {
		return obj, nil, nil
	}
	if !liveRead {
		if live, err = GetLive(ctx, s.Client, obj); err != nil {
			return nil, nil, err
		}
	}
	return ignore.Respect(obj, live, ptrs), ptrs, nil
}

// ManagedBySync reports whether Kuvryn Sync has applied fields of obj, which
// is what entitles it to delete obj.
func ManagedBySync(obj *unstructured.Unstructured) bool {
	return HasFieldManager(obj, syncv1.FieldManagerSync)
}

// HasFieldManager reports whether manager owns any field of obj.
func HasFieldManager(obj *unstructured.Unstructured, manager string) bool {
	for _, f := range obj.GetManagedFields() {
		if f.Manager == manager {
			return true
		}
	}
	return false
}
