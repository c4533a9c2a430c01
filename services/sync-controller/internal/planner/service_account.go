package planner

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// ServiceAccount names the service account that acts for app:
// spec.serviceAccountName, else defaultName (--default-service-account), in
// the Application's namespace, so that an Application can never borrow
// another namespace's account. It fails when neither names one.
func ServiceAccount(app *syncv1.Application, defaultName string) (types.NamespacedName, *Failure) {
	name := app.Spec.ServiceAccountName
	if name == "" {
		name = defaultName
	}
	if name == "" {
		return types.NamespacedName{}, &Failure{Reason: syncv1.ReasonServiceAccountMissed, Message: fmt.Sprintf(
			"Application %s/%s sets no spec.serviceAccountName and the manager runs without "+
				"--default-service-account; set spec.serviceAccountName to the service account that applies it",
			app.Namespace, app.Name)}
	}
	return types.NamespacedName{Namespace: app.Namespace, Name: name}, nil
}

// ServiceAccountNotFound is the failure of an Application whose service
// account sa does not exist.
func ServiceAccountNotFound(sa types.NamespacedName) *Failure {
	return &Failure{Reason: syncv1.ReasonServiceAccountMissed, Message: fmt.Sprintf(
		"ServiceAccount %s (spec.serviceAccountName or --default-service-account) not found", sa)}
}
