package scenarios_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/e2e/harness"
)

// TestE2E_NotifyControllerDownAtATransitionDeliversItOnceBack: the
// notify-controller is gone when a manual Application reaches
// AwaitingApproval, and gone again when its approved rollout becomes
// Healthy; each time the replica that leads next delivers the transition it
// missed, once. Gone is a SIGKILL with a restart after the transition, or,
// with two replicas, a SIGKILL of the leader while the standby is stalled
// (SIGSTOP), so that it takes the lease over only after the transition.
func TestE2E_NotifyControllerDownAtATransitionDeliversItOnceBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		// down takes the leading notify-controller away and returns the
		// function that has a replica lead again.
		down func(t *testing.T) (back func())
	}{
		{name: "restart", down: killNotifyController},
		{name: "failover", down: failNotifyControllerOver},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := namespace(t, "e2e-notify-"+tc.name)
			path := "/durable-" + tc.name
			subscribe(t, ns, path)
			repository(t, ns, "platform", map[string]string{"apps/payments/deployment.yaml": deployment("payments", "payments:1.0")})

			back := tc.down(t)
			createNotifiedApplication(t, ns)
			rev := waitRevisionPhase(t, ns, "payments", syncv1.PhaseAwaitingApproval)
			back()
			awaiting := waitDelivered(t, ns, path, "AwaitingApproval")
			if awaiting.Revision != rev.Name {
				t.Fatalf("AwaitingApproval names Revision %s, want %s", awaiting.Revision, rev.Name)
			}

			back = tc.down(t)
			args := strings.Fields(awaiting.ApproveCommand)
			if out, errOut, err := ksync(t, userKubeconfig(t, "dana", ns), append(args[1:], "--yes")...); err != nil {
				t.Fatalf("%s: %v\n%s%s", awaiting.ApproveCommand, err, out, errOut)
			}
			waitRevisionPhase(t, ns, "payments", syncv1.PhaseHealthy)
			if got := received(t, path); slices.Contains(got, "Healthy") {
				t.Fatalf("Healthy delivered while no notify-controller led: %v", got)
			}
			back()
			waitDelivered(t, ns, path, "Healthy")

			if got := strings.Join(received(t, path), ","); got != "AwaitingApproval,Healthy" {
				t.Errorf("sink got %s, want AwaitingApproval and Healthy, each once", got)
			}
		})
	}
}

// killNotifyController SIGKILLs the notify-controller; back starts it again.
func killNotifyController(t *testing.T) func() {
	t.Helper()
	services.Notify.Kill()
	return func() {
		t.Helper()
		restarted, err := env.Restart(t.Context(), services.Notify)
		if err != nil {
			t.Fatal(err)
		}
		services.Notify = restarted
		waitLogged(t, restarted, acquired)
	}
}

// failNotifyControllerOver starts a standby notify-controller, stalls it,
// and SIGKILLs the leader; back lets the standby run, and take the lease
// over.
func failNotifyControllerOver(t *testing.T) func() {
	t.Helper()
	leader := services.Notify
	waitLogged(t, leader, acquired)
	standby := startStandby(t, "notify-controller", leader.Args()...)
	if ok, err := standby.Logged(acquired); err != nil || ok {
		t.Fatalf("the standby notify-controller leads beside the leader (%v)", err)
	}
	if err := standby.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = standby.Resume() })
	leader.Kill()
	return func() {
		t.Helper()
		if err := standby.Resume(); err != nil {
			t.Fatal(err)
		}
		waitLogged(t, standby, acquired)
		services.Notify = standby
	}
}

// subscribe creates the webhook sink audit, at path on the suite's sink.
func subscribe(t *testing.T, ns, path string) {
	t.Helper()
	if err := env.Client.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "audit-webhook"},
		StringData: map[string]string{"url": services.Sink.URL(path), "hmacKey": harness.SinkKey},
	}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(t.Context(), &syncv1.NotificationSink{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "audit"},
		Spec:       syncv1.NotificationSinkSpec{Type: syncv1.SinkWebhook, SecretRef: syncv1.LocalObjectReference{Name: "audit-webhook"}},
	}); err != nil {
		t.Fatal(err)
	}
}

// createNotifiedApplication creates the manual Application payments,
// subscribing audit to AwaitingApproval and Healthy.
func createNotifiedApplication(t *testing.T, ns string) {
	t.Helper()
	if err := env.Client.Create(t.Context(), &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "payments"},
		Spec: syncv1.ApplicationSpec{
			Source:             syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "platform"}, Path: "apps/payments"},
			ServiceAccountName: "deployer",
			Notifications: []syncv1.NotificationSubscription{{
				SinkRef: syncv1.LocalObjectReference{Name: "audit"},
				Events:  []syncv1.NotificationEvent{syncv1.NotificationAwaitingApproval, syncv1.NotificationHealthy},
			}},
		},
	}); err != nil {
		t.Fatal(err)
	}
}

// waitRevisionPhase waits until the Application's desired Revision is in phase.
func waitRevisionPhase(t *testing.T, ns, app string, phase syncv1.RevisionPhase) *syncv1.Revision {
	t.Helper()
	rev := &syncv1.Revision{}
	eventually(t, 3*time.Minute, "Application "+app+"'s Revision "+string(phase), func() bool {
		a := &syncv1.Application{}
		if env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: app}, a) != nil || a.Status.DesiredRevision == "" {
			return false
		}
		return env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: a.Status.DesiredRevision}, rev) == nil && rev.Status.Phase == phase
	})
	return rev
}

// waitDelivered waits until the sink got event at path and the Application
// payments records it as delivered.
func waitDelivered(t *testing.T, ns, path, event string) notification {
	t.Helper()
	n := waitForNotification(t, path, event, "")
	eventually(t, time.Minute, event+" recorded as delivered", func() bool {
		app := &syncv1.Application{}
		if env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "payments"}, app) != nil {
			return false
		}
		return slices.ContainsFunc(app.Status.DeliveredNotifications, func(d syncv1.DeliveredNotification) bool {
			return string(d.Event) == event && d.Revision == n.Revision
		})
	})
	return n
}

// received are the events the sink got at path, in order.
func received(t *testing.T, path string) []string {
	t.Helper()
	var events []string
	for _, n := range receivedNotifications(t, path) {
		events = append(events, n.Event)
	}
	return events
}

func receivedNotifications(t *testing.T, path string) []notification {
	t.Helper()
	var out []notification
	for _, r := range services.Sink.Requests() {
		if r.Path != path {
			continue
		}
		var n notification
		if err := json.Unmarshal(r.Body, &n); err != nil {
			t.Fatal(err)
		}
		if !r.SignatureOK {
			t.Errorf("%s notification at %s not signed with the sink's key", n.Event, path)
		}
		out = append(out, n)
	}
	return out
}
