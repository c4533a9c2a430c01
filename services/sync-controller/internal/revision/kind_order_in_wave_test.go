package revision

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Objects of one kind are applied at once, but every object of a kind
// exists before the first of the next kind in the same wave is created.
func TestRollout_InsideAWaveEveryObjectOfAKindIsCreatedBeforeTheNextKind(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := watchKinds(t, e.ns, configMapGVK, serviceGVK, deploymentGVK)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)

	names := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	kinds := []struct{ kind, manifest string }{
		{"ConfigMap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {mode: fast}\n"},
		{"Service", "apiVersion: v1\nkind: Service\nmetadata: {name: %s}\nspec: {selector: {app: web}, ports: [{port: 80}]}\n"},
		{"Deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %[1]s}\nspec:\n  replicas: 0\n  selector: {matchLabels: {app: %[1]s}}\n" +
			"  template:\n    metadata: {labels: {app: %[1]s}}\n    spec: {containers: [{name: web, image: web:1}]}\n"},
	}
	var objs []*unstructured.Unstructured
	// Published last kind first, so that an order by anything but kind shows.
	for k := len(kinds) - 1; k >= 0; k-- {
		for _, n := range names {
			objs = append(objs, object(t, fmt.Sprintf(kinds[k].manifest, n)))
		}
	}
	name := e.publish("shop", objs...)
	e.waitForPhase(name, syncv1.PhaseHealthy)

	for k := 1; k < len(kinds); k++ {
		var lastBefore, firstNext uint64
		var lastName, firstName string
		for _, n := range names {
			if rv := rec.created(kinds[k-1].kind, n); rv > lastBefore {
				lastBefore, lastName = rv, n
			}
			if rv := rec.created(kinds[k].kind, n); firstNext == 0 || rv < firstNext {
				firstNext, firstName = rv, n
			}
		}
		if lastBefore >= firstNext {
			t.Errorf("%s %s (resourceVersion %d) was created after %s %s (resourceVersion %d)\nobserved:\n%s",
				kinds[k-1].kind, lastName, lastBefore, kinds[k].kind, firstName, firstNext, rec)
		}
	}
}
