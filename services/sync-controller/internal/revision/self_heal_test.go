package revision

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestSelfHeal_HandEditsAreRolledBack: what a person changes with kubectl
// (its field managers, as the API server records them) is taken back and
// rolled back by an automatic Application, and a DriftCorrected Event says
// what was taken from whom.
func TestSelfHeal_HandEditsAreRolledBack(t *testing.T) {
	tests := []struct {
		manager string
		edit    func(cm *corev1.ConfigMap)
		field   string
		healed  func(cm *corev1.ConfigMap) bool
	}{
		{"kubectl-patch", func(cm *corev1.ConfigMap) { cm.Data["key"] = "red" }, ".data.key",
			func(cm *corev1.ConfigMap) bool { return cm.Data["key"] == "value" }},
		{"kubectl-edit", func(cm *corev1.ConfigMap) { cm.Data["added"] = "by hand" }, ".data.added",
			func(cm *corev1.ConfigMap) bool { _, ok := cm.Data["added"]; return !ok }},
		{"kubectl-label", func(cm *corev1.ConfigMap) { cm.Labels = map[string]string{"tier": "db"} }, ".metadata.labels.tier",
			func(cm *corev1.ConfigMap) bool { _, ok := cm.Labels["tier"]; return !ok }},
		{"kubectl-annotate", func(cm *corev1.ConfigMap) { cm.Annotations["note"] = "hot fix" }, ".metadata.annotations.note",
			func(cm *corev1.ConfigMap) bool { _, ok := cm.Annotations["note"]; return !ok }},
	}
	for _, tt := range tests {
		t.Run(tt.manager, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.startController(driftOptions())
			e.createApplication("shop", nil)
			name := e.publish("shop", configMap(t, "settings"))
			e.waitForPhase(name, syncv1.PhaseHealthy)

			cm := &corev1.ConfigMap{}
			key := client.ObjectKey{Namespace: e.ns, Name: "settings"}
			must(t, admin.Get(t.Context(), key, cm))
			base := cm.DeepCopy()
			tt.edit(cm)
			must(t, admin.Patch(t.Context(), cm, client.MergeFrom(base), client.FieldOwner(tt.manager)))

			eventually(t, "the hand edit rolled back", func() bool {
				live := &corev1.ConfigMap{}
				must(t, admin.Get(t.Context(), key, live))
				return tt.healed(live)
			}, func() string { return describeRevision(e.revision(name)) })
			eventually(t, "a DriftCorrected Event naming the object, the field and the manager", func() bool {
				for _, ev := range e.events("shop", syncv1.ReasonDriftCorrected) {
					if contains(ev.Note, "ConfigMap "+e.ns+"/settings", tt.field, `"`+tt.manager+`"`) {
						return true
					}
				}
				return false
			}, nil)
			e.waitForRevision(name, "a further attempt Healthy", func(rev *syncv1.Revision) bool {
				return rev.Status.Attempt >= 2 && rev.Status.Phase == syncv1.PhaseHealthy
			})
			eventually(t, "the Application Synced again", func() bool {
				return e.application("shop").Status.Sync == syncv1.SyncStateSynced
			}, nil)
			if h := e.application("shop").Status.History; len(h) == 0 ||
				!contains(h[0].Drift, "ConfigMap "+e.ns+"/settings", tt.field, `"`+tt.manager+`"`) {
				t.Errorf("history %+v, want the newest attempt to record the hand edit it corrected", h)
			}
		})
	}
}

// TestSelfHeal_ScaleAndSetImageAreRolledBack: kubectl scale writes through
// the scale subresource and kubectl set image with a strategic merge patch;
// both are hand edits that an automatic Application rolls back.
func TestSelfHeal_ScaleAndSetImageAreRolledBack(t *testing.T) {
	tests := []struct {
		manager string
		edit    func(t *testing.T, dep *appsv1.Deployment)
		field   string
	}{
		{"kubectl-scale", func(t *testing.T, dep *appsv1.Deployment) {
			must(t, admin.SubResource("scale").Patch(t.Context(), dep, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":3}}`)),
				client.FieldOwner("kubectl-scale")))
		}, ".spec.replicas"},
		{"kubectl-set", func(t *testing.T, dep *appsv1.Deployment) {
			base := dep.DeepCopy()
			dep.Spec.Template.Spec.Containers[0].Image = "web:6.6.6"
			must(t, admin.Patch(t.Context(), dep, client.StrategicMergeFrom(base), client.FieldOwner("kubectl-set")))
		}, ".image"},
	}
	for _, tt := range tests {
		t.Run(tt.manager, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.startController(driftOptions())
			e.createApplication("shop", nil)
			name := e.publish("shop", object(t, webDeployment))
			e.waitForPhase(name, syncv1.PhaseHealthy)

			dep := &appsv1.Deployment{}
			key := client.ObjectKey{Namespace: e.ns, Name: "web"}
			must(t, admin.Get(t.Context(), key, dep))
			tt.edit(t, dep)

			eventually(t, "the hand edit rolled back", func() bool {
				live := &appsv1.Deployment{}
				must(t, admin.Get(t.Context(), key, live))
				return live.Spec.Replicas != nil && *live.Spec.Replicas == 2 && live.Spec.Template.Spec.Containers[0].Image == "web:1"
			}, func() string { return describeRevision(e.revision(name)) })
			eventually(t, "a DriftCorrected Event naming the object, the field and the manager", func() bool {
				for _, ev := range e.events("shop", syncv1.ReasonDriftCorrected) {
					if contains(ev.Note, "Deployment.apps "+e.ns+"/web", tt.field, `"`+tt.manager+`"`) {
						return true
					}
				}
				return false
			}, nil)
		})
	}
}
