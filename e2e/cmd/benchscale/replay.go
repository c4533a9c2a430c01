package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

// A replay sends, from one client with the services stopped, the requests
// the two services make to create and roll out each Application: the
// Application, its Revision and desired-state Secret, the Revision's and
// the Application's status writes, the dry-runs and applies of its objects,
// the reads of the Secret and the Deployment, and the lifecycle Events. It
// is the API server's share of the design, with no controller waiting on
// anything: what the create phase could take if the services cost nothing.
// lean leaves out the write-ahead checkpoint of both statuses, to show what
// one status write per object per rollout would save; objectsOnly sends
// only the dry-runs and applies of the objects, the floor of a plan that
// dry-runs every object.
type replay struct {
	name        string
	namespace   string
	lean        bool
	objectsOnly bool
}

var replays = []replay{
	{name: "the design's requests, replayed", namespace: "replay"},
	{name: "the same without the write-ahead checkpoint", namespace: "replay-lean", lean: true},
	{name: "only the dry-runs and applies", namespace: "replay-objects", objectsOnly: true},
}

// replayResult is what one replay took: until its last request, until
// kube-controller-manager observed its Deployments, and kube-apiserver's
// CPU meanwhile.
type replayResult struct {
	replay
	took, observed, serverCPU time.Duration
	requests                  int
}

// run replays n Applications with workers in parallel: as admin what the
// services write, and as the namespace's deployer, as the sync-controller
// does, what an Application applies and reads.
func (rp replay) run(ctx context.Context, cp *controlplane.ControlPlane, kube kubernetes.Interface, n, workers int) (replayResult, error) {
	res := replayResult{replay: rp}
	c, err := bareClient(cp.Config)
	if err != nil {
		return res, err
	}
	as, err := bareClient(cp.Impersonate("system:serviceaccount:" + rp.namespace + ":deployer"))
	if err != nil {
		return res, err
	}
	before, err := controlPlaneCPU()
	if err != nil {
		return res, err
	}
	start := time.Now()
	counts := make([]int, n)
	err = parallel(n, workers, func(i int) error {
		k, err := rp.app(ctx, c, as, kube, i)
		counts[i] = k
		return err
	})
	if err != nil {
		return res, fmt.Errorf("%s: %w", rp.name, err)
	}
	res.took = time.Since(start)
	observed, err := deploymentsObserved(ctx, c, rp.namespace, n)
	if err != nil {
		return res, err
	}
	res.observed = res.took + observed
	after, err := controlPlaneCPU()
	if err != nil {
		return res, err
	}
	res.serverCPU = after[apiServer] - before[apiServer]
	for _, k := range counts {
		res.requests += k
	}
	return res, nil
}

// app sends the requests of app i in the order the services send them,
// applying with as, and returns how many it sent.
func (rp replay) app(ctx context.Context, c, as client.Client, kube kubernetes.Interface, i int) (int, error) {
	name := appName(i)
	sent := 0
	do := func(err error) error {
		sent++
		return err
	}
	var objs []*unstructured.Unstructured
	for _, doc := range appDocuments(i, 1) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return sent, err
		}
		u.SetNamespace(rp.namespace)
		u.SetAnnotations(map[string]string{syncv1.OwnedByAnnotation: rp.namespace + "/" + name})
		objs = append(objs, u)
	}
	data, digest, err := desiredstate.Encode(objs)
	if err != nil {
		return sent, err
	}
	if rp.objectsOnly {
		for _, o := range objs {
			if err := do(as.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner(syncv1.FieldManagerSync), client.DryRunAll)); err != nil {
				return sent, err
			}
		}
		for _, o := range objs {
			if err := do(as.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner(syncv1.FieldManagerSync))); err != nil {
				return sent, err
			}
		}
		return sent, nil
	}
	revName := desiredstate.RevisionName(name, digest)
	commit := strings.Repeat("5", 40)
	now := metav1.Now()

	// The user creates the Application.
	app := &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: rp.namespace, Name: name},
		Spec: syncv1.ApplicationSpec{
			Source:             syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "bench"}, Path: "apps/" + name},
			ServiceAccountName: "deployer",
			Sync:               syncv1.SyncPolicy{Automatic: true},
		},
	}
	if err := do(c.Create(ctx, app)); err != nil {
		return sent, err
	}

	// The source-controller renders it.
	rev := &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: rp.namespace, Name: revName, Labels: map[string]string{syncv1.ApplicationLabel: name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: syncv1.GroupVersion.String(), Kind: "Application", Name: name, UID: app.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: syncv1.RevisionSpec{
			ApplicationName: name,
			DesiredState:    syncv1.DesiredStateRef{SecretName: revName, Digest: digest, Objects: int32(len(objs))},
		},
	}
	if err := do(c.Create(ctx, rev)); err != nil {
		return sent, err
	}
	if err := do(c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: rp.namespace, Name: revName, Labels: map[string]string{syncv1.ApplicationLabel: name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: syncv1.GroupVersion.String(), Kind: "Revision", Name: revName, UID: rev.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Type: syncv1.DesiredStateSecretType,
		Data: map[string][]byte{desiredstate.DataKey: data},
	})); err != nil {
		return sent, err
	}
	rendered := condition(syncv1.ConditionRendered, "True", syncv1.ReasonSucceeded, "rendered from commit "+commit, now)
	if err := do(ssa.ApplyStatus(ctx, c, rev, syncv1.FieldManagerSource, map[string]any{
		"source":     map[string]any{"commit": commit, "renderedAt": now},
		"conditions": []any{rendered},
	})); err != nil {
		return sent, err
	}
	if err := do(ssa.ApplyStatus(ctx, c, app, syncv1.FieldManagerSource, map[string]any{
		"desiredRevision": revName, "sourceCommit": commit,
		"conditions": []any{condition(syncv1.ConditionRendered, "True", syncv1.ReasonSucceeded,
			fmt.Sprintf("rendered 4 objects from commit %s as Revision %s", commit[:12], revName), now)},
	})); err != nil {
		return sent, err
	}
	if err := do(event(ctx, kube, app, syncv1.ReasonSucceeded, "Render", "rendered Revision "+revName)); err != nil {
		return sent, err
	}

	// The sync-controller plans it: reads the desired state, dry-runs.
	if err := do(c.Get(ctx, client.ObjectKey{Namespace: rp.namespace, Name: revName}, &corev1.Secret{})); err != nil {
		return sent, err
	}
	var entries []any
	var inventory []any
	for _, o := range objs {
		dry := o.DeepCopy()
		if err := do(as.Apply(ctx, client.ApplyConfigurationFromUnstructured(dry), client.FieldOwner(syncv1.FieldManagerSync), client.DryRunAll)); err != nil {
			return sent, err
		}
		entries = append(entries, map[string]any{
			"action": "create", "kind": o.GetKind(), "name": o.GetName(), "namespace": o.GetNamespace(),
			"version": "v1", "diff": createDiff(dry),
		})
		group := ""
		if o.GetKind() == "Deployment" {
			group = "apps"
		}
		inventory = append(inventory, fmt.Sprintf("%s_%s_%s_%s_v1", o.GetNamespace(), o.GetName(), group, o.GetKind()))
	}
	planDigest := "sha256:" + strings.Repeat("0", 64)
	planned := condition(syncv1.ConditionPlanned, "True", syncv1.ReasonSucceeded, "plan "+planDigest+": 4 to create, 0 to update, 0 to delete, 0 unchanged", now)
	revStatus := func(phase, health string, conds ...any) map[string]any {
		return map[string]any{
			"attempt": 1, "observedGeneration": 1, "phase": phase, "health": health,
			"plan": map[string]any{
				"digest": planDigest, "entries": entries, "plannedAt": now,
				"summary": map[string]any{"create": 4, "update": 0, "delete": 0, "unchanged": 0},
			},
			"inventory":  map[string]any{"entries": inventory},
			"waves":      []any{map[string]any{"wave": 0, "state": phase, "objects": 4}},
			"conditions": append([]any{planned}, conds...),
		}
	}
	history := func(result string) []any {
		return []any{map[string]any{"revision": revName, "planDigest": planDigest, "result": result, "sourceCommit": commit, "startedAt": now}}
	}
	appStatus := func(phase, health, sync, message string, deployed string) map[string]any {
		s := map[string]any{
			"observedGeneration": 1, "phase": phase, "health": health, "sync": sync, "history": history(phase),
			"conditions": []any{
				condition(syncv1.ConditionReady, "False", syncv1.ReasonProgressing, message, now),
				condition(syncv1.ConditionSynced, "False", syncv1.ReasonProgressing, message, now),
				condition(syncv1.ConditionHealthy, "Unknown", syncv1.ReasonProgressing, message, now),
			},
		}
		if deployed != "" {
			s["deployedRevision"], s["lastKnownGoodRevision"] = deployed, deployed
		}
		return s
	}

	// It records the attempt and the wave Applying before applying.
	if !rp.lean {
		if err := do(ssa.ApplyStatus(ctx, c, rev, syncv1.FieldManagerSync, revStatus("Applying", "Progressing",
			condition(syncv1.ConditionRolloutComplete, "False", syncv1.ReasonProgressing, "attempt 1: applying wave 0 (4 object(s)), then waiting for it to be Healthy", now)))); err != nil {
			return sent, err
		}
		if err := do(ssa.ApplyStatus(ctx, c, app, syncv1.FieldManagerSync, appStatus("Applying", "Progressing", "OutOfSync", "rolling out Revision "+revName, ""))); err != nil {
			return sent, err
		}
	}
	if err := do(event(ctx, kube, app, syncv1.ReasonProgressing, "Rollout", "rolling out Revision "+revName)); err != nil {
		return sent, err
	}
	for _, o := range objs {
		if err := do(as.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner(syncv1.FieldManagerSync))); err != nil {
			return sent, err
		}
	}

	// It assesses health and records the outcome.
	if err := do(as.Get(ctx, client.ObjectKey{Namespace: rp.namespace, Name: name}, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}})); err != nil {
		return sent, err
	}
	if err := do(ssa.ApplyStatus(ctx, c, rev, syncv1.FieldManagerSync, revStatus("Healthy", "Healthy",
		condition(syncv1.ConditionRolloutComplete, "True", syncv1.ReasonSucceeded, "attempt 1: every group is Healthy", now),
		condition(syncv1.ConditionHealthy, "True", syncv1.ReasonSucceeded, "every applied object is Healthy", now)))); err != nil {
		return sent, err
	}
	if err := do(ssa.ApplyStatus(ctx, c, app, syncv1.FieldManagerSync, appStatus("Healthy", "Healthy", "Synced", "Revision "+revName+" is deployed and Healthy", revName))); err != nil {
		return sent, err
	}
	return sent, do(event(ctx, kube, app, syncv1.ReasonSucceeded, "AssessHealth", "Revision "+revName+" is Healthy"))
}

func condition(typ, status, reason, message string, at metav1.Time) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": message,
		"lastTransitionTime": at.UTC().Format(time.RFC3339), "observedGeneration": 1}
}

// createDiff is a plan entry's diff for creating the object a dry-run
// returned, as long as the sync-controller's.
func createDiff(dry *unstructured.Unstructured) string {
	obj := dry.DeepCopy()
	unstructured.RemoveNestedField(obj.Object, "metadata", "managedFields")
	unstructured.RemoveNestedField(obj.Object, "metadata", "uid")
	unstructured.RemoveNestedField(obj.Object, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(obj.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(obj.Object, "metadata", "generation")
	unstructured.RemoveNestedField(obj.Object, "status")
	out, _ := yaml.Marshal(obj.Object)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "--- live\n+++ desired\n@@ -0,0 +1,%d @@\n", len(lines))
	for _, l := range lines {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

func event(ctx context.Context, kube kubernetes.Interface, app *syncv1.Application, reason, action, note string) error {
	_, err := kube.EventsV1().Events(app.Namespace).Create(ctx, &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", app.Name, time.Now().UnixNano())},
		EventTime:           metav1.NowMicro(),
		ReportingController: syncv1.FieldManagerSync,
		ReportingInstance:   syncv1.FieldManagerSync + "-bench",
		Action:              action,
		Reason:              reason,
		Type:                corev1.EventTypeNormal,
		Note:                note,
		Regarding: corev1.ObjectReference{
			APIVersion: syncv1.GroupVersion.String(), Kind: "Application",
			Namespace: app.Namespace, Name: app.Name, UID: app.UID,
		},
	}, metav1.CreateOptions{})
	return err
}
