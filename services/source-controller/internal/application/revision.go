package application

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

// maxDesiredStateBytes keeps the desired-state Secret under the API
// server's object size limit with room for metadata.
const maxDesiredStateBytes = 900 << 10

// ensureRevision makes sure the Revision named after the desired-state
// digest exists with its desired-state Secret. Its spec records where it
// was rendered from when it is created; rendering the same content again,
// from this or a later commit, reuses it unchanged, so spec.source names
// the first commit that rendered it. Nothing is written to its status:
// that is the sync-controller's.
func (r *Reconciler) ensureRevision(ctx context.Context, app *syncv1.Application, commit string, out *Output) (*syncv1.Revision, error) {
	data, digest, err := EncodeDesiredState(app, out.Objects)
	if err != nil {
		return nil, err
	}
	name := desiredstate.RevisionName(app.Name, digest)
	rev := &syncv1.Revision{}
	// fresh is set when this render created the Revision, which then has
	// no desired state yet.
	fresh := false
	err = r.Client.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: name}, rev)
	if apierrors.IsNotFound(err) {
		rev = r.newRevision(app, name, commit)
		rev.Spec.DesiredState = syncv1.DesiredStateRef{SecretName: name, Digest: digest, Objects: int32(len(out.Objects))}
		rev.Spec.Source.Chart = out.Chart
		if fresh, err = CreateRevision(ctx, r.Client, r.APIReader, rev); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	if err := EnsureDesiredState(ctx, r.Client, r.APIReader, rev, data, fresh); err != nil {
		return nil, err
	}
	return rev, nil
}

// recordRenderFailure makes sure a Revision records that the Application
// failed to render at commit, so the failure shows where deployments do
// (kubectl get revisions, ksync history and apps): it has no desired state
// and spec.renderFailure says why; the sync-controller, which reads it as
// the desired Revision, records its phase Failed. It is named from the
// commit and the failure, so the same failure is one Revision however often
// it is retried.
func (r *Reconciler) recordRenderFailure(ctx context.Context, app *syncv1.Application, commit, reason, msg string) (*syncv1.Revision, error) {
	sum := sha256.Sum256([]byte("render-failed\x00" + commit + "\x00" + reason + "\x00" + msg))
	name := desiredstate.RevisionName(app.Name, hex.EncodeToString(sum[:]))
	rev := &syncv1.Revision{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: name}, rev)
	if !apierrors.IsNotFound(err) {
		return rev, err
	}
	rev = r.newRevision(app, name, commit)
	rev.Spec.RenderFailure = &syncv1.RenderFailure{Reason: reason, Message: ssa.Truncate(msg)}
	if err := r.Client.Create(ctx, rev, client.FieldOwner(syncv1.FieldManagerSource)); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	return rev, nil
}

// newRevision is the Revision name of app rendered at commit, owned by app.
func (r *Reconciler) newRevision(app *syncv1.Application, name, commit string) *syncv1.Revision {
	return &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: app.Namespace,
			Labels:          revisionLabels(app),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(app, syncv1.GroupVersion.WithKind("Application"))},
		},
		Spec: syncv1.RevisionSpec{
			ApplicationName: app.Name,
			Source:          &syncv1.RevisionSource{Commit: commit, Path: app.Spec.Source.Path, RenderedAt: metav1.NewTime(r.Now())},
		},
	}
}

// EncodeDesiredState encodes app's rendered objects for its desired-state
// Secret, refusing more than the Secret can hold.
func EncodeDesiredState(app *syncv1.Application, objects []*unstructured.Unstructured) (data []byte, digest string, err error) {
	data, digest, err = desiredstate.Encode(objects)
	if err != nil {
		return nil, "", err
	}
	if len(data) > maxDesiredStateBytes {
		return nil, "", fmt.Errorf("Application %s/%s: rendered objects are %d bytes compressed, over the %d-byte desired-state limit",
			app.Namespace, app.Name, len(data), maxDesiredStateBytes)
	}
	return data, digest, nil
}

// CreateRevision creates rev, under the source-controller's field manager,
// and reports whether this call created it. One another render created
// first is read instead, directly through reader: the cache may not have
// seen it yet. Create answers with the Revision as stored, so one this call
// created needs no read.
func CreateRevision(ctx context.Context, c client.Client, reader client.Reader, rev *syncv1.Revision) (bool, error) {
	err := c.Create(ctx, rev, client.FieldOwner(syncv1.FieldManagerSource))
	if !apierrors.IsAlreadyExists(err) {
		return err == nil, err
	}
	return false, reader.Get(ctx, client.ObjectKeyFromObject(rev), rev)
}

// EnsureDesiredState creates the Revision's desired-state Secret if it is
// missing (a first render, or a crash between creating the Revision and the
// Secret). Its content is fixed by the Revision's name, so an existing one
// is never rewritten. A fresh Revision, one this render just created, has
// none, so it is not looked for. The Secret carries the Revision's
// Application label, and a preview Revision's preview label.
func EnsureDesiredState(ctx context.Context, c client.Client, reader client.Reader, rev *syncv1.Revision, data []byte, fresh bool) error {
	if !fresh {
		err := reader.Get(ctx, client.ObjectKey{Namespace: rev.Namespace, Name: rev.Spec.DesiredState.SecretName}, &corev1.Secret{})
		if err == nil || !apierrors.IsNotFound(err) {
			return err
		}
	}
	labels := map[string]string{syncv1.ApplicationLabel: rev.Spec.ApplicationName}
	if rev.Spec.Preview != nil {
		labels[syncv1.PreviewLabel] = rev.Spec.Preview.Name
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: rev.Spec.DesiredState.SecretName, Namespace: rev.Namespace,
			Labels:          labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rev, syncv1.GroupVersion.WithKind("Revision"))},
		},
		Type: syncv1.DesiredStateSecretType,
		Data: map[string][]byte{desiredstate.DataKey: data},
	}
	if err := c.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
