package scenarios_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestE2E_CrashLoopingDeploymentIsDiagnosed: a Deployment whose container
// crash-loops (a kwok Stage holds its Pod so, OOMKilled) fails its rollout
// with HealthFailure; the sync-controller writes the causal chain down to
// the Pod into status.diagnosis, ksync diagnose prints it and exits 1, and
// one Diagnosed Warning Event names the root cause; ksync graph shows the
// Deployment down to the Pod.
func TestE2E_CrashLoopingDeploymentIsDiagnosed(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-diagnosis")
	repository(t, ns, "platform", map[string]string{
		".ksync.yaml": `metadata: {name: api}
spec:
  source: {path: apps/api}
  serviceAccountName: deployer
  sync: {automatic: true}
`,
		"apps/api/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 1
  progressDeadlineSeconds: 5
  selector: {matchLabels: {app: api}}
  template:
    metadata:
      labels: {app: api, stage.diagnosis.kuvryn.io: crash-loop}
      annotations: {stage.diagnosis.kuvryn.io/exit-code: "137", stage.diagnosis.kuvryn.io/reason: OOMKilled}
    spec:
      containers: [{name: app, image: "ghcr.io/acme/api:1.0.0"}]
`,
	})
	const rootCause = `container "app" is crash-looping (CrashLoopBackOff): last exit code 137 (OOMKilled)`
	var rev syncv1.Revision
	eventually(t, 4*time.Minute, "the Revision Failed with a diagnosis", func() bool {
		app := &syncv1.Application{}
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "api"}, app); err != nil || app.Status.DesiredRevision == "" {
			return false
		}
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: app.Status.DesiredRevision}, &rev)
		return err == nil && rev.Status.Phase == syncv1.PhaseFailed && rev.Status.Diagnosis != nil && len(rev.Status.Diagnosis.Causes) > 0
	})
	chain := rev.Status.Diagnosis.Causes[0].Chain
	kinds := []string{}
	for _, l := range chain {
		kinds = append(kinds, l.Kind)
	}
	if strings.Join(kinds, ",") != "Deployment,ReplicaSet,Pod" || !strings.HasSuffix(chain[len(chain)-1].Message, rootCause) {
		t.Fatalf("chain %+v, want Deployment -> ReplicaSet -> Pod ending in %q", chain, rootCause)
	}

	stdout, stderr, err := ksync(t, env.CP.Kubeconfig, "diagnose", "api", "-n", ns)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("ksync diagnose: %v, want exit code 1\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	t.Logf("ksync diagnose api -n %s:\n%s%s", ns, stdout, stderr)
	for _, want := range []string{"Failure:      RolloutComplete HealthFailure:", "Deployment.apps " + ns + "/api", "└─ ReplicaSet.apps " + ns + "/api-", rootCause} {
		if !strings.Contains(stdout, want) {
			t.Errorf("ksync diagnose does not print %q:\n%s", want, stdout)
		}
	}

	// The live graph, read as admin, reaches the crash-looping Pod.
	tree, stderr, err := ksync(t, env.CP.Kubeconfig, "graph", "api", "-n", ns)
	if err != nil || !containsAll(tree, "deployment.apps/api", "owns replicaset.apps/api-", "owns pod/api-") {
		t.Errorf("ksync graph: %v\nstdout:\n%s\nstderr:\n%s", err, tree, stderr)
	}

	diagnosed := func() []eventsv1.Event {
		var list eventsv1.EventList
		if err := env.Client.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		var out []eventsv1.Event
		for _, e := range list.Items {
			if e.Reason == syncv1.ReasonDiagnosed {
				out = append(out, e)
			}
		}
		return out
	}
	eventually(t, time.Minute, "a Diagnosed Event", func() bool { return len(diagnosed()) > 0 })
	// Re-checks while the Deployment stays unhealthy find the same causes
	// and emit nothing more.
	time.Sleep(20 * time.Second)
	events := diagnosed()
	if len(events) != 1 || events[0].Type != "Warning" || !strings.Contains(events[0].Note, rootCause) {
		t.Fatalf("Diagnosed Events %+v, want one Warning naming %q", events, rootCause)
	}
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", env.CP.Kubeconfig, "get", "events", "-n", ns,
			"--field-selector", "reason=Diagnosed", "-o", "custom-columns=TYPE:.type,REASON:.reason,MESSAGE:.message").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Warning") || !strings.Contains(string(out), rootCause) {
			t.Errorf("kubectl get events: %v\n%s", err, out)
		}
		t.Logf("kubectl get events -n %s --field-selector reason=Diagnosed:\n%s", ns, out)
	}
}
