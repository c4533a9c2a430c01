package scenarios_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestE2E_FailingPreSyncHookStopsTheRollout: a Helm pre-install hook that
// fails stops the rollout with HookFailed naming it, and the wave after it
// is never applied.
func TestE2E_FailingPreSyncHookStopsTheRollout(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-hook-failed")
	repository(t, ns, "platform", map[string]string{
		".ksync.yaml": `metadata: {name: api}
spec:
  source: {path: chart, render: {type: helm}}
  serviceAccountName: deployer
  sync: {automatic: true}
`,
		"chart/Chart.yaml":              "apiVersion: v2\nname: api\nversion: 0.1.0\n",
		"chart/templates/migrate.yaml":  failingHookJob("helm.sh/hook: pre-install"),
		"chart/templates/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {color: blue}\n",
	})
	var rev syncv1.Revision
	eventually(t, 3*time.Minute, "the Revision Failed", func() bool {
		app := &syncv1.Application{}
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "api"}, app); err != nil || app.Status.DesiredRevision == "" {
			return false
		}
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: app.Status.DesiredRevision}, &rev)
		return err == nil && rev.Status.Phase == syncv1.PhaseFailed
	})
	c := meta.FindStatusCondition(rev.Status.Conditions, syncv1.ConditionRolloutComplete)
	if c == nil || c.Reason != syncv1.ReasonHookFailed || !containsAll(c.Message, "pre-sync hook", "migrate") {
		t.Fatalf("RolloutComplete %+v, want HookFailed naming the pre-sync hook migrate", c)
	}
	err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "settings"}, &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("the wave after the failed hook was applied: %v", err)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// failingHookJob is a hook Job, annotated with annotation, whose Pod never
// schedules, so its deadline fails it and the rollout stops at the hook.
func failingHookJob(annotation string) string {
	return `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {` + annotation + `}
spec:
  activeDeadlineSeconds: 2
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {kuvryn-e2e/no-such-node: "true"}
      containers: [{name: migrate, image: "migrate:1"}]
`
}
