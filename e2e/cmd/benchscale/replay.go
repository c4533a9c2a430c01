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
// Each replay lists which of the optional requests it sends.
type replay struct {
	name      string
	namespace string
	// revisionCheckpoint and applicationCheckpoint are the write-ahead
	// writes of each status before the applies.
	revisionCheckpoint, applicationCheckpoint bool
	// everyEvent sends the Render and Rollout Events as well as the
	// outcome's; healthRead reads the Deployment before the outcome.
	everyEvent, healthRead bool
	// objectsOnly sends only the dry-runs and applies of the objects.
	objectsOnly bool
}

var replays = []replay{
	{name: "the design's requests, replayed", namespace: "replay",
		revisionCheckpoint: true, applicationCheckpoint: true, everyEvent: true, healthRead: true},
	// What leaving out the write-ahead checkpoint would save.
	{name: "the same without the write-ahead checkpoint", namespace: "replay-lean",
		everyEvent: true, healthRead: true},
	// Only what DESIGN.md and the guide cannot do without: a rollout
	// resumes from the Revision's checkpoint, and prune knows from it what
	// may exist; one lifecycle Event per rollout; health could come from a
	// watch.
	{name: "the fewest the design allows", namespace: "replay-fewest",
		revisionCheckpoint: true},
	// The floor of a plan that dry-runs every object.
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
	var sent requests
	objs, err := rp.objects(i)
	if err != nil {
		return 0, err
	}
	if rp.objectsOnly {
		if _, err := sent.applyAll(ctx, as, objs, client.DryRunAll); err != nil {
			return int(sent), err
		}
		_, err := sent.applyAll(ctx, as, objs)
		return int(sent), err
	}
	r, err := sent.render(ctx, c, kube, rp, appName(i), objs)
	if err != nil {
		return int(sent), err
	}
	return int(sent), sent.rollout(ctx, c, as, kube, rp, r, objs)
}

// objects are app i's objects in the replay's namespace, annotated as the
// sync-controller annotates what it applies.
func (rp replay) objects(i int) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, doc := range appDocuments(i, 1) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return nil, err
		}
		u.SetNamespace(rp.namespace)
		u.SetAnnotations(map[string]string{syncv1.OwnedByAnnotation: rp.namespace + "/" + appName(i)})
		objs = append(objs, u)
	}
	return objs, nil
}

// requests counts the requests an Application's replay sends.
type requests int

func (r *requests) do(err error) error {
	*r++
	return err
}

// applyAll server-side-applies every object as the sync-controller does,
// with opts (a dry-run, for a plan), and returns what the API server
// answered for each.
func (r *requests) applyAll(ctx context.Context, as client.Client, objs []*unstructured.Unstructured, opts ...client.ApplyOption) ([]*unstructured.Unstructured, error) {
	opts = append(opts, client.FieldOwner(syncv1.FieldManagerSync))
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		applied := o.DeepCopy()
		if err := r.do(as.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied), opts...)); err != nil {
			return nil, err
		}
		out = append(out, applied)
	}
	return out, nil
}

// rendered is what the source-controller's half of a replay leaves for the
// sync-controller's.
type rendered struct {
	app    *syncv1.Application
	rev    *syncv1.Revision
	commit string
	now    metav1.Time
}

// render sends what the user and the source-controller send for one
// Application: its create, its Revision's and desired-state Secret's, the
// render's status writes and, if rp.everyEvent, its Event.
func (r *requests) render(ctx context.Context, c client.Client, kube kubernetes.Interface, rp replay, name string, objs []*unstructured.Unstructured) (rendered, error) {
	namespace := rp.namespace
	out := rendered{commit: strings.Repeat("5", 40), now: metav1.Now()}
	data, digest, err := desiredstate.Encode(objs)
	if err != nil {
		return out, err
	}
	revName := desiredstate.RevisionName(name, digest)
	out.app = &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: syncv1.ApplicationSpec{
			Source:             syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "bench"}, Path: "apps/" + name},
			ServiceAccountName: "deployer",
			Sync:               syncv1.SyncPolicy{Automatic: true},
		},
	}
	if err := r.do(c.Create(ctx, out.app)); err != nil {
		return out, err
	}
	out.rev = &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: revName, Labels: map[string]string{syncv1.ApplicationLabel: name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(out.app, syncv1.GroupVersion.WithKind("Application"))},
		},
		Spec: syncv1.RevisionSpec{
			ApplicationName: name,
			DesiredState:    syncv1.DesiredStateRef{SecretName: revName, Digest: digest, Objects: int32(len(objs))},
		},
	}
	if err := r.do(c.Create(ctx, out.rev)); err != nil {
		return out, err
	}
	if err := r.do(c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: revName, Labels: map[string]string{syncv1.ApplicationLabel: name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(out.rev, syncv1.GroupVersion.WithKind("Revision"))},
		},
		Type: syncv1.DesiredStateSecretType,
		Data: map[string][]byte{desiredstate.DataKey: data},
	})); err != nil {
		return out, err
	}
	done := condition(syncv1.ConditionRendered, "True", syncv1.ReasonSucceeded, "rendered from commit "+out.commit, out.now)
	if err := r.do(ssa.ApplyStatus(ctx, c, out.rev, syncv1.FieldManagerSource, map[string]any{
		"source":     map[string]any{"commit": out.commit, "renderedAt": out.now},
		"conditions": []any{done},
	})); err != nil {
		return out, err
	}
	if err := r.do(ssa.ApplyStatus(ctx, c, out.app, syncv1.FieldManagerSource, map[string]any{
		"desiredRevision": revName, "sourceCommit": out.commit,
		"conditions": []any{condition(syncv1.ConditionRendered, "True", syncv1.ReasonSucceeded,
			fmt.Sprintf("rendered 4 objects from commit %s as Revision %s", out.commit[:12], revName), out.now)},
	})); err != nil {
		return out, err
	}
	if !rp.everyEvent {
		return out, nil
	}
	return out, r.do(event(ctx, kube, syncv1.FieldManagerSource, out.app, syncv1.ReasonSucceeded, "Render", "rendered Revision "+revName))
}

// rollout sends what the sync-controller sends to roll out a rendered
// Revision: the Secret's read, the plan's dry-runs, the write-ahead
// checkpoint of the statuses rp names, the applies, the Deployment's read
// if rp.healthRead, the outcome's status writes and the Events (the
// outcome's alone unless rp.everyEvent).
func (r *requests) rollout(ctx context.Context, c, as client.Client, kube kubernetes.Interface, rp replay, rd rendered, objs []*unstructured.Unstructured) error {
	namespace, name, revName, now := rd.app.Namespace, rd.app.Name, rd.rev.Name, rd.now
	if err := r.do(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: revName}, &corev1.Secret{})); err != nil {
		return err
	}
	dryRuns, err := r.applyAll(ctx, as, objs, client.DryRunAll)
	if err != nil {
		return err
	}
	var entries, inventory []any
	for _, dry := range dryRuns {
		entries = append(entries, map[string]any{
			"action": "create", "kind": dry.GetKind(), "name": dry.GetName(), "namespace": dry.GetNamespace(),
			"version": "v1", "diff": createDiff(dry),
		})
		gvk := dry.GroupVersionKind()
		inventory = append(inventory, syncv1.InventoryEntry(syncv1.ObjectRef{
			Namespace: dry.GetNamespace(), Name: dry.GetName(), Group: gvk.Group, Kind: gvk.Kind, Version: gvk.Version,
		}))
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
	appStatus := func(phase, health, sync, message string, deployed string) map[string]any {
		s := map[string]any{
			"observedGeneration": 1, "phase": phase, "health": health, "sync": sync,
			"history": []any{map[string]any{"revision": revName, "planDigest": planDigest, "result": phase, "sourceCommit": rd.commit, "startedAt": now}},
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

	if rp.revisionCheckpoint {
		if err := r.do(ssa.ApplyStatus(ctx, c, rd.rev, syncv1.FieldManagerSync, revStatus("Applying", "Progressing",
			condition(syncv1.ConditionRolloutComplete, "False", syncv1.ReasonProgressing, "attempt 1: applying wave 0 (4 object(s)), then waiting for it to be Healthy", now)))); err != nil {
			return err
		}
	}
	if rp.applicationCheckpoint {
		if err := r.do(ssa.ApplyStatus(ctx, c, rd.app, syncv1.FieldManagerSync, appStatus("Applying", "Progressing", "OutOfSync", "rolling out Revision "+revName, ""))); err != nil {
			return err
		}
	}
	if rp.everyEvent {
		if err := r.do(event(ctx, kube, syncv1.FieldManagerSync, rd.app, syncv1.ReasonProgressing, "Rollout", "rolling out Revision "+revName)); err != nil {
			return err
		}
	}
	if _, err := r.applyAll(ctx, as, objs); err != nil {
		return err
	}

	if rp.healthRead {
		if err := r.do(as.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}})); err != nil {
			return err
		}
	}
	if err := r.do(ssa.ApplyStatus(ctx, c, rd.rev, syncv1.FieldManagerSync, revStatus("Healthy", "Healthy",
		condition(syncv1.ConditionRolloutComplete, "True", syncv1.ReasonSucceeded, "attempt 1: every group is Healthy", now),
		condition(syncv1.ConditionHealthy, "True", syncv1.ReasonSucceeded, "every applied object is Healthy", now)))); err != nil {
		return err
	}
	if err := r.do(ssa.ApplyStatus(ctx, c, rd.app, syncv1.FieldManagerSync, appStatus("Healthy", "Healthy", "Synced", "Revision "+revName+" is deployed and Healthy", revName))); err != nil {
		return err
	}
	return r.do(event(ctx, kube, syncv1.FieldManagerSync, rd.app, syncv1.ReasonSucceeded, "AssessHealth", "Revision "+revName+" is Healthy"))
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

// event records a lifecycle Event of app reported by controller, the name
// of the service that emits it.
func event(ctx context.Context, kube kubernetes.Interface, controller string, app *syncv1.Application, reason, action, note string) error {
	_, err := kube.EventsV1().Events(app.Namespace).Create(ctx, &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", app.Name, time.Now().UnixNano())},
		EventTime:           metav1.NowMicro(),
		ReportingController: controller,
		ReportingInstance:   controller + "-bench",
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
