package revision

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func TestApply_ConflictWithAnotherFieldManagerFailsInsteadOfForcing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	// Another team already owns data.mode of the ConfigMap, with another value.
	other := object(t, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: slow
`)
	other.SetNamespace(e.ns)
	must(t, admin.Apply(ctx, client.ApplyConfigurationFromUnstructured(other), client.FieldOwner("other-team")))

	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	name := e.publish("shop", object(t, settingsConfigMap))

	rev := e.waitForPhase(name, syncv1.PhaseFailed)
	c := condition(rev.Status.Conditions, syncv1.ConditionPlanned)
	if c.Status != "False" || c.Reason != syncv1.ReasonApplyConflict || !contains(c.Message, `"other-team"`, ".data.mode", "ConfigMap "+e.ns+"/settings") {
		t.Errorf("Planned = %+v, want False, ApplyConflict, naming field manager other-team, the field and the object", c)
	}
	app := e.application("shop")
	if c := condition(app.Status.Conditions, syncv1.ConditionReady); c.Reason != syncv1.ReasonApplyConflict {
		t.Errorf("Application Ready = %+v, want reason ApplyConflict", c)
	}
	eventually(t, "an ApplyConflict Warning Event", func() bool {
		evs := e.events("shop", syncv1.ReasonApplyConflict)
		return len(evs) == 1 && contains(evs[0].Note, "other-team")
	}, nil)

	live := &corev1.ConfigMap{}
	must(t, admin.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "settings"}, live))
	if live.Data["mode"] != "slow" {
		t.Errorf("ConfigMap data.mode = %q, want the other team's value kept", live.Data["mode"])
	}
	for _, f := range live.ManagedFields {
		if f.Manager == syncv1.FieldManagerSync {
			t.Errorf("kuvryn-sync took fields of the ConfigMap: %+v", f)
		}
	}
}

func TestApply_ConflictAppearingDuringTheRolloutFailsTheWave(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	late := object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: late\n  annotations:\n    sync.kuvryn.io/sync-wave: \"1\"\ndata:\n  mode: fast\n")
	name := e.publish("shop", e.gatedDeployment("web"), late)
	e.waitForRevision(name, "wave 0 applied and waiting", func(rev *syncv1.Revision) bool {
		return len(rev.Status.Waves) == 2 && rev.Status.Waves[0].State == syncv1.WaveApplying
	})

	// Someone else claims the ConfigMap of wave 1 after it was planned as a create.
	other := object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: late\ndata:\n  mode: slow\n")
	other.SetNamespace(e.ns)
	must(t, admin.Apply(ctx, client.ApplyConfigurationFromUnstructured(other), client.FieldOwner("other-team")))
	e.openGate()

	rev := e.waitForPhase(name, syncv1.PhaseFailed)
	c := condition(rev.Status.Conditions, syncv1.ConditionRolloutComplete)
	if c.Reason != syncv1.ReasonApplyConflict || !contains(c.Message, "wave 1", `"other-team"`, ".data.mode") {
		t.Errorf("RolloutComplete = %+v, want ApplyConflict in wave 1 naming other-team and the field", c)
	}
	if w := rev.Status.Waves; w[0].State != syncv1.WaveHealthy || w[1].State != syncv1.WavePending {
		t.Errorf("waves = %+v, want wave 0 Healthy and wave 1 not applied", w)
	}
	live := &corev1.ConfigMap{}
	must(t, admin.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "late"}, live))
	if live.Data["mode"] != "slow" {
		t.Errorf("ConfigMap late data.mode = %q, want the other team's value kept", live.Data["mode"])
	}
}
