package revision

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestHooks_HookThatCannotBeReadIsRetriedNotFailedOrRunAgain: when the API
// server refuses to let the service account read a running hook (as a
// restarted API server does until its authorizer has caught up), the hook
// is not failed, since the attempt retried after a failure would create it
// a second time; the rollout shows the refusal, retries, and once the hook
// can be read again it goes on with the same Job.
func TestHooks_HookThatCannotBeReadIsRetriedNotFailedOrRunAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	// The hook's Pod waits for a node labelled for this test, so the Job
	// runs until the test lets it finish.
	hold := "sync.kuvryn.io/test-hold-" + e.ns
	job := object(t, `
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    sync.kuvryn.io/hook: pre-sync
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {"`+hold+`": "true"}
      containers:
      - name: migrate
        image: migrate:1
`)
	name := e.publish("shop", job, configMap(t, "settings"))
	rev := e.waitForRevision(name, "the hook to run", func(rev *syncv1.Revision) bool {
		return hookState(rev, "migrate").State == syncv1.HookRunning
	})
	uid := hookState(rev, "migrate").UID

	// The service account loses every right in the namespace.
	binding := &rbacv1.RoleBinding{}
	must(t, admin.Get(t.Context(), types.NamespacedName{Namespace: e.ns, Name: serviceAccount + "-admin"}, binding))
	must(t, admin.Delete(t.Context(), binding))
	rev = e.waitForRevision(name, "the hook to show the refused read", func(rev *syncv1.Revision) bool {
		return contains(hookState(rev, "migrate").Message, "cannot read it, retrying", "forbidden")
	})
	if h := hookState(rev, "migrate"); h.State != syncv1.HookRunning || rev.Status.Phase != syncv1.PhaseApplying {
		t.Fatalf("after a refused read: hook %+v, Revision %s; want the hook Running and the Revision Applying", h, rev.Status.Phase)
	}

	// The right comes back and the hook may finish.
	binding.ResourceVersion = ""
	must(t, admin.Create(t.Context(), binding))
	node := &corev1.Node{}
	must(t, admin.Get(t.Context(), types.NamespacedName{Name: "kwok-node-0"}, node))
	patch := client.MergeFrom(node.DeepCopy())
	node.Labels[hold] = "true"
	must(t, admin.Patch(t.Context(), node, patch))
	t.Cleanup(func() {
		n := &corev1.Node{}
		if admin.Get(t.Context(), types.NamespacedName{Name: "kwok-node-0"}, n) == nil {
			p := client.MergeFrom(n.DeepCopy())
			delete(n.Labels, hold)
			_ = admin.Patch(t.Context(), n, p)
		}
	})

	rev = e.waitForPhase(name, syncv1.PhaseHealthy)
	if h := hookState(rev, "migrate"); h.State != syncv1.HookSucceeded || h.UID != uid || rev.Status.Attempt != 1 {
		t.Errorf("hook %+v in attempt %d; want the Job of UID %s Succeeded in attempt 1", h, rev.Status.Attempt, uid)
	}
	live := &batchv1.Job{}
	must(t, admin.Get(t.Context(), types.NamespacedName{Namespace: e.ns, Name: "migrate"}, live))
	if string(live.UID) != uid {
		t.Errorf("Job migrate has UID %s, want %s: the hook ran again", live.UID, uid)
	}
}
