package revision

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestApproval_HandEditUntouchedUntilApproved: a manual Application whose
// live object was edited by hand writes nothing to it, its resourceVersion
// and managedFields included, while drift detection plans the correction,
// while it waits for approval and while a stale approval is refused; the
// plan shows the take-over, and once approved the rollout takes the fields
// back from the hand-edit managers and finishes.
func TestApproval_HandEditUntouchedUntilApproved(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		manifest string
		// kind is how Kuvryn Sync names the object's kind.
		kind string
		// afterHook puts a pre-sync hook before the object, so that the
		// rollout applies it in a later reconcile than the one that planned.
		afterHook bool
		// edit changes the live object as kubectl would: a value the
		// desired state sets, and a label it does not declare.
		edit func(t *testing.T, e *testEnv, live *unstructured.Unstructured)
		// settled reports whether the object's own controllers are done
		// with the edit, so that any later write is Kuvryn Sync's.
		settled  func(live *unstructured.Unstructured) bool
		wantDiff []string
		// restored reports whether the desired state is back.
		restored func(live *unstructured.Unstructured) bool
		managers []string
	}{
		{
			name:     "Deployment",
			manifest: webDeployment,
			kind:     "Deployment.apps",
			edit: func(t *testing.T, e *testEnv, live *unstructured.Unstructured) {
				must(t, admin.SubResource("scale").Patch(t.Context(), live, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":3}}`)),
					client.FieldOwner("kubectl")))
				must(t, admin.Patch(t.Context(), e.get("apps/v1", "Deployment", "web"), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"db"}}}`)),
					client.FieldOwner("kubectl-label")))
			},
			settled: func(live *unstructured.Unstructured) bool {
				generation, _, _ := unstructured.NestedInt64(live.Object, "status", "observedGeneration")
				ready, _, _ := unstructured.NestedInt64(live.Object, "status", "readyReplicas")
				updated, _, _ := unstructured.NestedInt64(live.Object, "status", "updatedReplicas")
				replicas, _, _ := unstructured.NestedInt64(live.Object, "status", "replicas")
				return generation == live.GetGeneration() && ready == 3 && updated == 3 && replicas == 3
			},
			wantDiff: []string{"replicas: 3", "replicas: 2", "removed when applied: .metadata.labels.team"},
			restored: func(live *unstructured.Unstructured) bool {
				replicas, _, _ := unstructured.NestedInt64(live.Object, "spec", "replicas")
				_, labelled := live.GetLabels()["team"]
				return replicas == 2 && !labelled
			},
			managers: []string{"kubectl", "kubectl-label"},
		},
		{
			name:     "ConfigMap",
			manifest: webConfigMap,
			kind:     "ConfigMap",
			edit: func(t *testing.T, e *testEnv, live *unstructured.Unstructured) {
				must(t, admin.Patch(t.Context(), live, client.RawPatch(types.MergePatchType, []byte(`{"data":{"key":"red"}}`)),
					client.FieldOwner("kubectl-edit")))
				must(t, admin.Patch(t.Context(), e.get("v1", "ConfigMap", "web"), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"tier":"db"}}}`)),
					client.FieldOwner("kubectl-label")))
			},
			settled:  func(*unstructured.Unstructured) bool { return true },
			wantDiff: []string{"red", "value", "removed when applied: .metadata.labels.tier"},
			restored: webConfigMapRestored,
			managers: []string{"kubectl-edit", "kubectl-label"},
		},
		{
			name:      "ConfigMap after a pre-sync hook",
			manifest:  webConfigMap,
			kind:      "ConfigMap",
			afterHook: true,
			edit: func(t *testing.T, e *testEnv, live *unstructured.Unstructured) {
				must(t, admin.Patch(t.Context(), live, client.RawPatch(types.MergePatchType, []byte(`{"data":{"key":"red"},"metadata":{"labels":{"tier":"db"}}}`)),
					client.FieldOwner("kubectl-patch")))
			},
			settled:  func(*unstructured.Unstructured) bool { return true },
			wantDiff: []string{"red", "value", "removed when applied: .metadata.labels.tier"},
			restored: webConfigMapRestored,
			managers: []string{"kubectl-patch"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			obj := object(t, tt.manifest)
			// The edit is made, and left to settle, while the controller is
			// stopped, so that every write after it would be Kuvryn Sync's.
			objs := []*unstructured.Unstructured{obj}
			if tt.afterHook {
				objs = append(objs, object(t, shortLivedMigrateJob))
			}
			name, first := e.rolledOutManuallyThenStopped(objs...)
			live := func() *unstructured.Unstructured { return e.get(obj.GetAPIVersion(), obj.GetKind(), "web") }
			tt.edit(t, e, live())
			var before *unstructured.Unstructured
			eventually(t, "the edited object settled", func() bool {
				prev := live()
				time.Sleep(time.Second)
				before = live()
				return tt.settled(before) && prev.GetResourceVersion() == before.GetResourceVersion()
			}, func() string {
				status, _, _ := unstructured.NestedMap(before.Object, "status")
				return fmt.Sprintf("generation %d, resourceVersion %s, status %v", before.GetGeneration(), before.GetResourceVersion(), status)
			})
			e.startController(driftOptions())

			rev := e.waitForRevision(name, "the drift planned for approval", func(rev *syncv1.Revision) bool {
				return rev.Status.Phase == syncv1.PhaseAwaitingApproval && rev.Status.Plan.Digest != first
			})
			p := rev.Status.Plan
			// A stale approval plans again on every look; drift checks
			// run every 2s. None of it may write to the object.
			e.approve("shop", name, "bob", first)
			e.waitForRevision(name, "the approval of the old plan found stale", func(rev *syncv1.Revision) bool {
				return condition(rev.Status.Conditions, syncv1.ConditionAwaitingApproval).Reason == syncv1.ReasonApprovalStale
			})
			time.Sleep(5 * time.Second)
			after := live()
			if after.GetResourceVersion() != before.GetResourceVersion() || !reflect.DeepEqual(after.GetManagedFields(), before.GetManagedFields()) {
				t.Fatalf("the object was written before approval: resourceVersion %s, then %s; managedFields\n%v\nthen\n%v",
					before.GetResourceVersion(), after.GetResourceVersion(), managers(before), managers(after))
			}
			if rev := e.revision(name); rev.Status.Attempt != 1 || rev.Status.Plan.Digest != p.Digest {
				t.Fatalf("attempt %d, plan %s; want attempt 1 still waiting, with the plan %s unchanged", rev.Status.Attempt, rev.Status.Plan.Digest, p.Digest)
			}
			i := slices.IndexFunc(p.Entries, func(pe syncv1.PlanEntry) bool { return pe.Kind == obj.GetKind() && pe.Name == "web" })
			if p.Summary.Update != 1 || i < 0 || p.Entries[i].Action != syncv1.ActionUpdate || p.Entries[i].Force || !contains(p.Entries[i].Diff, tt.wantDiff...) {
				t.Errorf("plan %+v, want one update, of the %s, without force, whose diff shows %q", p, obj.GetKind(), tt.wantDiff)
			}
			for _, m := range tt.managers {
				if !contains(rev.Status.Drift, tt.kind+" "+e.ns+"/web", `"`+m+`"`) {
					t.Errorf("status.drift %q, want it to name the object and field manager %q", rev.Status.Drift, m)
				}
			}

			e.approve("shop", name, "bob", p.Digest)
			e.waitForRevision(name, "the approved correction Healthy", func(rev *syncv1.Revision) bool {
				return rev.Status.Attempt == 2 && rev.Status.Phase == syncv1.PhaseHealthy
			})
			done := live()
			if !tt.restored(done) {
				t.Errorf("%s after the approved rollout: %v, want the desired state back", obj.GetKind(), done.Object)
			}
			for _, f := range done.GetManagedFields() {
				for _, m := range tt.managers {
					if f.Manager == m && f.Subresource != "status" {
						t.Errorf("field manager %q still owns %s of the %s after the approved rollout", m, f.FieldsV1.String(), obj.GetKind())
					}
				}
			}
			if rev := e.revision(name); rev.Status.Approval == nil || rev.Status.Approval.Digest != p.Digest {
				t.Errorf("approval %+v, want bob's of %s", rev.Status.Approval, p.Digest)
			}
			eventually(t, "a DriftCorrected Event naming the managers and the approved plan", func() bool {
				for _, ev := range e.events("shop", syncv1.ReasonDriftCorrected) {
					if contains(ev.Note, tt.kind+" "+e.ns+"/web", p.Digest) && contains(ev.Note, tt.managers...) {
						return true
					}
				}
				return false
			}, nil)
		})
	}
}

const webConfigMap = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  key: value\n"

// webConfigMapRestored reports whether live is webConfigMap again, without
// the label tier set by hand.
func webConfigMapRestored(live *unstructured.Unstructured) bool {
	key, _, _ := unstructured.NestedString(live.Object, "data", "key")
	_, labelled := live.GetLabels()["tier"]
	return key == "value" && !labelled
}

// rolledOutManuallyThenStopped rolls objs out as a manual Application
// "shop", approved by alice, with drift checks every 2s, and stops the
// controller. It returns the Revision and the digest alice approved.
func (e *testEnv) rolledOutManuallyThenStopped(objs ...*unstructured.Unstructured) (name, digest string) {
	e.t.Helper()
	stop := e.startController(driftOptions())
	e.createApplication("shop", func(app *syncv1.Application) { app.Spec.Sync.Automatic = false })
	name = e.publish("shop", objs...)
	digest = e.waitForPhase(name, syncv1.PhaseAwaitingApproval).Status.Plan.Digest
	e.approve("shop", name, "alice", digest)
	e.waitForPhase(name, syncv1.PhaseHealthy)
	stop()
	return name, digest
}

// managers lists who owns what of obj, for a failure message.
func managers(obj *unstructured.Unstructured) []string {
	var out []string
	for _, f := range obj.GetManagedFields() {
		out = append(out, fmt.Sprintf("%s/%s/%s at %v: %s", f.Manager, f.Operation, f.Subresource, f.Time, f.FieldsV1))
	}
	return out
}
