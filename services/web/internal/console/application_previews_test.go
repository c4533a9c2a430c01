package console

import (
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// previewRevision creates a preview Revision of app as the
// source-controller labels it, with status as the sync-controller writes it.
func (f *fixture) previewRevision(name, app, preview string, status *syncv1.RevisionStatus) *syncv1.Revision {
	f.t.Helper()
	rev := &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: map[string]string{
			syncv1.ApplicationLabel: app, syncv1.PreviewLabel: preview, syncv1.RepositoryLabel: "platform"}},
		Spec: syncv1.RevisionSpec{ApplicationName: app,
			DesiredState: syncv1.DesiredStateRef{SecretName: name, Digest: "sha256:" + strings.Repeat("ab", 32), Objects: 2},
			Preview: &syncv1.RevisionPreview{Name: preview, Repository: "platform", Ref: "refs/pull/" + strings.TrimPrefix(preview, "pr-") + "/head",
				Commit:   strings.Repeat("0123456789", 4),
				Withheld: []string{"envs/shop/secret.enc.yaml: SOPS-encrypted, not decrypted (spec.previews.decrypt is off)"}},
		},
	}
	f.create(rev, func() {
		if status != nil {
			rev.Status = *status
		}
	})
	return rev
}

// previewPlan is a planned preview: a Deployment's image changes and a
// Secret is added, its values redacted by the sync-controller.
func previewPlan(ns string) *syncv1.RevisionStatus {
	return &syncv1.RevisionStatus{Phase: syncv1.PhasePlanned, Plan: &syncv1.Plan{
		Digest: "sha256:" + strings.Repeat("9f", 32), PlannedAt: metav1.Now(),
		Summary: syncv1.PlanSummary{Create: 1, Update: 1, Unchanged: 3},
		Entries: []syncv1.PlanEntry{
			{ObjectRef: syncv1.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: ns, Name: "api"}, Action: syncv1.ActionUpdate,
				Diff: "-        image: shop:1.0\n+        image: shop:1.1"},
			{ObjectRef: syncv1.ObjectRef{Version: "v1", Kind: "Secret", Namespace: ns, Name: "db"}, Action: syncv1.ActionCreate,
				Diff: "+  password: '*** (new value)'"},
		}}}
}

// TestApplicationPage_ShowsPreviewsNewestFirst: an Application's page lists
// its preview Revisions (by the labels, with the person's token), newest
// first, each with its pull request, commit, phase, plan summary, what its
// render withheld, a failure's reason, and the redacted diffs; previews of
// other Applications and desired Revisions are not among them. A person
// who may read the Application but not list Revisions sees why.
func TestApplicationPage_ShowsPreviewsNewestFirst(t *testing.T) {
	f := start(t)
	f.waitingApplication("shop", nil)
	f.previewRevision("shop-pr-12", "shop", "pr-12", previewPlan(f.ns))
	// Creation times have whole seconds: the next one must be newer.
	time.Sleep(1100 * time.Millisecond)
	f.previewRevision("shop-pr-13", "shop", "pr-13", &syncv1.RevisionStatus{Phase: syncv1.PhaseFailed,
		Conditions: []metav1.Condition{{Type: syncv1.ConditionPlanned, Status: metav1.ConditionFalse, Reason: syncv1.ReasonRenderFailed,
			Message: "kustomize build envs/shop: missing resource deployment.yaml", LastTransitionTime: metav1.Now()}}})
	f.previewRevision("billing-pr-12", "billing", "pr-12", previewPlan(f.ns))
	s := f.signIn(f.token("viewer", true))

	resp := f.do(http.MethodGet, "/applications/"+f.ns+"/shop", []*http.Cookie{s}, nil)
	if resp.status != http.StatusOK {
		t.Fatalf("status %d:\n%s", resp.status, resp.body)
	}
	_, section, ok := strings.Cut(resp.body, `<section id="previews">`)
	section, _, _ = strings.Cut(section, "</section>")
	if !ok {
		t.Fatalf("no previews section:\n%s", resp.body)
	}
	for _, want := range []string{
		"pr-12 <code>refs/pull/12/head</code> at <code title=\"" + strings.Repeat("0123456789", 4) + "\">012345678901</code>",
		"Planned", "1 to create, 1 to update, 0 to delete, 3 unchanged", "sha256:9f9f9f9f9f9f",
		"-        image: shop:1.0\n&#43;        image: shop:1.1", "&#43;  password: &#39;*** (new value)&#39;",
		"Withheld: envs/shop/secret.enc.yaml: SOPS-encrypted, not decrypted (spec.previews.decrypt is off)",
		"Planned RenderFailed: kustomize build envs/shop: missing resource deployment.yaml",
	} {
		if !strings.Contains(section, want) {
			t.Errorf("previews lack %q:\n%s", want, section)
		}
	}
	if newer, older := strings.Index(section, `id="preview-shop-pr-13"`), strings.Index(section, `id="preview-shop-pr-12"`); newer < 0 || older < 0 || newer > older {
		t.Errorf("pr-13 (at %d) is not listed before the older pr-12 (at %d)", newer, older)
	}
	for _, notWant := range []string{"billing-pr-12", "shop-0123456789"} {
		if strings.Contains(section, notWant) {
			t.Errorf("previews hold %q", notWant)
		}
	}

	// A person who may read Applications but not list Revisions.
	apps, user := f.applicationsOnly()
	resp = f.getOnceBound("/applications/"+f.ns+"/shop", apps, http.StatusOK)
	if !strings.Contains(resp.body, `id="previews-error"`) || strings.Contains(resp.body, `id="preview-shop-pr-12"`) ||
		!strings.Contains(resp.body, "Kubernetes refuses to let "+user+" list the Revisions of "+f.ns+"/shop.") {
		t.Errorf("the page does not say why previews are missing: %d\n%s", resp.status, resp.body)
	}
}
