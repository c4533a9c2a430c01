package planner

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/desired"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/memory"
)

// LoadDesired reads the rendered objects of the scope's Revision (readDesired)
// and has desired.Prepare check and order them. Problems with the content
// are *Failure values with reason ValidationFailure; other errors are
// transient.
func (p *Planner) LoadDesired(ctx context.Context, s *Scope) (*desired.State, error) {
	if s.Desired != nil {
		return s.Desired, nil
	}
	rev := s.Rev
	ref := rev.Spec.DesiredState
	cacheKey := memory.DesiredKey{Namespace: rev.Namespace, Secret: ref.SecretName, Digest: ref.Digest}
	objs, err := p.readDesired(ctx, rev, cacheKey)
	if err != nil {
		return nil, err
	}
	ds, err := desired.Prepare(objs, s.App.DestinationNamespace(), s.Owner(), p.scopeOf)
	if err != nil {
		return nil, invalidDesired(rev, "%v", err)
	}
	s.Desired = ds
	return ds, nil
}

// readDesired decodes the desired state of rev, verified against the digest
// the Revision pins. The desired-state Secret is read without the manager's
// cache, so memory does not grow with the number of Revisions kept; what was
// verified is kept in p.DesiredStates by its digest, so later passes of the
// rollout do not read it again.
func (p *Planner) readDesired(ctx context.Context, rev *syncv1.Revision, cacheKey memory.DesiredKey) ([]*unstructured.Unstructured, error) {
	if data := p.DesiredStates.Get(cacheKey); data != nil {
		return desiredstate.Decode(data)
	}
	ref := rev.Spec.DesiredState
	secret := &corev1.Secret{}
	key := types.NamespacedName{Namespace: rev.Namespace, Name: ref.SecretName}
	if err := p.APIReader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("Revision %s: desired-state Secret %s (spec.desiredState.secretName): %w", rev.Name, key, ErrDesiredStateMissing)
		}
		return nil, fmt.Errorf("reading desired-state Secret %s: %w", key, err)
	}
	invalid := func(format string, args ...any) error { return invalidDesired(rev, format, args...) }
	if secret.Type != syncv1.DesiredStateSecretType {
		return nil, invalid("Secret %s has type %q, want %q", key, secret.Type, syncv1.DesiredStateSecretType)
	}
	data := secret.Data[desiredstate.DataKey]
	objs, err := desiredstate.Decode(data)
	if err != nil {
		return nil, invalid("Secret %s key %s: %v", key, desiredstate.DataKey, err)
	}
	// The Revision pins the content; a Secret changed since is not applied.
	if digest, err := desiredstate.Digest(objs); err != nil {
		return nil, invalid("Secret %s: %v", key, err)
	} else if digest != ref.Digest {
		return nil, invalid("Secret %s holds desired state %s, but spec.desiredState.digest pins %s", key, digest, ref.Digest)
	}
	p.DesiredStates.Put(cacheKey, data)
	return objs, nil
}

// invalidDesired is the ValidationFailure of rev's desired state.
func invalidDesired(rev *syncv1.Revision, format string, args ...any) error {
	return &Failure{Reason: syncv1.ReasonValidationFailure, Message: fmt.Sprintf("Revision %s: ", rev.Name) + fmt.Sprintf(format, args...)}
}

// Owner is the value of the owned-by annotation on what the scope applies.
func (s *Scope) Owner() string {
	return s.App.Namespace + "/" + s.App.Name
}

// OwnedByAnother returns the Application other than the scope's that live is
// annotated as belonging to, or "".
func (s *Scope) OwnedByAnother(live *unstructured.Unstructured) string {
	if live == nil {
		return ""
	}
	if owner := live.GetAnnotations()[syncv1.OwnedByAnnotation]; owner != "" && owner != s.Owner() {
		return owner
	}
	return ""
}

// scopeOf asks the RESTMapper whether gvk is namespaced; known is false
// when the API server does not serve the kind.
func (p *Planner) scopeOf(gvk schema.GroupVersionKind) (namespaced, known bool, err error) {
	mapping, err := p.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return false, false, nil
		}
		return false, false, fmt.Errorf("looking up kind %s: %w", gvk, err)
	}
	return mapping.Scope.Name() == meta.RESTScopeNameNamespace, true, nil
}
