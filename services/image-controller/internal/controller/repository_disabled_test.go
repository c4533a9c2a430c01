package controller_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/controller"
)

func TestRepository_ImagesUpdatedDisabledWithoutWriteBack(t *testing.T) {
	ns := newNamespace(t)
	create(t, &syncv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
		Spec: syncv1.RepositorySpec{Git: syncv1.GitSource{URL: "https://git.example.com/app.git", Revision: "main"},
			ImageUpdate: &syncv1.ImageUpdateSpec{SecretRef: syncv1.LocalObjectReference{Name: "absent"}}},
	})
	// The suite's manager writes back; it refuses the missing Secret and
	// leaves the Repository alone for minutes, so the disabled reconciler's
	// answer below is not overwritten.
	eventually(t, "the refusal of the missing Secret", func() bool {
		return condition(repository(t, ns, "app").Status.Conditions, syncv1.ConditionImagesUpdated).Reason == syncv1.ReasonCredentialsRefused
	})
	disabled := &controller.RepositoryReconciler{Client: k8s, APIReader: k8s, WriteBack: false}
	if _, err := disabled.Reconcile(t.Context(), ctrl.Request{NamespacedName: keyOf(ns, "app")}); err != nil {
		t.Fatal(err)
	}
	c := condition(repository(t, ns, "app").Status.Conditions, syncv1.ConditionImagesUpdated)
	if c.Status != metav1.ConditionFalse || c.Reason != syncv1.ReasonDisabled || !strings.Contains(c.Message, "--image-write-back=false") {
		t.Errorf("ImagesUpdated %+v, want False/Disabled naming the flag", c)
	}
}
