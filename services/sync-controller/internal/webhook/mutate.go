package webhook

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"time"

	"gomodules.xyz/jsonpatch/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Mutator records approvals and rollback requests on Applications from the
// authenticated request of every CREATE and UPDATE:
//
//   - Setting or changing sync.kuvryn.io/approved-revision, or setting
//     sync.kuvryn.io/approve-digest, approves: the named Revision must belong
//     to the Application and have a plan, and approve-digest, if given, must
//     be that plan's digest. approved-by, approved-at and approved-digest are
//     then written and approve-digest dropped; it is never stored, so
//     setting it again always approves again.
//   - Setting or changing sync.kuvryn.io/rollback-requested records
//     rollback-requested-by, rollback-requested-at and rollback-desired-state
//     (the target Revision's desired-state digest).
//   - Otherwise the records keep their stored values, whatever the request
//     says, and are removed with the annotation they record.
type Mutator struct {
	// Reader reads Revisions; it must not be a cache, so that an approval is
	// checked against the plan as it is now.
	Reader  client.Reader
	Decoder admission.Decoder
	// Now is the clock of approved-at and rollback-requested-at.
	Now func() time.Time
}

// refusal is a request the webhook denies; any other error fails the request
// as an internal error, which the API server also refuses (failurePolicy Fail).
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

func refuse(format string, args ...any) error {
	return &refusal{msg: fmt.Sprintf(format, args...)}
}

// Handle implements admission.Handler.
func (m *Mutator) Handle(ctx context.Context, req admission.Request) admission.Response {
	app := &syncv1.Application{}
	if err := m.Decoder.Decode(req, app); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding Application %s/%s: %w", req.Namespace, req.Name, err))
	}
	var old map[string]string
	if len(req.OldObject.Raw) > 0 {
		prev := &syncv1.Application{}
		if err := m.Decoder.DecodeRaw(req.OldObject, prev); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the stored Application %s/%s: %w", req.Namespace, req.Name, err))
		}
		old = prev.Annotations
	}

	annotations := maps.Clone(app.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	r := record{
		Mutator:     m,
		namespace:   req.Namespace,
		application: app.Name,
		user:        req.UserInfo.Username,
		at:          m.Now().UTC().Format(time.RFC3339),
	}
	err := r.approval(ctx, annotations, old)
	if err == nil {
		err = r.rollback(ctx, annotations, old)
	}
	if refused, ok := errors.AsType[*refusal](err); ok {
		return admission.Denied(fmt.Sprintf("Application %s/%s: %s", req.Namespace, app.Name, refused.msg))
	}
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	delete(annotations, syncv1.ApproveDigestAnnotation)

	if maps.Equal(annotations, app.Annotations) {
		return admission.Allowed("")
	}
	// Replacing the whole map keeps the patch valid whether or not the
	// request carried metadata.annotations at all.
	return admission.Patched("", jsonpatch.JsonPatchOperation{Operation: "add", Path: "/metadata/annotations", Value: annotations})
}

// record is one request's identity and clock.
type record struct {
	*Mutator
	namespace   string
	application string
	user        string
	at          string
}

func (r record) approval(ctx context.Context, annotations, old map[string]string) error {
	name, approving := annotations[syncv1.ApprovedRevisionAnnotation]
	offered, reviewed := annotations[syncv1.ApproveDigestAnnotation]
	switch {
	case !approving && reviewed:
		return refuse("annotation %s is set without %s: set both to approve a plan",
			syncv1.ApproveDigestAnnotation, syncv1.ApprovedRevisionAnnotation)
	case !approving:
		approval.clear(annotations)
		return nil
	case !reviewed && !approval.requested(annotations, old):
		approval.keep(annotations, old)
		return nil
	}
	rev, err := r.revision(ctx, syncv1.ApprovedRevisionAnnotation, name)
	if err != nil {
		return err
	}
	if rev.Status.Plan == nil || rev.Status.Plan.Digest == "" {
		return refuse("annotation %s: Revision %s/%s has no plan yet (status.plan.digest is empty); approve it once it is planned",
			syncv1.ApprovedRevisionAnnotation, r.namespace, name)
	}
	if !rev.Status.Phase.TakesApproval() {
		return refuse("annotation %s: Revision %s/%s is %s and waits for no approval: its plan %s has rolled out or is rolling out; a later change gets a new plan to approve",
			syncv1.ApprovedRevisionAnnotation, r.namespace, name, rev.Status.Phase, rev.Status.Plan.Digest)
	}
	current := rev.Status.Plan.Digest
	if reviewed && offered != current {
		return refuse("annotation %s: plan changed since you reviewed it: current digest %s, approve-digest %s; review Revision %s's plan again",
			syncv1.ApproveDigestAnnotation, current, offered, name)
	}
	user, err := r.requester()
	if err != nil {
		return err
	}
	approval.set(annotations, user, r.at, current)
	return nil
}

// requestID is what a rollback request id may be; empty when a person sets
// rollback-requested by hand.
var requestID = regexp.MustCompile(`^[A-Za-z0-9-]{0,64}$`)

// rollback records a rollback request: whenever the target or the request
// id changes, so every `ksync rollback` is a new request even to the same
// target.
func (r record) rollback(ctx context.Context, annotations, old map[string]string) error {
	name, requesting := annotations[syncv1.RollbackRequestedAnnotation]
	switch {
	case !requesting:
		rollback.clear(annotations)
		return nil
	case !rollback.requested(annotations, old) && annotations[syncv1.RollbackRequestIDAnnotation] == old[syncv1.RollbackRequestIDAnnotation]:
		rollback.keep(annotations, old)
		return nil
	}
	if id := annotations[syncv1.RollbackRequestIDAnnotation]; !requestID.MatchString(id) {
		return refuse("annotation %s is %q: want at most 64 letters, digits and dashes",
			syncv1.RollbackRequestIDAnnotation, id)
	}
	rev, err := r.revision(ctx, syncv1.RollbackRequestedAnnotation, name)
	if err != nil {
		return err
	}
	user, err := r.requester()
	if err != nil {
		return err
	}
	rollback.set(annotations, user, r.at, rev.Spec.DesiredState.Digest)
	return nil
}

// requester is the authenticated user, who the records name.
func (r record) requester() (string, error) {
	if r.user == "" {
		return "", refuse("the request has no authenticated user to record")
	}
	return r.user, nil
}

// revision reads the Revision an annotation names and checks that it
// belongs to the Application.
func (r record) revision(ctx context.Context, annotation, name string) (*syncv1.Revision, error) {
	if name == "" {
		return nil, refuse("annotation %s is empty: set it to the name of a Revision of Application %s", annotation, r.application)
	}
	rev := &syncv1.Revision{}
	err := r.Reader.Get(ctx, client.ObjectKey{Namespace: r.namespace, Name: name}, rev)
	if apierrors.IsNotFound(err) {
		return nil, refuse("annotation %s: Revision %s/%s not found", annotation, r.namespace, name)
	}
	if err != nil {
		return nil, fmt.Errorf("reading Revision %s/%s named by annotation %s: %w", r.namespace, name, annotation, err)
	}
	if p := rev.Spec.Preview; p != nil {
		return nil, refuse("annotation %s: Revision %s/%s is a preview (preview %s of Repository %s, %s), planned with dry-runs only: "+
			"it is never approved or rolled back to; merge the change and approve the Revision its commit renders",
			annotation, r.namespace, name, p.Name, p.Repository, p.Ref)
	}
	if !rev.BelongsTo(types.NamespacedName{Namespace: r.namespace, Name: r.application}) {
		return nil, refuse("annotation %s: Revision %s/%s belongs to Application %q, not %q",
			annotation, r.namespace, name, rev.Spec.ApplicationName, r.application)
	}
	return rev, nil
}
