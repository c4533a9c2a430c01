package revision

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// approve sets the annotations the admission webhook records (this suite
// runs no webhook; internal/webhook's tests cover how they are recorded).
func (e *testEnv) approve(app, revision, by, digest string) {
	e.t.Helper()
	obj := e.application(app)
	patch := client.MergeFrom(obj.DeepCopy())
	if obj.Annotations == nil {
		obj.Annotations = map[string]string{}
	}
	obj.Annotations[syncv1.ApprovedRevisionAnnotation] = revision
	obj.Annotations[syncv1.ApprovedByAnnotation] = by
	obj.Annotations[syncv1.ApprovedAtAnnotation] = time.Now().UTC().Format(time.RFC3339)
	obj.Annotations[syncv1.ApprovedDigestAnnotation] = digest
	must(e.t, admin.Patch(e.t.Context(), obj, patch))
}

func TestApproval_AppliesOnlyTheApprovedPlanAndRecordsIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", func(app *syncv1.Application) { app.Spec.Sync.Automatic = false })
	name := e.publish("shop", configMap(t, "settings"))
	rev := e.waitForPhase(name, syncv1.PhaseAwaitingApproval)
	digest := rev.Status.Plan.Digest

	e.approve("shop", name, "alice", digest)
	rev = e.waitForPhase(name, syncv1.PhaseHealthy)
	if a := rev.Status.Approval; a == nil || a.By != "alice" || a.Digest != digest || a.Revision != name {
		t.Fatalf("status.approval = %+v, want alice's approval of %s", a, digest)
	}
	if e.get("v1", "ConfigMap", "settings") == nil {
		t.Fatal("the approved plan was not applied")
	}
	app := e.application("shop")
	if len(app.Status.History) == 0 || app.Status.History[0].Approval == nil || app.Status.History[0].Approval.By != "alice" {
		t.Fatalf("history %+v does not keep the approval", app.Status.History)
	}
}

func TestApproval_StaleDigestWaitsAndAppliesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", func(app *syncv1.Application) { app.Spec.Sync.Automatic = false })
	name := e.publish("shop", configMap(t, "settings"))
	e.waitForPhase(name, syncv1.PhaseAwaitingApproval)

	// An approval of a plan that is no longer the current one: desired or
	// live state changed after the person reviewed it.
	stale := "sha256:" + strings.Repeat("0", 64)
	e.approve("shop", name, "alice", stale)
	eventually(t, "an ApprovalStale Event", func() bool {
		return len(e.events("shop", syncv1.ReasonApprovalStale)) == 1
	}, nil)
	rev := e.revision(name)
	c := condition(rev.Status.Conditions, syncv1.ConditionAwaitingApproval)
	if rev.Status.Phase != syncv1.PhaseAwaitingApproval || c.Reason != syncv1.ReasonApprovalStale ||
		!contains(c.Message, stale, rev.Status.Plan.Digest) {
		t.Fatalf("phase %s, AwaitingApproval %+v; want AwaitingApproval/ApprovalStale naming both digests", rev.Status.Phase, c)
	}
	if e.get("v1", "ConfigMap", "settings") != nil || rev.Status.Approval != nil {
		t.Fatal("a stale approval applied the plan")
	}

	// Approving the current plan then rolls it out.
	e.approve("shop", name, "bob", rev.Status.Plan.Digest)
	rev = e.waitForPhase(name, syncv1.PhaseHealthy)
	if rev.Status.Approval == nil || rev.Status.Approval.By != "bob" {
		t.Fatalf("status.approval = %+v, want bob's", rev.Status.Approval)
	}
}

func TestApproval_LiveStateChangedAfterApprovalIsStale(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", func(app *syncv1.Application) { app.Spec.Sync.Automatic = false })
	name := e.publish("shop", configMap(t, "settings"))
	reviewed := e.waitForPhase(name, syncv1.PhaseAwaitingApproval).Status.Plan.Digest

	// Someone changes the live state after the plan was reviewed (a field
	// the desired state does not set, so the new plan has no conflict)...
	live := object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  other: added by hand\n")
	live.SetNamespace(e.ns)
	must(t, admin.Create(t.Context(), live))
	// ...and the reviewed plan is approved.
	e.approve("shop", name, "alice", reviewed)

	eventually(t, "an ApprovalStale Event", func() bool {
		return len(e.events("shop", syncv1.ReasonApprovalStale)) == 1
	}, func() string { return describeRevision(e.revision(name)) })
	rev := e.revision(name)
	if rev.Status.Plan.Digest == reviewed || rev.Status.Approval != nil || rev.Status.Phase != syncv1.PhaseAwaitingApproval {
		t.Fatalf("phase %s, plan %s, approval %+v: want a new plan, AwaitingApproval and no approval used",
			rev.Status.Phase, rev.Status.Plan.Digest, rev.Status.Approval)
	}
	got := e.get("v1", "ConfigMap", "settings")
	if _, found, _ := unstructured.NestedString(got.Object, "data", "key"); found {
		t.Fatal("the stale approval applied the plan")
	}
}
