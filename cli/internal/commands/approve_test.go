package commands

import (
	"encoding/json"
	"io"
	"maps"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// approvable creates Application api with one annotation of its own and
// its desired Revision api-2, planned with digest("a").
func approvable(t *testing.T, ns string) *syncv1.Application {
	t.Helper()
	app := application(ns, "api")
	app.Annotations = map[string]string{"example.com/owner": "team-a"}
	app.Status = syncv1.ApplicationStatus{DesiredRevision: "api-2", DeployedRevision: "api-1", Phase: syncv1.PhaseAwaitingApproval}
	createApplication(t, app)
	createRevision(t, ns, "api", "api-2", syncv1.RevisionStatus{Phase: syncv1.PhaseAwaitingApproval, Plan: secretPlan()})
	return getApp(t, ns, "api")
}

// expectOnlyAnnotations fails unless the Application differs from before
// in exactly the annotations added.
func expectOnlyAnnotations(t *testing.T, before *syncv1.Application, added map[string]string) {
	t.Helper()
	after := getApp(t, before.Namespace, before.Name)
	want := map[string]string{}
	maps.Copy(want, before.Annotations)
	maps.Copy(want, added)
	if !maps.Equal(after.Annotations, want) {
		t.Errorf("annotations %v, want %v", after.Annotations, want)
	}
	if !reflect.DeepEqual(after.Labels, before.Labels) || !reflect.DeepEqual(after.Spec, before.Spec) || !reflect.DeepEqual(after.Status, before.Status) {
		t.Errorf("labels, spec or status changed:\nbefore %+v\nafter  %+v", before, after)
	}
}

func TestApprove_SetsExactlyTheApprovalAnnotations(t *testing.T) {
	ns := namespace(t, "approve", nil)
	before := approvable(t, ns)

	r := ksync(t, "approve", "api", "-n", ns, "--yes")
	r.expect(t, 0)
	want := "Application:  approve/api\nRevision:     api-2\nPlan digest:  " + digest("a") +
		"\nSummary:      1 to create, 2 to update, 0 to delete, 0 unchanged\n" +
		"Approved Revision api-2 of Application approve/api with plan " + digest("a") + ".\n"
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
	expectOnlyAnnotations(t, before, map[string]string{
		syncv1.ApprovedRevisionAnnotation: "api-2",
		syncv1.ApproveDigestAnnotation:    digest("a"),
	})
}

func TestApprove_AsksBeforeApproving(t *testing.T) {
	ns := namespace(t, "approve-ask", nil)
	before := approvable(t, ns)

	for _, answer := range []string{"n\n", "\n", ""} {
		r := ksyncWithInput(t, strings.NewReader(answer), "approve", "api", "-n", ns)
		r.expect(t, exitFailed)
		if !strings.Contains(r.stdout, "Approve this plan? [y/N] ") {
			t.Errorf("no prompt in %q", r.stdout)
		}
		if want := "ksync: approval of Revision api-2 cancelled; Application approve-ask/api not changed\n"; r.stderr != want {
			t.Errorf("answer %q: stderr %q, want %q", answer, r.stderr, want)
		}
		expectOnlyAnnotations(t, before, nil)
	}

	r := ksyncWithInput(t, strings.NewReader("y\n"), "approve", "api", "-n", ns)
	r.expect(t, 0)
	expectOnlyAnnotations(t, before, map[string]string{
		syncv1.ApprovedRevisionAnnotation: "api-2",
		syncv1.ApproveDigestAnnotation:    digest("a"),
	})
}

func TestApprove_RefusesARevisionWithoutPlan(t *testing.T) {
	ns := namespace(t, "approve-unplanned", nil)
	app := application(ns, "api")
	app.Status.DesiredRevision = "api-1"
	createApplication(t, app)
	createRevision(t, ns, "api", "api-1", syncv1.RevisionStatus{Phase: syncv1.PhaseRendered})
	before := getApp(t, ns, "api")

	r := ksync(t, "approve", "api", "-n", ns, "--yes")
	r.expect(t, exitFailed)
	if want := "ksync: Revision approve-unplanned/api-1 has no plan yet (status.plan is empty, phase Rendered); the sync-controller plans it after rendering\n"; r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
	expectOnlyAnnotations(t, before, nil)
}

// TestApprove_StalePlanIsRefusedWithTheCurrentDigest has the plan change
// while ksync waits for confirmation. A ValidatingAdmissionPolicy stands in
// for the sync-controller's webhook, which is not part of this module: it
// refuses an approve-digest that is not the Revision's current
// status.plan.digest and names the current one, as the webhook does.
func TestApprove_StalePlanIsRefusedWithTheCurrentDigest(t *testing.T) {
	ns := namespace(t, "approve-stale", map[string]string{"ksync-test": "stale-approval"})
	before := approvable(t, ns)
	installStaleApprovalPolicy(t, before)

	changed := digest("b")
	changePlan := func() {
		rev := &syncv1.Revision{}
		if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "api-2"}, rev); err != nil {
			t.Error(err)
			return
		}
		rev.Status.Plan.Digest = changed
		if err := k8s.Status().Update(t.Context(), rev); err != nil {
			t.Error(err)
			return
		}
		// The policy reads the Revision from an informer; wait until it has the new plan.
		waitForRefusal(t, before, digest("a"))
	}
	stdin := &onFirstRead{do: changePlan, r: strings.NewReader("y\n")}

	r := ksyncWithInput(t, stdin, "approve", "api", "-n", ns)
	r.expect(t, exitFailed)
	if !strings.Contains(r.stdout, "Plan digest:  "+digest("a")) {
		t.Errorf("stdout does not show the reviewed digest:\n%s", r.stdout)
	}
	if !strings.HasPrefix(r.stderr, "ksync: approval refused: ") || !strings.Contains(r.stderr, "its digest is now "+changed) {
		t.Errorf("stderr %q, want the refusal with the current digest %s", r.stderr, changed)
	}
	expectOnlyAnnotations(t, before, nil)
}

type onFirstRead struct {
	once sync.Once
	do   func()
	r    io.Reader
}

func (o *onFirstRead) Read(p []byte) (int, error) {
	o.once.Do(o.do)
	return o.r.Read(p)
}

func installStaleApprovalPolicy(t *testing.T, app *syncv1.Application) {
	t.Helper()
	match := &admissionregistrationv1.MatchResources{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"ksync-test": "stale-approval"}},
		ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups: []string{syncv1.GroupVersion.Group}, APIVersions: []string{syncv1.GroupVersion.Version}, Resources: []string{"applications"},
				},
			},
		}},
	}
	key := "'" + syncv1.ApproveDigestAnnotation + "'"
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "stale-approval"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			ParamKind:        &admissionregistrationv1.ParamKind{APIVersion: syncv1.GroupVersion.String(), Kind: "Revision"},
			MatchConstraints: match,
			Validations: []admissionregistrationv1.Validation{{
				Expression: "!has(object.metadata.annotations) || !(" + key + " in object.metadata.annotations) || " +
					"object.metadata.annotations[" + key + "] == params.status.plan.digest",
				MessageExpression: "'the plan of Revision ' + params.metadata.name + ' changed since it was shown; its digest is now ' + params.status.plan.digest",
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "stale-approval"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ParamRef:          &admissionregistrationv1.ParamRef{Name: app.Status.DesiredRevision, ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)},
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources:    &admissionregistrationv1.MatchResources{NamespaceSelector: match.NamespaceSelector},
		},
	}
	for _, obj := range []client.Object{policy, binding} {
		if err := k8s.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k8s.Delete(t.Context(), obj) })
	}
	waitForRefusal(t, app, digest("0"))
}

// waitForRefusal waits until the API server refuses, in a dry run, an
// approval of app with the given digest.
func waitForRefusal(t *testing.T, app *syncv1.Application, digest string) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{syncv1.ApproveDigestAnnotation: digest}}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		target := &syncv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
		err := k8s.Patch(t.Context(), target, client.RawPatch(types.MergePatchType, patch), client.DryRunAll)
		if _, refused := refusal(err); refused {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API server still accepts approve-digest %s of Application %s/%s (last error %v)", digest, app.Namespace, app.Name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
