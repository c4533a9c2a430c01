package revision

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestHooks_HelmHookWeightsRunOneAfterAnother: three Helm pre-install hooks
// weighted 10, -20 and -5, in that file order, run lightest first, each
// created only once the one before it completed, as Helm runs them.
func TestHooks_HelmHookWeightsRunOneAfterAnother(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := watchKinds(t, e.ns, jobGVK)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	hook := func(name, weight string) *unstructured.Unstructured {
		return object(t, fmt.Sprintf(`
apiVersion: batch/v1
kind: Job
metadata:
  name: %s
  annotations: {helm.sh/hook: pre-install, helm.sh/hook-weight: %q}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: job, image: job:1}]
`, name, weight))
	}
	name := e.publish("shop", hook("plus-ten", "10"), hook("minus-twenty", "-20"), hook("minus-five", "-5"), configMap(t, "settings"))
	e.waitForPhase(name, syncv1.PhaseHealthy)

	completed := func(job string) uint64 {
		return rec.first("Job", job, "completed", func(o observation) bool {
			n, _, _ := unstructured.NestedInt64(o.obj.Object, "status", "succeeded")
			return n > 0
		})
	}
	order := []string{"minus-twenty", "minus-five", "plus-ten"}
	for i := 1; i < len(order); i++ {
		before, next := order[i-1], order[i]
		if done, created := completed(before), rec.created("Job", next); created < done {
			t.Errorf("hook %s was created (etcd revision %d) before %s completed (%d)", next, created, before, done)
		}
	}
}
