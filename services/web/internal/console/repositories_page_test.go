package console

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// create creates obj and, when it has a status, writes it as the
// controllers would.
func (f *fixture) create(obj client.Object, status func()) {
	f.t.Helper()
	ctx := context.Background()
	must(f.t, admin.Create(ctx, obj))
	if status != nil {
		status()
		must(f.t, admin.Status().Update(ctx, obj))
	}
}

// TestRepositoriesPage_ShowsCommitsReadinessAndImageUpdates: every
// Repository shows its URL (a link only for http(s)), revision, fetched
// commit, Ready and, with image updates on, ImagesUpdated and the last
// pushed commit; the ImagePolicies of the namespace show what they
// selected. A person who may read Repositories but not ImagePolicies
// still sees the Repositories and a note.
func TestRepositoriesPage_ShowsCommitsReadinessAndImageUpdates(t *testing.T) {
	f := start(t)
	at := metav1.NewTime(time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC))
	ready := func(typ string, st metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: st, Reason: reason, Message: msg, LastTransitionTime: at}
	}
	platform := &syncv1.Repository{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "platform"},
		Spec: syncv1.RepositorySpec{Git: syncv1.GitSource{URL: "https://git.example.com/acme/platform.git", Revision: "main"},
			ImageUpdate: &syncv1.ImageUpdateSpec{SecretRef: syncv1.LocalObjectReference{Name: "push"}}}}
	f.create(platform, func() {
		platform.Status = syncv1.RepositoryStatus{
			Artifact: &syncv1.Artifact{Revision: "refs/heads/main", Commit: strings.Repeat("a1", 20), FetchedAt: at},
			Conditions: []metav1.Condition{ready("Ready", metav1.ConditionTrue, "Succeeded", "fetched"),
				ready(syncv1.ConditionImagesUpdated, metav1.ConditionFalse, "PushFailed", "the branch moved 5 times")},
			ImageUpdate: &syncv1.ImageUpdateStatus{LastPushCommit: strings.Repeat("b2", 20), LastPushTime: &at},
		}
	})
	legacy := &syncv1.Repository{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "legacy"},
		Spec: syncv1.RepositorySpec{Git: syncv1.GitSource{URL: "ssh://git@git.example.com/acme/legacy.git", Revision: "v1.2.0"}}}
	f.create(legacy, func() {
		legacy.Status = syncv1.RepositoryStatus{Conditions: []metav1.Condition{ready("Ready", metav1.ConditionFalse, "FetchFailed", "host key mismatch")}}
	})
	api := &syncv1.ImagePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "api"},
		Spec: syncv1.ImagePolicySpec{Image: "ghcr.io/acme/api", Policy: syncv1.ImageSelectionPolicy{SemVer: &syncv1.SemVerPolicy{Range: ">=1.0.0"}}}}
	f.create(api, func() {
		api.Status = syncv1.ImagePolicyStatus{LatestImage: "ghcr.io/acme/api:1.2.0@sha256:" + strings.Repeat("c3", 32), LastScanTime: &at,
			Conditions: []metav1.Condition{ready("Ready", metav1.ConditionTrue, "Succeeded", "selected 1.2.0")}}
	})

	s := f.signIn(f.token("viewer", true))
	resp := f.do(http.MethodGet, "/repositories?namespace="+f.ns, []*http.Cookie{s}, nil)
	if resp.status != http.StatusOK {
		t.Fatalf("status %d:\n%s", resp.status, resp.body)
	}
	rows := map[string]string{}
	for _, row := range strings.Split(resp.body, "<tr>") {
		for _, name := range []string{"platform", "legacy", "api"} {
			if strings.Contains(row, "<td>"+name+"</td>") {
				rows[name] = row
			}
		}
	}
	for name, wants := range map[string][]string{
		"platform": {`<a href="https://git.example.com/acme/platform.git"`, "main", strings.Repeat("a1", 20), "True Succeeded",
			"False PushFailed", "the branch moved 5 times", `<code class="last-push">` + strings.Repeat("b2", 20), "2026-12-01T09:30:00Z"},
		"legacy": {"ssh://git@git.example.com/acme/legacy.git", "v1.2.0", "False FetchFailed", "host key mismatch", `<td class="image-updates">off</td>`},
		"api":    {"ghcr.io/acme/api", "ghcr.io/acme/api:1.2.0@sha256:" + strings.Repeat("c3", 32), "True Succeeded", "2026-12-01T09:30:00Z"},
	} {
		for _, want := range wants {
			if !strings.Contains(rows[name], want) {
				t.Errorf("row of %s lacks %q:\n%s", name, want, rows[name])
			}
		}
	}
	if strings.Contains(rows["legacy"], "<a ") {
		t.Error("an ssh:// URL became a link")
	}

	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "repositories-only"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{syncv1.GroupVersion.Group}, Resources: []string{"repositories"}, Verbs: []string{"list"}}}}
	must(t, admin.Create(ctx, role))
	repoOnly := f.signIn(f.token("repositories-only", false))
	must(t, bind(ctx, "Role", f.ns, role.Name, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: f.ns, Name: "repositories-only"}))
	resp = f.getOnceBound("/repositories?namespace="+f.ns, repoOnly, http.StatusOK)
	if resp.status != http.StatusOK || !strings.Contains(resp.body, "platform") || strings.Contains(resp.body, `id="image-policies"`) ||
		!strings.Contains(resp.body, "Kubernetes refuses to let system:serviceaccount:"+f.ns+":repositories-only read ImagePolicies in namespace "+f.ns) {
		t.Errorf("without ImagePolicies: %d\n%s", resp.status, resp.body)
	}
}
