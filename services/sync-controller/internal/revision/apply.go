package revision

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/redact"
)

// failure stops a Revision: reason is a condition reason from names.go and
// message names the object, the field and what is wrong. Errors that are
// not failures are transient and retried.
type failure struct {
	reason  string
	message string
}

func (f *failure) Error() string { return f.message }

// asFailure reports whether err is, or wraps, a failure.
func asFailure(err error) (*failure, bool) {
	var f *failure
	ok := errors.As(err, &f)
	return f, ok
}

// applyObject server-side applies obj as the client's user, without force,
// under the kuvryn-sync field manager, and returns the object the API server
// answered with. invalidReason is the failure reason of an object the API
// server refuses as invalid: ValidationFailure while planning, ApplyFailed
// while applying.
func applyObject(ctx context.Context, c client.Client, obj *unstructured.Unstructured, dryRun bool, invalidReason string) (*unstructured.Unstructured, error) {
	out := obj.DeepCopy()
	opts := []client.ApplyOption{client.FieldOwner(syncv1.FieldManagerSync)}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(out), opts...); err != nil {
		return nil, classify(obj, "apply", err, invalidReason)
	}
	return out, nil
}

// getLive reads obj's live state as the client's user; nil when it does not exist.
func getLive(ctx context.Context, c client.Client, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), live)
	switch {
	case err == nil:
		return live, nil
	case apierrors.IsNotFound(err):
		return nil, nil
	default:
		return nil, classify(obj, "read", err, syncv1.ReasonApplyFailed)
	}
}

// observe records live as the state of its object in this reconcile.
func (ro *rollout) observe(live *unstructured.Unstructured) {
	if ro.observed == nil {
		ro.observed = map[objectID]*unstructured.Unstructured{}
	}
	ro.observed[idOf(live)] = live
}

// current is obj's live state as applied or read earlier in this reconcile,
// else as read now; nil when it does not exist. A reconcile spans at most
// one pass over the groups, so what it saw is current enough to judge
// health; the next reconcile reads afresh.
func (ro *rollout) current(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if live, ok := ro.observed[idOf(obj)]; ok {
		return live, nil
	}
	live, err := getLive(ctx, ro.client, obj)
	if err == nil && live != nil {
		ro.observe(live)
	}
	return live, err
}

// managedBySync reports whether Kuvryn Sync has applied fields of obj, which
// is what entitles it to delete obj.
func managedBySync(obj *unstructured.Unstructured) bool {
	for _, f := range obj.GetManagedFields() {
		if f.Manager == syncv1.FieldManagerSync {
			return true
		}
	}
	return false
}

// conflictManager finds the manager in a cause message such as
// `conflict with "kubectl-edit" using apps/v1`.
var conflictManager = regexp.MustCompile(`conflict with "([^"]*)"`)

// classify turns an API error about obj into a failure when retrying cannot
// help, and keeps it transient otherwise.
func classify(obj *unstructured.Unstructured, verb string, err error, invalidReason string) error {
	id := idOf(obj)
	var status apierrors.APIStatus
	switch {
	case meta.IsNoMatchError(err):
		return fmt.Errorf("%s %s: %w: %v", verb, id, errKindNotServed, err)
	case apierrors.IsConflict(err) && errors.As(err, &status) && hasConflictCauses(status.Status()):
		return &failure{reason: syncv1.ReasonApplyConflict, message: conflictMessage(id, status.Status())}
	case apierrors.IsForbidden(err):
		return &failure{reason: syncv1.ReasonApplyFailed, message: fmt.Sprintf("%s %s: %s", verb, id, apiMessage(obj, err))}
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsMethodNotSupported(err),
		apierrors.IsRequestEntityTooLargeError(err), apierrors.IsUnsupportedMediaType(err):
		return &failure{reason: invalidReason, message: fmt.Sprintf("%s %s: %s", verb, id, apiMessage(obj, err))}
	}
	return fmt.Errorf("%s %s: %w", verb, id, err)
}

func hasConflictCauses(s metav1.Status) bool {
	if s.Details == nil {
		return false
	}
	for _, c := range s.Details.Causes {
		if c.Type == metav1.CauseTypeFieldManagerConflict {
			return true
		}
	}
	return false
}

// conflictMessage names the other field managers and the fields they own.
func conflictMessage(id objectID, s metav1.Status) string {
	byManager := make(map[string][]string)
	for _, c := range s.Details.Causes {
		if c.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		manager := "unknown"
		if m := conflictManager.FindStringSubmatch(c.Message); m != nil {
			manager = m[1]
		}
		byManager[manager] = append(byManager[manager], c.Field)
	}
	managers := make([]string, 0, len(byManager))
	for m := range byManager {
		managers = append(managers, m)
	}
	sort.Strings(managers)
	parts := make([]string, 0, len(managers))
	for _, m := range managers {
		fields := byManager[m]
		sort.Strings(fields)
		listed := fields
		if len(listed) > 3 {
			listed = listed[:3]
		}
		part := fmt.Sprintf("field manager %q owns %s", m, strings.Join(listed, ", "))
		if more := len(fields) - len(listed); more > 0 {
			part += fmt.Sprintf(" and %d more field(s)", more)
		}
		parts = append(parts, part)
	}
	return fmt.Sprintf("%s: Server-Side Apply conflict: %s; Kuvryn Sync does not force, so remove the field(s) from one of the managers",
		id, strings.Join(parts, "; "))
}

// apiMessage is the API server's message about obj. For Secrets only the
// field paths of the causes are kept, since a message may quote a value.
func apiMessage(obj *unstructured.Unstructured, err error) string {
	if !redact.IsSecret(obj) {
		return err.Error()
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil || len(status.Status().Details.Causes) == 0 {
		return fmt.Sprintf("refused by the API server (%s)", apierrors.ReasonForError(err))
	}
	var fields []string
	for _, c := range status.Status().Details.Causes {
		fields = append(fields, fmt.Sprintf("%s: %s", c.Field, c.Type))
	}
	return fmt.Sprintf("refused by the API server (%s): %s", apierrors.ReasonForError(err), strings.Join(fields, ", "))
}
