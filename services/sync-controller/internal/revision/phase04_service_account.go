package revision

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// resolveServiceAccount picks the service account that acts for the
// Application: spec.serviceAccountName, else --default-service-account, in
// the Application's namespace, so that an Application can never borrow
// another namespace's account. An account found within
// serviceAccountRecheck is not read again.
func (r *Reconciler) resolveServiceAccount(ctx context.Context, ro *rollout) (step, error) {
	sa, f := planner.ServiceAccount(ro.App, r.Options.DefaultServiceAccount)
	if f != nil {
		ro.fail(atServiceAccount, f)
		return halt, nil
	}
	if err := r.serviceAccountExists(ctx, ro, sa); err != nil {
		if !apierrors.IsNotFound(err) {
			return halt, fmt.Errorf("reading ServiceAccount %s: %w", sa, err)
		}
		ro.fail(atServiceAccount, planner.ServiceAccountNotFound(sa))
		return waitFor(dependencyRetry), nil
	}
	c, err := r.Clients.For(sa)
	if err != nil {
		return halt, err
	}
	ro.Client = c
	return proceed, nil
}

// serviceAccountExists reads sa unless it was found within
// serviceAccountRecheck of ro's start.
func (r *Reconciler) serviceAccountExists(ctx context.Context, ro *rollout, sa types.NamespacedName) error {
	if r.accounts.FoundWithin(sa, ro.Now.Time, serviceAccountRecheck) {
		return nil
	}
	if err := r.APIReader.Get(ctx, sa, &corev1.ServiceAccount{}); err != nil {
		r.accounts.Forget(sa)
		return err
	}
	r.accounts.Found(sa, ro.Now.Time)
	return nil
}
