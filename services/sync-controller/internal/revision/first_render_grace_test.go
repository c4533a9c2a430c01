package revision

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

const waitingForRender = "waiting for the source-controller to render a desired Revision"

// A new Application whose first Revision arrives within firstRenderGrace
// is first recorded rolling that Revision out: its status never says it
// waits for the source-controller, a write every new Application made.
func TestStatus_ANewApplicationRenderedSoonIsFirstRecordedWithItsRevision(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := watchKinds(t, e.ns, syncv1.GroupVersion.WithKind("Application"))
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	// Long enough for the controller to have seen the Application.
	time.Sleep(2 * time.Second)
	name := e.publish("shop", configMap(t, "settings"))
	e.waitForPhase(name, syncv1.PhaseHealthy)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, o := range rec.obs {
		if o.name == "shop" && strings.Contains(syncedMessage(o.obj), waitingForRender) {
			t.Fatalf("Application recorded %q before its first Revision arrived; want its first record to be the rollout", syncedMessage(o.obj))
		}
	}
}

// An Application the source-controller does not render says so once
// firstRenderGrace has passed since its creation.
func TestStatus_ANewApplicationNotRenderedSaysItWaitsForTheSourceController(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	created := e.createApplication("shop", nil).CreationTimestamp.Time

	var synced syncv1.Application
	eventually(t, "the Application saying it waits for the source-controller", func() bool {
		synced = *e.application("shop")
		c := condition(synced.Status.Conditions, syncv1.ConditionSynced)
		return c.Message == waitingForRender
	}, func() string { return condition(synced.Status.Conditions, syncv1.ConditionSynced).Message })
	// docs/api.md promises 10 s; condition times have a resolution of one
	// second.
	recorded := condition(synced.Status.Conditions, syncv1.ConditionSynced).LastTransitionTime.Time
	if earliest := created.Add(9 * time.Second); recorded.Before(earliest) {
		t.Errorf("Synced recorded at %s, %s after creation; want no sooner than 10s after",
			recorded.Format(time.RFC3339), recorded.Sub(created))
	}
	if c := condition(synced.Status.Conditions, syncv1.ConditionReady); c.Message != waitingForRender {
		t.Errorf("Ready message = %q, want %q", c.Message, waitingForRender)
	}
}

// syncedMessage is the message of an Application's Synced condition.
func syncedMessage(app *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(app.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == syncv1.ConditionSynced {
			msg, _ := m["message"].(string)
			return msg
		}
	}
	return ""
}
