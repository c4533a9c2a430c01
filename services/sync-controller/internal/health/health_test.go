package health

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func object(apiVersion, kind string, generation int64, status map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion,
		"kind":       kind,
		"metadata":   map[string]any{"name": "x", "namespace": "payments", "generation": generation},
	}}
	if status != nil {
		obj.Object["status"] = status
	}
	return obj
}

func condition(typ, status, reason string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": reason + " message"}
}

func deployment(replicas int64, status map[string]any) *unstructured.Unstructured {
	obj := object("apps/v1", "Deployment", 2, status)
	obj.Object["spec"] = map[string]any{"replicas": replicas}
	return obj
}

func TestOf_MapsKstatusAndJobConditionsToHealth(t *testing.T) {
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want syncv1.HealthState
	}{
		{"missing object", nil, syncv1.HealthMissing},
		{"ConfigMap has no status and is Healthy", object("v1", "ConfigMap", 0, nil), syncv1.HealthHealthy},
		{"available Deployment", deployment(2, map[string]any{
			"observedGeneration": int64(2), "replicas": int64(2), "updatedReplicas": int64(2),
			"readyReplicas": int64(2), "availableReplicas": int64(2),
			"conditions": []any{condition("Available", "True", "MinimumReplicasAvailable")},
		}), syncv1.HealthHealthy},
		{"Deployment still rolling out", deployment(2, map[string]any{
			"observedGeneration": int64(2), "replicas": int64(2), "updatedReplicas": int64(1),
		}), syncv1.HealthProgressing},
		{"Deployment whose generation was not observed", deployment(2, map[string]any{
			"observedGeneration": int64(1),
		}), syncv1.HealthProgressing},
		{"Deployment past its progress deadline", deployment(2, map[string]any{
			"observedGeneration": int64(2), "replicas": int64(2), "updatedReplicas": int64(1),
			"conditions": []any{condition("Progressing", "False", "ProgressDeadlineExceeded")},
		}), syncv1.HealthDegraded},
		{"started Job is not yet Healthy", object("batch/v1", "Job", 1, map[string]any{
			"startTime": "2026-01-01T00:00:00Z", "active": int64(1),
		}), syncv1.HealthProgressing},
		{"complete Job", object("batch/v1", "Job", 1, map[string]any{
			"conditions": []any{condition("Complete", "True", "")},
		}), syncv1.HealthHealthy},
		{"failed Job", object("batch/v1", "Job", 1, map[string]any{
			"conditions": []any{condition("Failed", "True", "BackoffLimitExceeded")},
		}), syncv1.HealthDegraded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Of(tt.obj); got.State != tt.want {
				t.Errorf("Of() = %s (%s), want %s", got.State, got.Message, tt.want)
			}
		})
	}
}

func TestHook_FinishesOnlyWhenTheHookRanToTheEnd(t *testing.T) {
	tests := []struct {
		name        string
		obj         *unstructured.Unstructured
		want        syncv1.HookState
		wantMessage string
	}{
		{"Job not started", object("batch/v1", "Job", 1, nil), syncv1.HookRunning, ""},
		{"Job running", object("batch/v1", "Job", 1, map[string]any{"startTime": "2026-01-01T00:00:00Z", "active": int64(1)}), syncv1.HookRunning, ""},
		{"Job complete", object("batch/v1", "Job", 1, map[string]any{
			"conditions": []any{condition("Complete", "True", "")},
		}), syncv1.HookSucceeded, ""},
		{"Job failed names the reason", object("batch/v1", "Job", 1, map[string]any{
			"conditions": []any{condition("Failed", "True", "DeadlineExceeded")},
		}), syncv1.HookFailed, "DeadlineExceeded"},
		{"Job with a false Failed condition still runs", object("batch/v1", "Job", 1, map[string]any{
			"conditions": []any{condition("Failed", "False", "")},
		}), syncv1.HookRunning, ""},
		{"Pod succeeded", object("v1", "Pod", 0, map[string]any{"phase": "Succeeded"}), syncv1.HookSucceeded, ""},
		{"Pod failed", object("v1", "Pod", 0, map[string]any{"phase": "Failed"}), syncv1.HookFailed, ""},
		{"Pod running", object("v1", "Pod", 0, map[string]any{"phase": "Running"}), syncv1.HookRunning, ""},
		{"ConfigMap hook succeeds once it exists", object("v1", "ConfigMap", 0, nil), syncv1.HookSucceeded, ""},
		{"custom resource reporting Stalled fails", object("example.com/v1", "Widget", 1, map[string]any{
			"observedGeneration": int64(1),
			"conditions":         []any{condition("Stalled", "True", "BadConfig")},
		}), syncv1.HookFailed, ""},
		{"custom resource reconciling still runs", object("example.com/v1", "Widget", 1, map[string]any{
			"observedGeneration": int64(1),
			"conditions":         []any{condition("Reconciling", "True", "Working")},
		}), syncv1.HookRunning, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Hook(tt.obj)
			if got.State != tt.want {
				t.Errorf("Hook() = %s (%s), want %s", got.State, got.Message, tt.want)
			}
			if !strings.Contains(got.Message, tt.wantMessage) {
				t.Errorf("Hook() message = %q, want it to mention %q", got.Message, tt.wantMessage)
			}
		})
	}
}

func TestAggregate_ReportsTheWorstState(t *testing.T) {
	tests := []struct {
		name   string
		states []syncv1.HealthState
		want   syncv1.HealthState
	}{
		{"nothing is Healthy", nil, syncv1.HealthHealthy},
		{"all Healthy", []syncv1.HealthState{syncv1.HealthHealthy, syncv1.HealthHealthy}, syncv1.HealthHealthy},
		{"one Progressing", []syncv1.HealthState{syncv1.HealthHealthy, syncv1.HealthProgressing}, syncv1.HealthProgressing},
		{"Unknown counts as Progressing", []syncv1.HealthState{syncv1.HealthUnknown}, syncv1.HealthProgressing},
		{"Missing beats Progressing", []syncv1.HealthState{syncv1.HealthProgressing, syncv1.HealthMissing}, syncv1.HealthMissing},
		{"Degraded beats everything", []syncv1.HealthState{syncv1.HealthMissing, syncv1.HealthDegraded, syncv1.HealthHealthy}, syncv1.HealthDegraded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Aggregate(tt.states...); got != tt.want {
				t.Errorf("Aggregate(%v) = %s, want %s", tt.states, got, tt.want)
			}
		})
	}
}
