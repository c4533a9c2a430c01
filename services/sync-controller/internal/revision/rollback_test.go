package revision

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func settings(t *testing.T, color string) *unstructured.Unstructured {
	return object(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: %s\n", color))
}

// requestRollback sets the annotations the admission webhook records for
// `ksync rollback` (this suite runs no webhook).
func (e *testEnv) requestRollback(app, target, by string) {
	e.t.Helper()
	obj := e.application(app)
	patch := client.MergeFrom(obj.DeepCopy())
	if obj.Annotations == nil {
		obj.Annotations = map[string]string{}
	}
	obj.Annotations[syncv1.RollbackRequestedAnnotation] = target
	obj.Annotations[syncv1.RollbackRequestedByAnnotation] = by
	obj.Annotations[syncv1.RollbackRequestedAtAnnotation] = time.Now().UTC().Format(time.RFC3339)
	obj.Annotations[syncv1.RollbackDesiredStateAnnotation] = e.revision(target).Spec.DesiredState.Digest
	must(e.t, admin.Patch(e.t.Context(), obj, patch))
}

func color(e *testEnv) string {
	cm := e.get("v1", "ConfigMap", "settings")
	if cm == nil {
		return ""
	}
	c, _, _ := unstructured.NestedString(cm.Object, "data", "color")
	return c
}

func TestRollback_RestoresTheTargetAndHoldsTheRevisionRolledBackFrom(t *testing.T) {
	t.Parallel()
	for _, automatic := range []bool{true, false} {
		t.Run(fmt.Sprintf("automatic=%v", automatic), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.startController(defaultOptions())
			e.createApplication("shop", func(app *syncv1.Application) { app.Spec.Sync.Automatic = automatic })
			deploy := func(name string) {
				if !automatic {
					rev := e.waitForPhase(name, syncv1.PhaseAwaitingApproval)
					e.approve("shop", name, "alice", rev.Status.Plan.Digest)
				}
				e.waitForPhase(name, syncv1.PhaseHealthy)
			}
			good := e.publish("shop", settings(t, "blue"))
			deploy(good)
			bad := e.publish("shop", settings(t, "red"))
			deploy(bad)

			// The rollback is its own approval, even for a manual Application.
			e.requestRollback("shop", good, "carol")
			eventually(t, "the rollback deployed", func() bool {
				app := e.application("shop")
				return app.Status.DeployedRevision == good && color(e) == "blue"
			}, func() string { return describeRevision(e.revision(good)) })
			app := e.application("shop")
			if app.Status.HeldRevision != bad {
				t.Fatalf("heldRevision %q, want %s", app.Status.HeldRevision, bad)
			}
			rev := e.revision(good)
			if a := rev.Status.Approval; a == nil || !a.Rollback || a.By != "carol" || a.Digest != rev.Spec.DesiredState.Digest {
				t.Fatalf("status.approval %+v, want carol's rollback", a)
			}
			if h := app.Status.History; len(h) == 0 || h[0].Revision != good || !h[0].Rollback {
				t.Fatalf("history %+v, want the rollback first", h)
			}

			// The held Revision is not applied again, although it is still desired.
			time.Sleep(3 * time.Second)
			if app := e.application("shop"); app.Status.DeployedRevision != good || color(e) != "blue" {
				t.Fatalf("held Revision re-applied: deployed %s, color %s", app.Status.DeployedRevision, color(e))
			}

			// A newer desired state releases the hold and rolls out as usual.
			next := e.publish("shop", settings(t, "green"))
			deploy(next)
			eventually(t, "the newer desired state deployed", func() bool {
				app := e.application("shop")
				return app.Status.DeployedRevision == next && app.Status.HeldRevision == "" && color(e) == "green"
			}, nil)
		})
	}
}
