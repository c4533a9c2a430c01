package scenarios_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/e2e/harness"
)

// TestE2E_Chaos_FailingSinkGetsThreeAttemptsThenNotificationFailed: while
// the webhook sink answers 500, a rollout's Healthy notification reaches it
// exactly three times and the Application gets a NotificationFailed Event
// naming the Revision, the attempts and the answer; the rollout itself is
// unaffected. Once the sink is healed, the next commit's Healthy is
// delivered once.
func TestE2E_Chaos_FailingSinkGetsThreeAttemptsThenNotificationFailed(t *testing.T) {
	sink := services.Sink
	ns := namespace(t, "e2e-chaos-sink")
	// The suite shares the sink: a path of its own tells this test's requests apart.
	path := "/chaos-sink/" + ns
	subscribe(t, ns, path)
	sink.FailWith(http.StatusInternalServerError)
	t.Cleanup(sink.Heal)

	gitRepo := repository(t, ns, "platform", map[string]string{"apps/api/deployment.yaml": deployment("api", "api:1.0")})
	if err := env.Client.Create(t.Context(), &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"},
		Spec: syncv1.ApplicationSpec{
			Source:             syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "platform"}, Path: "apps/api"},
			ServiceAccountName: "deployer",
			Sync:               syncv1.SyncPolicy{Automatic: true},
			Notifications: []syncv1.NotificationSubscription{{
				SinkRef: syncv1.LocalObjectReference{Name: "audit"},
				Events:  []syncv1.NotificationEvent{syncv1.NotificationHealthy},
			}},
		},
	}); err != nil {
		t.Fatal(err)
	}
	first := waitHealthy(t, ns, "api", "")

	var failed string
	eventually(t, time.Minute, "a NotificationFailed Event naming Revision "+first, func() bool {
		var list eventsv1.EventList
		if err := env.Client.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			return false
		}
		for _, e := range list.Items {
			if e.Reason == syncv1.ReasonNotificationFailed && e.Regarding.Name == "api" && strings.Contains(e.Note, first) {
				failed = e.Note
				return true
			}
		}
		return false
	})
	t.Logf("NotificationFailed: %s", failed)
	if !containsAll(failed, "3 attempt(s)", "HTTP 500") {
		t.Errorf("NotificationFailed %q does not say 3 attempts and HTTP 500", failed)
	}
	// The Event follows the last attempt: all three have reached the sink.
	attempts := healthyDeliveries(t, sink, path, first)
	if len(attempts) != 3 {
		t.Fatalf("sink got %d attempts of Revision %s's Healthy, want 3", len(attempts), first)
	}
	for i := 1; i < len(attempts); i++ {
		t.Logf("attempt %d came %s after attempt %d", i+1, attempts[i].At.Sub(attempts[i-1].At).Round(10*time.Millisecond), i)
	}
	for _, a := range attempts {
		if !a.SignatureOK || a.Status != http.StatusInternalServerError {
			t.Errorf("attempt at %s: signature ok %v, answered %d; want signed, answered 500", a.At.Format(time.StampMilli), a.SignatureOK, a.Status)
		}
	}
	if app := get(t, &syncv1.Application{}, ns, "api"); app.Status.Sync != syncv1.SyncStateSynced || app.Status.Health != syncv1.HealthHealthy {
		t.Errorf("Application api %s/%s after the failed notification, want Synced/Healthy", app.Status.Sync, app.Status.Health)
	}

	sink.Heal()
	if _, err := gitRepo.Commit(map[string]string{"apps/api/deployment.yaml": deployment("api", "api:1.1")}, "api 1.1"); err != nil {
		t.Fatal(err)
	}
	second := waitHealthy(t, ns, "api", first)
	eventually(t, time.Minute, "Revision "+second+"'s Healthy at the sink", func() bool {
		return len(healthyDeliveries(t, sink, path, second)) > 0
	})
	// A retry would come 2 s after a failed attempt: wait past it before counting.
	time.Sleep(5 * time.Second)
	if got := healthyDeliveries(t, sink, path, second); len(got) != 1 || got[0].Status != http.StatusNoContent {
		t.Errorf("sink got %d deliveries of Revision %s's Healthy, want one accepted", len(got), second)
	}
	if got := healthyDeliveries(t, sink, path, first); len(got) != 3 {
		t.Errorf("sink got %d attempts of Revision %s's Healthy after healing, want still 3", len(got), first)
	}
}

// healthyDeliveries returns the requests to path carrying the Healthy
// notification of Revision rev, in order of arrival.
func healthyDeliveries(t *testing.T, sink *harness.Sink, path, rev string) []harness.SinkRequest {
	t.Helper()
	var out []harness.SinkRequest
	for _, r := range sink.Requests() {
		var n notification
		if r.Path != path {
			continue
		}
		if err := json.Unmarshal(r.Body, &n); err != nil {
			t.Fatal(err)
		}
		if n.Event == string(syncv1.NotificationHealthy) && n.Revision == rev {
			out = append(out, r)
		}
	}
	return out
}
