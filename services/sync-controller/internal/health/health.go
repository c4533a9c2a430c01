// Package health turns live objects into the health Kuvryn Sync reports:
// kstatus for every kind, with Jobs judged by their Complete and Failed
// conditions, and hooks judged by whether they ran to the end.
package health

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

var (
	jobKind = schema.GroupKind{Group: batchv1.GroupName, Kind: "Job"}
	podKind = schema.GroupKind{Group: corev1.GroupName, Kind: "Pod"}
)

// Result is the health of one object and why.
type Result struct {
	State   syncv1.HealthState
	Message string
}

// Of returns the health of a live object: Healthy when kstatus says
// Current, Degraded when it says Failed, Progressing otherwise. kstatus
// calls a started Job Current, but a Job that is part of a rollout is done
// only once it completes, so Jobs are Healthy only when Complete. A nil
// object is Missing.
func Of(obj *unstructured.Unstructured) Result {
	if obj == nil {
		return Result{State: syncv1.HealthMissing, Message: "object not found"}
	}
	if obj.GroupVersionKind().GroupKind() == jobKind {
		switch state, msg := jobState(obj); state {
		case syncv1.HookSucceeded:
			return Result{State: syncv1.HealthHealthy, Message: msg}
		case syncv1.HookFailed:
			return Result{State: syncv1.HealthDegraded, Message: msg}
		default:
			return Result{State: syncv1.HealthProgressing, Message: msg}
		}
	}
	res, err := status.Compute(obj)
	if err != nil {
		return Result{State: syncv1.HealthProgressing, Message: fmt.Sprintf("status not readable yet: %v", err)}
	}
	switch res.Status {
	case status.CurrentStatus:
		return Result{State: syncv1.HealthHealthy, Message: res.Message}
	case status.FailedStatus:
		return Result{State: syncv1.HealthDegraded, Message: res.Message}
	default:
		return Result{State: syncv1.HealthProgressing, Message: res.Message}
	}
}

// HookResult is where a hook object is in its run.
type HookResult struct {
	// State is Running, Succeeded or Failed.
	State   syncv1.HookState
	Message string
}

// Hook returns whether a hook object has finished: a Job by its Complete or
// Failed condition, a Pod by its phase, and any other kind by kstatus
// (Current is success, Failed or Stalled is failure).
func Hook(obj *unstructured.Unstructured) HookResult {
	switch obj.GroupVersionKind().GroupKind() {
	case jobKind:
		state, msg := jobState(obj)
		return HookResult{State: state, Message: msg}
	case podKind:
		phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		switch corev1.PodPhase(phase) {
		case corev1.PodSucceeded:
			return HookResult{State: syncv1.HookSucceeded, Message: "Pod succeeded"}
		case corev1.PodFailed:
			return HookResult{State: syncv1.HookFailed, Message: "Pod failed"}
		default:
			return HookResult{State: syncv1.HookRunning, Message: fmt.Sprintf("Pod is %s", orUnknown(phase))}
		}
	}
	res, err := status.Compute(obj)
	if err != nil {
		return HookResult{State: syncv1.HookRunning, Message: fmt.Sprintf("status not readable yet: %v", err)}
	}
	switch res.Status {
	case status.CurrentStatus:
		return HookResult{State: syncv1.HookSucceeded, Message: res.Message}
	case status.FailedStatus:
		return HookResult{State: syncv1.HookFailed, Message: res.Message}
	}
	for _, c := range res.Conditions {
		if c.Type == status.ConditionStalled && c.Status == corev1.ConditionTrue {
			return HookResult{State: syncv1.HookFailed, Message: c.Message}
		}
	}
	return HookResult{State: syncv1.HookRunning, Message: res.Message}
}

// jobState reads a Job's terminal conditions.
func jobState(obj *unstructured.Unstructured) (syncv1.HookState, string) {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if !ok || m["status"] != string(corev1.ConditionTrue) {
			continue
		}
		message, _ := m["message"].(string)
		switch m["type"] {
		case string(batchv1.JobComplete):
			return syncv1.HookSucceeded, "Job completed"
		case string(batchv1.JobFailed):
			reason, _ := m["reason"].(string)
			return syncv1.HookFailed, fmt.Sprintf("Job failed: %s", joinNonEmpty(reason, message))
		}
	}
	return syncv1.HookRunning, "Job has not completed"
}

// Aggregate is the health of many objects: Degraded if any is Degraded,
// else Missing if any is Missing, else Progressing if any is Progressing,
// else Healthy. No objects are Healthy.
func Aggregate(states ...syncv1.HealthState) syncv1.HealthState {
	rank := map[syncv1.HealthState]int{
		syncv1.HealthHealthy:     0,
		syncv1.HealthProgressing: 1,
		syncv1.HealthUnknown:     1,
		syncv1.HealthMissing:     2,
		syncv1.HealthDegraded:    3,
	}
	worst := syncv1.HealthHealthy
	for _, s := range states {
		if rank[s] > rank[worst] {
			worst = s
		}
	}
	if worst == syncv1.HealthUnknown {
		return syncv1.HealthProgressing
	}
	return worst
}

func orUnknown(s string) string {
	if s == "" {
		return "Unknown"
	}
	return s
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	default:
		return a + ": " + b
	}
}
