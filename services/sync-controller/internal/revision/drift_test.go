package revision

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func driftOptions() Options {
	o := defaultOptions()
	o.DriftResyncInterval = 2 * time.Second
	return o
}

func TestDrift_DeletedObjectOfAWatchedKindIsReappliedAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// No resync: the controller may watch ConfigMaps, so it hears of the deletion.
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	name := e.publish("shop", configMap(t, "settings"), object(t, shortLivedMigrateJob))
	e.waitForPhase(name, syncv1.PhaseHealthy)

	// The hook deleted by its TTL is not drift: the Revision stays at attempt 1.
	time.Sleep(3 * pollInterval)
	if rev := e.revision(name); rev.Status.Attempt != 1 {
		t.Fatalf("attempt = %d after a hook's TTL deleted it, want 1: a finished hook is not drift", rev.Status.Attempt)
	}

	must(t, admin.Delete(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "settings"}}))
	e.waitForRevision(name, "a second attempt Healthy", func(rev *syncv1.Revision) bool {
		return rev.Status.Attempt == 2 && rev.Status.Phase == syncv1.PhaseHealthy
	})
	if e.get("v1", "ConfigMap", "settings") == nil {
		t.Error("the deleted ConfigMap was not applied again")
	}
	app := e.application("shop")
	if app.Status.Sync != syncv1.SyncStateSynced {
		t.Errorf("sync = %q, want Synced after the correction", app.Status.Sync)
	}
	if h := app.Status.History; len(h) != 2 || h[0].Revision != name || h[1].Revision != name {
		t.Errorf("history = %+v, want two attempts at %s", h, name)
	}
	eventually(t, "an Event naming the drifted ConfigMap", func() bool {
		for _, ev := range e.events("shop", syncv1.ReasonProgressing) {
			if contains(ev.Note, "drifted", "ConfigMap "+e.ns+"/settings") {
				return true
			}
		}
		return false
	}, nil)
}

func TestDrift_FieldTakenOverByAnotherManagerIsShownNotForced(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(driftOptions())
	e.createApplication("shop", nil)
	name := e.publish("shop", configMap(t, "settings"))
	e.waitForPhase(name, syncv1.PhaseHealthy)

	other := configMap(t, "settings")
	other.SetNamespace(e.ns)
	must(t, unstructuredSet(other, "changed", "data", "key"))
	must(t, admin.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(other), client.FieldOwner("other-team"), client.ForceOwnership))

	eventually(t, "Application OutOfSync with reason ApplyConflict", func() bool {
		app := e.application("shop")
		c := condition(app.Status.Conditions, syncv1.ConditionSynced)
		return app.Status.Sync == syncv1.SyncStateOutOfSync && c.Reason == syncv1.ReasonApplyConflict && contains(c.Message, "other-team")
	}, func() string { return describeRevision(e.revision(name)) })
	if rev := e.revision(name); rev.Status.Attempt != 1 {
		t.Errorf("attempt = %d, want no new attempt forcing the field back", rev.Status.Attempt)
	}
	live := &corev1.ConfigMap{}
	must(t, admin.Get(t.Context(), client.ObjectKey{Namespace: e.ns, Name: "settings"}, live))
	if live.Data["key"] != "changed" {
		t.Errorf("data.key = %q, want the other manager's value kept", live.Data["key"])
	}
}

func TestDrift_KindTheControllerMayNotWatchIsCheckedEveryResync(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startControllerAs(e.restrictedController(), driftOptions())
	e.createApplication("shop", nil)
	name := e.publish("shop", configMap(t, "settings"))
	e.waitForPhase(name, syncv1.PhaseHealthy)

	must(t, admin.Delete(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "settings"}}))
	e.waitForRevision(name, "a second attempt Healthy", func(rev *syncv1.Revision) bool {
		return rev.Status.Attempt == 2 && rev.Status.Phase == syncv1.PhaseHealthy
	})
	if e.get("v1", "ConfigMap", "settings") == nil {
		t.Error("the deleted ConfigMap was not applied again")
	}
}
