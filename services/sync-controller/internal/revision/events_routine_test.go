package revision

import (
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// A routine rollout emits one Event, its outcome, which says what the
// attempt did; each Event is a write the API server serves.
func TestEvents_ARoutineRolloutEmitsOnlyItsOutcome(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	name := e.publish("shop",
		object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: fast}\n"),
		object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limits}\ndata: {max: \"3\"}\n"))
	e.waitForPhase(name, syncv1.PhaseHealthy)

	var outcome []eventsv1.Event
	eventually(t, "the Succeeded Event", func() bool {
		outcome = e.events("shop", syncv1.ReasonSucceeded)
		return len(outcome) == 1
	}, nil)
	if !contains(outcome[0].Note, "Revision "+name, "attempt 1", "2 to create", "Healthy") {
		t.Errorf("outcome Event says %q, want the Revision, the attempt, what it did and its health", outcome[0].Note)
	}
	var all eventsv1.EventList
	must(t, admin.List(t.Context(), &all, client.InNamespace(e.ns)))
	for _, ev := range all.Items {
		if ev.Regarding.Kind == "Application" && ev.UID != outcome[0].UID {
			t.Errorf("a routine rollout also emitted %s %s: %q", ev.Type, ev.Reason, ev.Note)
		}
	}
}
