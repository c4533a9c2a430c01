package memory

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
)

func TestChangedByUser_LetsThroughOthersChangesButNotTheControllersOwn(t *testing.T) {
	at := func(s int) *metav1.Time { return &metav1.Time{Time: time.Date(2026, 12, 2, 12, 0, s, 0, time.UTC)} }
	entry := func(manager string, op metav1.ManagedFieldsOperationType, s int, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Time: at(s), FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(fields)}
	}
	ours := entry(syncv1.FieldManagerSync, metav1.ManagedFieldsOperationApply, 0, `{"f:data":{"f:key":{}}}`)
	configMap := func(value string, managed ...metav1.ManagedFieldsEntry) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "shop", ManagedFields: managed},
			Data: map[string]string{"key": value}}
	}
	for _, tc := range []struct {
		name          string
		before, after *corev1.ConfigMap
		want          bool
	}{
		{name: "the controller's own apply", want: false,
			before: configMap("a", ours),
			after:  configMap("b", entry(syncv1.FieldManagerSync, metav1.ManagedFieldsOperationApply, 5, `{"f:data":{"f:key":{}}}`))},
		{name: "kubectl edit of an applied field", want: true,
			before: configMap("a", ours),
			after:  configMap("b", ours, entry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, 5, `{"f:data":{"f:key":{}}}`))},
		{name: "another manager changing its own field", want: true,
			before: configMap("a", ours, entry("other-team", metav1.ManagedFieldsOperationApply, 1, `{"f:data":{"f:other":{}}}`)),
			after:  configMap("a", ours, entry("other-team", metav1.ManagedFieldsOperationApply, 5, `{"f:data":{"f:more":{}}}`))},
		{name: "the controller and another manager in one update", want: true,
			before: configMap("a", ours),
			after: configMap("b", entry(syncv1.FieldManagerSync, metav1.ManagedFieldsOperationApply, 5, `{"f:data":{"f:key":{}}}`),
				entry("other-team", metav1.ManagedFieldsOperationUpdate, 5, `{"f:data":{"f:other":{}}}`))},
		{name: "a change that moved no managed fields", want: true,
			before: configMap("a", ours),
			after:  configMap("b", ours)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := changedByUser().Update(event.UpdateEvent{ObjectOld: tc.before, ObjectNew: tc.after}); got != tc.want {
				t.Errorf("Update = %v, want %v", got, tc.want)
			}
			// The cache keeps objects without their field sets.
			if got := changedByUser().Update(event.UpdateEvent{ObjectOld: trimmed(t, tc.before), ObjectNew: trimmed(t, tc.after)}); got != tc.want {
				t.Errorf("Update as cached = %v, want %v", got, tc.want)
			}
		})
	}
	if !changedByUser().Delete(event.DeleteEvent{Object: configMap("a", ours)}) {
		t.Error("a deletion must always be let through")
	}
	if changedByUser().Create(event.CreateEvent{Object: configMap("a", ours)}) {
		t.Error("the initial list must not wake every Application")
	}
}

// trimmed is cm as the manager's cache keeps it.
func trimmed(t *testing.T, cm *corev1.ConfigMap) *corev1.ConfigMap {
	t.Helper()
	out, err := manager.TrimManagedFields(cm.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	return out.(*corev1.ConfigMap)
}
