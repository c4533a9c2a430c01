package revision

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func describeRevision(rev *syncv1.Revision) string {
	if rev == nil {
		return "no Revision read"
	}
	out, _ := yaml.Marshal(rev.Status)
	return "Revision status:\n" + string(out)
}

// get reads an object as admin; nil when it does not exist.
func (e *testEnv) get(apiVersion, kind, name string) *unstructured.Unstructured {
	e.t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	err := admin.Get(e.t.Context(), types.NamespacedName{Namespace: e.ns, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	must(e.t, err)
	return obj
}

// events lists the Events about the Application with reason.
func (e *testEnv) events(app, reason string) []eventsv1.Event {
	e.t.Helper()
	var list eventsv1.EventList
	must(e.t, admin.List(e.t.Context(), &list, client.InNamespace(e.ns)))
	var found []eventsv1.Event
	for _, ev := range list.Items {
		if ev.Regarding.Kind == "Application" && ev.Regarding.Name == app && ev.Reason == reason {
			found = append(found, ev)
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].CreationTimestamp.Before(&found[j].CreationTimestamp) })
	return found
}

// occurrences counts how often an Event happened, series included.
func occurrences(events []eventsv1.Event) int {
	n := 0
	for _, ev := range events {
		if ev.Series != nil {
			n += int(ev.Series.Count)
		} else {
			n++
		}
	}
	return n
}

// object parses one YAML manifest.
func object(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	must(t, yaml.Unmarshal([]byte(manifest), &obj.Object))
	return obj
}

func condition(conds []metav1.Condition, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return *c
	}
	return metav1.Condition{Type: typ, Status: "absent"}
}

func hookState(rev *syncv1.Revision, name string) syncv1.HookStatus {
	if rev.Status.Hooks != nil {
		for _, h := range rev.Status.Hooks.Items {
			if h.Name == name {
				return h
			}
		}
	}
	return syncv1.HookStatus{}
}

// resourceVersion is an object's resourceVersion as a number. etcd's
// revisions order every write in the cluster, so they order the rollout's
// steps even within one second.
func resourceVersion(t *testing.T, obj client.Object) uint64 {
	t.Helper()
	rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	must(t, err)
	return rv
}

func eventually(t *testing.T, what string, cond func() bool, explain func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			msg := ""
			if explain != nil {
				msg = "\n" + explain()
			}
			t.Fatalf("timed out after %s waiting for %s%s", timeout, what, msg)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// gatedDeployment is a Deployment whose Pods schedule only once openGate
// labels the nodes, so a test holds a wave in progress for as long as it needs.
func (e *testEnv) gatedDeployment(name string) *unstructured.Unstructured {
	e.t.Helper()
	obj := object(e.t, fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
  replicas: 1
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      nodeSelector:
        %[2]s: open
      containers:
      - name: %[1]s
        image: %[1]s:1
`, name, e.gateLabel()))
	return obj
}

func (e *testEnv) gateLabel() string {
	return "gate.test.kuvryn.io/" + e.ns
}

// openGate labels every node so gated Pods schedule. It first waits for
// the scheduler to have given up on every gated Pod, so the label change is
// what brings them back, not a scheduling attempt it raced with.
func (e *testEnv) openGate() {
	e.t.Helper()
	eventually(e.t, "gated Pods reported Unschedulable", func() bool {
		var pods corev1.PodList
		must(e.t, admin.List(e.t.Context(), &pods, client.InNamespace(e.ns)))
		gated := 0
		for _, pod := range pods.Items {
			if _, ok := pod.Spec.NodeSelector[e.gateLabel()]; !ok {
				continue
			}
			gated++
			unschedulable := false
			for _, c := range pod.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
					unschedulable = true
				}
			}
			if !unschedulable {
				return false
			}
		}
		return gated > 0
	}, nil)
	e.labelNodes()
	// On a loaded machine the scheduler may leave a Pod it gave up on in
	// its unschedulable queue for minutes after the label change; the
	// ReplicaSet replaces a deleted one at once, and the new Pod schedules.
	var pods corev1.PodList
	must(e.t, admin.List(e.t.Context(), &pods, client.InNamespace(e.ns)))
	for i := range pods.Items {
		pod := &pods.Items[i]
		if _, gated := pod.Spec.NodeSelector[e.gateLabel()]; gated && pod.Spec.NodeName == "" {
			if err := admin.Delete(e.t.Context(), pod); err != nil && !apierrors.IsNotFound(err) {
				e.t.Fatal(err)
			}
		}
	}
}

// labelNodes gives every node the gate label, until the test ends.
func (e *testEnv) labelNodes() {
	e.t.Helper()
	var nodes corev1.NodeList
	must(e.t, admin.List(e.t.Context(), &nodes))
	for i := range nodes.Items {
		node := &nodes.Items[i]
		patch := client.MergeFrom(node.DeepCopy())
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels[e.gateLabel()] = "open"
		must(e.t, admin.Patch(e.t.Context(), node, patch))
		e.t.Cleanup(func() {
			n := &corev1.Node{}
			if err := admin.Get(context.Background(), client.ObjectKeyFromObject(node), n); err != nil {
				return
			}
			p := client.MergeFrom(n.DeepCopy())
			delete(n.Labels, e.gateLabel())
			_ = admin.Patch(context.Background(), n, p)
		})
	}
}

func unstructuredSet(obj *unstructured.Unstructured, value string, fields ...string) error {
	return unstructured.SetNestedField(obj.Object, value, fields...)
}

// controllerRules are the least a sync-controller needs, without list and
// watch on any kind it applies: drift of those is found by the resync.
var controllerRules = []rbacv1.PolicyRule{
	{APIGroups: []string{syncv1.GroupVersion.Group}, Resources: []string{"applications", "revisions"}, Verbs: []string{"get", "list", "watch", "delete"}},
	{APIGroups: []string{syncv1.GroupVersion.Group}, Resources: []string{"applications/status", "revisions/status"}, Verbs: []string{"get", "patch", "update"}},
	{APIGroups: []string{""}, Resources: []string{"secrets", "serviceaccounts"}, Verbs: []string{"get"}},
	{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"impersonate"}},
	{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
}

// restrictedController returns a config for a controller identity bound
// only to controllerRules.
func (e *testEnv) restrictedController() *rest.Config {
	e.t.Helper()
	ctx := e.t.Context()
	user := "kuvryn-sync-" + e.ns
	cfg, err := cp.AddUser(user)
	must(e.t, err)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: controllerRules}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	must(e.t, admin.Create(ctx, role))
	must(e.t, admin.Create(ctx, binding))
	e.t.Cleanup(func() {
		_ = admin.Delete(context.Background(), binding)
		_ = admin.Delete(context.Background(), role)
	})
	return cfg
}
