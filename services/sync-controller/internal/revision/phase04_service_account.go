package revision

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// resolveServiceAccount picks the service account that acts for the
// Application: spec.serviceAccountName, else --default-service-account, in
// the Application's namespace, so that an Application can never borrow
// another namespace's account. An account found within
// serviceAccountRecheck is not read again.
func (r *Reconciler) resolveServiceAccount(ctx context.Context, ro *rollout) (step, error) {
	name := ro.app.Spec.ServiceAccountName
	if name == "" {
		name = r.Options.DefaultServiceAccount
	}
	if name == "" {
		ro.fail(atServiceAccount, &failure{reason: syncv1.ReasonServiceAccountMissed, message: fmt.Sprintf(
			"Application %s/%s sets no spec.serviceAccountName and the manager runs without "+
				"--default-service-account; set spec.serviceAccountName to the service account that applies it",
			ro.app.Namespace, ro.app.Name)})
		return halt, nil
	}
	sa := types.NamespacedName{Namespace: ro.app.Namespace, Name: name}
	if err := r.serviceAccountExists(ctx, ro, sa); err != nil {
		if !apierrors.IsNotFound(err) {
			return halt, fmt.Errorf("reading ServiceAccount %s: %w", sa, err)
		}
		ro.fail(atServiceAccount, &failure{reason: syncv1.ReasonServiceAccountMissed, message: fmt.Sprintf(
			"ServiceAccount %s (spec.serviceAccountName or --default-service-account) not found", sa)})
		return waitFor(dependencyRetry), nil
	}
	c, err := r.Clients.For(sa)
	if err != nil {
		return halt, err
	}
	ro.client = c
	return proceed, nil
}

// serviceAccountExists reads sa unless it was found within
// serviceAccountRecheck of ro's start.
func (r *Reconciler) serviceAccountExists(ctx context.Context, ro *rollout, sa types.NamespacedName) error {
	if r.accounts.FoundWithin(sa, ro.now.Time, serviceAccountRecheck) {
		return nil
	}
	if err := r.APIReader.Get(ctx, sa, &corev1.ServiceAccount{}); err != nil {
		r.accounts.Forget(sa)
		return err
	}
	r.accounts.Found(sa, ro.now.Time)
	return nil
}
