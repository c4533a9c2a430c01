package diagnosis

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// crashLoop is a Deployment whose Pods crash, at one moment of the loop.
func crashLoop(state corev1.ContainerState, restarts int32, podOrder []string) *world {
	spec := corev1.PodSpec{Containers: []corev1.Container{appContainer()}}
	d, rs := unavailableDeployment(spec)
	w := newWorld().managed("apps/v1", "Deployment", d, "").replicaSets(rs...)
	for _, name := range podOrder {
		w.pods(pod(name, spec, notReady(corev1.PodRunning, corev1.ContainerStatus{
			Name: "app", RestartCount: restarts, State: state,
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}},
		})))
	}
	return w
}

func TestDiagnose_SameStateGivesTheSameBytes(t *testing.T) {
	waiting := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s"}}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	encode := func(d syncv1.Diagnosis) string {
		raw, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	first := encode(Diagnose(crashLoop(waiting, 3, []string{"web-2-a", "web-2-b"}).s))
	tests := []struct {
		name  string
		world *world
	}{
		{"the same state read again", crashLoop(waiting, 3, []string{"web-2-a", "web-2-b"})},
		{"more restarts and another back-off", crashLoop(waiting, 9, []string{"web-2-a", "web-2-b"})},
		{"the container running between two crashes", crashLoop(running, 4, []string{"web-2-a", "web-2-b"})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := encode(Diagnose(tc.world.s)); got != first {
				t.Errorf("diagnosis changed:\n%s\nwant:\n%s", got, first)
			}
			if Changed(ptr.To(Diagnose(tc.world.s)), ptr.To(Diagnose(crashLoop(waiting, 3, []string{"web-2-a"}).s))) {
				t.Error("Changed says the causes changed")
			}
		})
	}
}

func TestDiagnose_KeepsWithinTheStatusBounds(t *testing.T) {
	w := newWorld()
	for i := range MaxCauses + 5 {
		w.gone("", "v1", "ConfigMap", fmt.Sprintf("cm-%02d", i))
	}
	d := Diagnose(w.s)
	if len(d.Causes) != MaxCauses || !d.Truncated {
		t.Fatalf("%d causes, truncated %v; want %d, true", len(d.Causes), d.Truncated, MaxCauses)
	}
	if want := "ConfigMap cm-00: not found: the rollout applied it, but it no longer exists"; !slices.Equal(chain(d.Causes[0]), []string{want}) {
		t.Errorf("first cause %v", chain(d.Causes[0]))
	}
	if d.Summary != "20 causes; first: ConfigMap shop/cm-00: not found: the rollout applied it, but it no longer exists" {
		t.Errorf("summary %q", d.Summary)
	}
}

func TestChanged_OnlyWhenTheSetOfCausesChanges(t *testing.T) {
	one := Diagnose(newWorld().gone("", "v1", "ConfigMap", "a").s)
	two := Diagnose(newWorld().gone("", "v1", "ConfigMap", "a").gone("", "v1", "Secret", "b").s)
	tests := []struct {
		name          string
		before, after *syncv1.Diagnosis
		want          bool
	}{
		{"first diagnosis", nil, &one, true},
		{"same causes", &one, ptr.To(Diagnose(newWorld().gone("", "v1", "ConfigMap", "a").s)), false},
		{"a cause more", &one, &two, true},
		{"cleared", &one, nil, true},
		{"still nothing", nil, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Changed(tc.before, tc.after); got != tc.want {
				t.Errorf("Changed = %v, want %v", got, tc.want)
			}
		})
	}
	if got, want := EventMessage("api-1", &two), "Revision api-1: root cause ConfigMap shop/a: not found: the rollout applied it, but it no longer exists; 2 causes in all, see ksync diagnose"; got != want {
		t.Errorf("EventMessage = %q, want %q", got, want)
	}
}
