package revision

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func configMap(t *testing.T, name string) *unstructured.Unstructured {
	return object(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  key: value\n", name))
}

func TestPrune_DeletesObjectsThatLeftDesiredState(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	first := e.publish("shop", configMap(t, "keep"), configMap(t, "old"))
	e.waitForPhase(first, syncv1.PhaseHealthy)
	if e.get("v1", "ConfigMap", "old") == nil {
		t.Fatal("ConfigMap old was not applied by the first Revision")
	}

	second := e.publish("shop", configMap(t, "keep"))
	rev := e.waitForPhase(second, syncv1.PhaseHealthy)

	if rev.Status.Plan == nil || rev.Status.Plan.Summary.Delete != 1 {
		t.Errorf("plan = %+v, want one delete", rev.Status.Plan)
	}
	eventually(t, "ConfigMap old deleted", func() bool {
		obj := e.get("v1", "ConfigMap", "old")
		return obj == nil || obj.GetDeletionTimestamp() != nil
	}, nil)
	if e.get("v1", "ConfigMap", "keep") == nil {
		t.Error("ConfigMap keep, still desired, was deleted")
	}
	eventually(t, "a Pruned Event naming ConfigMap old", func() bool {
		evs := e.events("shop", syncv1.ReasonPruned)
		return len(evs) == 1 && contains(evs[0].Note, "ConfigMap "+e.ns+"/old")
	}, nil)
	app := e.application("shop")
	if app.Status.DeployedRevision != second || len(app.Status.History) != 2 || app.Status.History[1].Revision != first {
		t.Errorf("deployed %q, history %+v; want %s deployed after %s", app.Status.DeployedRevision, app.Status.History, second, first)
	}
}

func TestPrune_DisabledKeepsObjectsAndWarnsOncePerAttempt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", func(app *syncv1.Application) {
		app.Spec.Sync.Prune = new(bool)
	})
	first := e.publish("shop", configMap(t, "keep"), configMap(t, "old-1"), configMap(t, "old-2"))
	e.waitForPhase(first, syncv1.PhaseHealthy)

	second := e.publish("shop", configMap(t, "keep"))
	rev := e.waitForPhase(second, syncv1.PhaseHealthy)

	if rev.Status.Plan == nil || rev.Status.Plan.Summary.Delete != 0 {
		t.Errorf("plan = %+v, want no deletes with prune disabled", rev.Status.Plan)
	}
	for _, name := range []string{"old-1", "old-2"} {
		if obj := e.get("v1", "ConfigMap", name); obj == nil || obj.GetDeletionTimestamp() != nil {
			t.Errorf("ConfigMap %s was pruned although spec.sync.prune is false", name)
		}
	}
	eventually(t, "a PruneSkipped Warning Event naming both kept ConfigMaps", func() bool {
		evs := e.events("shop", syncv1.ReasonPruneSkipped)
		return len(evs) == 1 && evs[0].Type == "Warning" &&
			contains(evs[0].Note, "ConfigMap "+e.ns+"/old-1", "ConfigMap "+e.ns+"/old-2")
	}, nil)

	// Later reconciles of the same attempt do not warn again.
	app := e.application("shop")
	app.Annotations = map[string]string{"example.com/touched": "yes"}
	must(t, admin.Update(t.Context(), app))
	time.Sleep(3 * pollInterval)
	if n := occurrences(e.events("shop", syncv1.ReasonPruneSkipped)); n != 1 {
		t.Errorf("PruneSkipped happened %d times, want once per attempt", n)
	}
	if c := condition(e.revision(second).Status.Conditions, syncv1.ConditionRolloutComplete); c.Status != "True" {
		t.Errorf("RolloutComplete = %+v, want True", c)
	}
}

func TestPrune_NamesAtMostFiveKeptObjects(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", func(app *syncv1.Application) {
		app.Spec.Sync.Prune = new(bool)
	})
	objs := []*unstructured.Unstructured{configMap(t, "keep")}
	for i := range 7 {
		objs = append(objs, configMap(t, fmt.Sprintf("old-%d", i)))
	}
	e.waitForPhase(e.publish("shop", objs...), syncv1.PhaseHealthy)
	e.waitForPhase(e.publish("shop", configMap(t, "keep")), syncv1.PhaseHealthy)

	eventually(t, "a PruneSkipped Event naming five objects and counting the rest", func() bool {
		evs := e.events("shop", syncv1.ReasonPruneSkipped)
		return len(evs) == 1 && contains(evs[0].Note, "kept", "and 2 more")
	}, nil)
}
