package revision

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// TestIgnore_FieldOfAnotherControllerIsNeitherReportedNorTouched: with an
// ignore rule naming the field another controller writes, the Application
// stays Synced and Ready, no drift or conflict is reported, and the
// controller keeps both the value and the ownership.
func TestIgnore_FieldOfAnotherControllerIsNeitherReportedNorTouched(t *testing.T) {
	rules := map[string]syncv1.IgnoreRule{
		"autoscaler scales a Deployment":   {Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}},
		"operator applies a ConfigMap key": {Kind: "ConfigMap", Name: "web", JSONPointers: []string{"/data/key"}},
	}
	for _, tt := range otherManagerWrites {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.startController(driftOptions())
			e.createApplication("shop", func(app *syncv1.Application) {
				app.Spec.IgnoreDifferences = []syncv1.IgnoreRule{rules[tt.name]}
			})
			name := e.publish("shop", object(t, tt.desired))
			e.waitForPhase(name, syncv1.PhaseHealthy)

			tt.write(t, e.ns)
			// Several drift checks (every 2s) pass; none may report or take the field.
			time.Sleep(7 * time.Second)

			app := e.application("shop")
			if c := condition(app.Status.Conditions, syncv1.ConditionReady); c.Status != "True" || app.Status.Sync != syncv1.SyncStateSynced {
				t.Errorf("Application sync %s, Ready %+v; want Synced and Ready: the field is ignored", app.Status.Sync, c)
			}
			if !tt.kept(t, e.ns) {
				t.Errorf("the value %s wrote was changed", tt.manager)
			}
			desired := object(t, tt.desired)
			if live := e.get(desired.GetAPIVersion(), desired.GetKind(), "web"); !planner.HasFieldManager(live, tt.manager) {
				t.Errorf("managedFields = %+v, want %s still owning its field", live.GetManagedFields(), tt.manager)
			}
			if rev := e.revision(name); rev.Status.Attempt != 1 {
				t.Errorf("Revision attempt %d, want 1: an ignored field started a new rollout", rev.Status.Attempt)
			}
		})
	}
}

// TestIgnore_HandEditOfAnIgnoredFieldStaysWhileTheRestIsReverted: a hand
// edit touching an ignored field and another field of the same object: self-
// heal reverts the other field and leaves the ignored one, and its manager,
// alone.
func TestIgnore_HandEditOfAnIgnoredFieldStaysWhileTheRestIsReverted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(driftOptions())
	e.createApplication("shop", func(app *syncv1.Application) {
		app.Spec.IgnoreDifferences = []syncv1.IgnoreRule{{Kind: "ConfigMap", JSONPointers: []string{"/data/color"}}}
	})
	name := e.publish("shop", object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: blue\n  size: s\n"))
	e.waitForPhase(name, syncv1.PhaseHealthy)

	cm := &corev1.ConfigMap{}
	must(t, admin.Get(t.Context(), client.ObjectKey{Namespace: e.ns, Name: "settings"}, cm))
	base := cm.DeepCopy()
	cm.Data["color"], cm.Data["size"] = "red", "xl"
	must(t, admin.Patch(t.Context(), cm, client.MergeFrom(base), client.FieldOwner("kubectl-patch")))

	eventually(t, "size reverted to s", func() bool {
		must(t, admin.Get(t.Context(), client.ObjectKey{Namespace: e.ns, Name: "settings"}, cm))
		return cm.Data["size"] == "s"
	}, func() string { return describeRevision(e.revision(name)) })
	if cm.Data["color"] != "red" {
		t.Errorf("data.color = %q, want the hand-set red: it is ignored", cm.Data["color"])
	}
	for _, ev := range e.events("shop", syncv1.ReasonDriftCorrected) {
		if contains(ev.Note, ".data.color") {
			t.Errorf("DriftCorrected Event %q took the ignored field", ev.Note)
		}
	}
	if !planner.HasFieldManager(e.get("v1", "ConfigMap", "settings"), "kubectl-patch") {
		t.Error("kubectl-patch no longer owns data.color, which is ignored")
	}
}

// TestIgnore_RuleTheAPIServerRefusesNamesTheField: the CRD refuses a rule
// that would ignore an object's identity, naming the field.
func TestIgnore_RuleTheAPIServerRefusesNamesTheField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		pointer, want string
	}{
		{"/metadata/name", "must not ignore apiVersion, kind, metadata"},
		{"spec/replicas", "spec.ignoreDifferences[0].jsonPointers[0]"},
		{"/data/a~2", "spec.ignoreDifferences[0].jsonPointers[0]"},
	}
	for _, tt := range tests {
		app := &syncv1.Application{}
		app.Namespace, app.Name = e.ns, "bad"
		app.Spec.Source.RepositoryRef.Name = "repo"
		app.Spec.IgnoreDifferences = []syncv1.IgnoreRule{{Kind: "ConfigMap", JSONPointers: []string{tt.pointer}}}
		err := admin.Create(t.Context(), app)
		if err == nil || !contains(err.Error(), tt.want) {
			t.Errorf("creating an Application ignoring %q: %v, want a refusal naming %q", tt.pointer, err, tt.want)
			_ = admin.Delete(t.Context(), app)
		}
	}
}
