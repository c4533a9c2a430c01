package scenarios_test

import (
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/e2e/harness"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

// acquired is what client-go's leader election logs once a replica leads.
const acquired = "Successfully acquired lease"

// takeover bounds how long a standby may take to lead after the leader is
// SIGKILLed: the dead leader's lease runs out within LeaseDuration of its
// last renewal, and the standby retries every RetryPeriod; the rest is
// slack for a loaded machine.
const takeover = harness.LeaseDuration + 2*harness.RetryPeriod + 5*time.Second

// TestE2E_SyncControllerLeaderKilledMidRolloutStandbyFinishesIt: two
// sync-controller replicas elect a leader; the leader is SIGKILLed while a
// Revision with a pre-sync hook and three waves waits in its first wave.
// The standby takes the lease within the lease duration and finishes the
// same attempt: every wave Healthy, each hook Job created once (counted
// from a watch of every Job creation in the namespace).
func TestE2E_SyncControllerLeaderKilledMidRolloutStandbyFinishesIt(t *testing.T) {
	ns := namespace(t, "e2e-failover-sync")
	gate := "gate.e2e.kuvryn.io/" + ns
	clientset, err := kubernetes.NewForConfig(env.CP.Config)
	if err != nil {
		t.Fatal(err)
	}
	jobs := watchJobCreations(t, clientset, ns)
	leader := syncController
	waitLogged(t, leader, acquired)
	webhookFlags, err := env.EnableWebhooks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	standby := startStandby(t, "sync-controller", append(harness.LeaderFlags(), webhookFlags...)...)
	if err := controlplane.WaitForWebhooks(t.Context(), env.Client, "default", 2*time.Minute); err != nil {
		t.Fatal(err)
	}

	repository(t, ns, "platform", map[string]string{
		".ksync.yaml": `metadata: {name: shop}
spec:
  source: {path: app}
  serviceAccountName: deployer
  sync: {automatic: true}
`,
		"app/migrate.yaml": hookJob("migrate", "pre-sync"),
		"app/smoke.yaml":   hookJob("smoke", "post-sync"),
		// Wave 1 cannot schedule until the test opens the gate, so the
		// rollout waits there for the kill.
		"app/api.yaml":    waveDeployment("api", "1", gate),
		"app/worker.yaml": waveDeployment("worker", "2", ""),
		"app/ready.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: ready
  annotations: {sync.kuvryn.io/sync-wave: "3"}
data: {rolledOut: "true"}
`,
	})
	rev := waitInFirstWave(t, ns, "shop", "migrate", 3)

	took := killLeader(t, "sync-controller", leader, standby)
	t.Logf("the standby sync-controller leads %s after the leader's SIGKILL (lease %s)", took.Round(100*time.Millisecond), harness.LeaseDuration)
	syncController = standby
	openGate(t, gate)

	if healthy := waitHealthy(t, ns, "shop", ""); healthy != rev.Name {
		t.Fatalf("deployed %s, want the Revision %s that was rolling out", healthy, rev.Name)
	}
	rev = *get(t, &syncv1.Revision{}, ns, rev.Name)
	if rev.Status.Attempt != 1 {
		t.Errorf("attempt %d, want the standby to finish attempt 1", rev.Status.Attempt)
	}
	for _, w := range rev.Status.Waves {
		if w.State != syncv1.WaveHealthy {
			t.Errorf("wave %d is %s, want Healthy", w.Wave, w.State)
		}
	}
	if got := hookState(&rev, "smoke"); got != syncv1.HookSucceeded {
		t.Errorf("post-sync hook smoke is %q, want Succeeded", got)
	}
	created := jobs.created()
	for _, hook := range []string{"migrate", "smoke"} {
		if n := created[hook]; n != 1 {
			t.Errorf("hook Job %s was created %d times, want once", hook, n)
		}
	}
}

// waitInFirstWave waits until app's desired Revision has run its pre-sync
// hook and has waves waves, the first Applying, and returns it.
func waitInFirstWave(t *testing.T, ns, app, hook string, waves int) syncv1.Revision {
	t.Helper()
	var rev syncv1.Revision
	eventually(t, 3*time.Minute, fmt.Sprintf("%s's pre-sync hook %s Succeeded and wave 1 of %d Applying", app, hook, waves), func() bool {
		var a syncv1.Application
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: app}, &a); err != nil || a.Status.DesiredRevision == "" {
			return false
		}
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: a.Status.DesiredRevision}, &rev); err != nil {
			return false
		}
		return hookState(&rev, hook) == syncv1.HookSucceeded &&
			len(rev.Status.Waves) == waves && rev.Status.Waves[0].State == syncv1.WaveApplying
	})
	return rev
}

// startStandby starts a second replica of the service, which must not lead
// while the first renews its lease, and waits until it is ready.
func startStandby(t *testing.T, name string, args ...string) *harness.Process {
	t.Helper()
	standby, err := env.StartService(t.Context(), name, args...)
	if err != nil {
		t.Fatal(err)
	}
	if err := standby.WaitReady(t.Context(), 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	return standby
}

// killLeader SIGKILLs the leading replica and returns how long the standby
// took to take its Lease over, failing beyond takeover.
func killLeader(t *testing.T, name string, leader, standby *harness.Process) time.Duration {
	t.Helper()
	if ok, err := standby.Logged(acquired); err != nil || ok {
		t.Fatalf("the standby %s leads before the kill (%v): two leaders", name, err)
	}
	before := lease(t, name)
	killed := time.Now()
	leader.Kill()
	eventually(t, takeover, "the standby "+name+" to take the lease over", func() bool {
		ok, err := standby.Logged(acquired)
		return err == nil && ok
	})
	took := time.Since(killed)
	after := lease(t, name)
	if after.Spec.HolderIdentity == nil || before.Spec.HolderIdentity == nil || *after.Spec.HolderIdentity == *before.Spec.HolderIdentity {
		t.Fatalf("Lease %s holder %v, before the kill %v: not taken over", after.Name, after.Spec.HolderIdentity, before.Spec.HolderIdentity)
	}
	return took
}

func lease(t *testing.T, service string) *coordinationv1.Lease {
	t.Helper()
	return get(t, &coordinationv1.Lease{}, harness.SystemNamespace, manager.InstallName(service))
}

// waitLogged waits until the process logs substr.
func waitLogged(t *testing.T, p *harness.Process, substr string) {
	t.Helper()
	eventually(t, takeover+time.Minute, p.Name+" to log "+substr, func() bool {
		ok, err := p.Logged(substr)
		return err == nil && ok
	})
}

// waveDeployment is a Deployment in the given sync wave; with a gate, its
// Pods schedule only once the test opens it.
func waveDeployment(name, wave, gate string) string {
	selector := ""
	if gate != "" {
		selector = `
      nodeSelector: {"` + gate + `": open}`
	}
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
  annotations: {sync.kuvryn.io/sync-wave: "` + wave + `"}
spec:
  replicas: 1
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + `}}
    spec:` + selector + `
      containers: [{name: ` + name + `, image: "` + name + `:1.0"}]
`
}
