package controller

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/githost"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/delivery"
)

// TestPreview_CommitStatusAndOneCommentPerApplication: on GitHub and on
// GitLab, a preview Revision without a plan gets a pending commit status
// and no comment; once Planned, a success status and one comment with the
// Application, the commit, the summary, each changed entry's diff with the
// Secret redacted, and the withheld list; a new Revision of the same preview
// and Application (a new commit) updates that comment in place, leaving
// other people's comments alone; a Failed plan of another Application gets a
// failure status and its own comment with the reason and diagnosis; a branch
// preview gets a status and no comment. The fake host refused nothing.
func TestPreview_CommitStatusAndOneCommentPerApplication(t *testing.T) {
	for _, tc := range []struct {
		kind     githost.Kind
		sink     syncv1.SinkType
		provider syncv1.PreviewProvider
		repo     string
		preview  string
		failure  string
	}{
		{githost.GitHub, syncv1.SinkGitHub, syncv1.PreviewProviderGitHub, "shop/deploy", "pr-12", "failure"},
		{githost.GitLab, syncv1.SinkGitLab, syncv1.PreviewProviderGitLab, "shop/platform/deploy", "mr-12", "failed"},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			e := newEnv(t)
			host := githost.Start(t, githost.Options{Kind: tc.kind, Token: hostToken, Repository: tc.repo})
			e.createPreviewSink("host", tc.sink, host.URL(), hostToken)
			e.createPreviewRepository("deploy", tc.provider, "host")
			delivered := deliveries(tc.sink, delivery.ResultDelivered)
			e.startController(Options{Delivery: testDelivery(host.RootCAs())})
			e.eventually("Ready of the sink", func() bool {
				return meta.IsStatusConditionTrue(e.sink("host").Status.Conditions, syncv1.ConditionReady)
			}, e.explain)
			foreign := host.AddComment(12, "reviewer", "Looks good, but check the image.")
			latest := func(commit, app string) string {
				s, _ := host.LatestStatus(commit, "kuvryn-sync/"+app)
				return s.State
			}
			requests := func() string { return fmt.Sprintf("%+v", host.Requests()) }

			e.createPreviewRevision("deploy", tc.preview, "api", "api-preview-a", commitA,
				"secret.enc.yaml: SOPS-encrypted, not decrypted (spec.previews.decrypt is off)")
			e.eventually("a pending status", func() bool { return latest(commitA, "api") == "pending" }, requests)
			if got := ours(host, 12); len(got) != 0 {
				t.Errorf("a pending preview commented: %+v", got)
			}

			e.setStatus("api-preview-a", previewPlanned())
			e.eventually("a success status and a comment", func() bool {
				return latest(commitA, "api") == "success" && len(ours(host, 12)) == 1
			}, requests)
			st, _ := host.LatestStatus(commitA, "kuvryn-sync/api")
			if st.Description != "plan: 1 to create, 1 to update, 0 to delete, 1 unchanged" {
				t.Errorf("status description %q", st.Description)
			}
			first := ours(host, 12)[0]
			for _, want := range []string{
				"<!-- kuvryn-sync preview " + e.ns + "/api -->\n",
				"Commit `aaaaaaaaaaaa`", "**Plan:** 1 to create, 1 to update, 0 to delete, 1 unchanged",
				"#### update `Deployment` `shop/api`", "+        image: shop/api:1.1",
				"#### create `Secret` `shop/api-db`", "+  password: ***\n",
				"- `secret.enc.yaml: SOPS-encrypted, not decrypted (spec.previews.decrypt is off)`",
			} {
				if !strings.Contains(first.Body, want) {
					t.Errorf("comment lacks %q:\n%s", want, first.Body)
				}
			}

			e.createPreviewRevision("deploy", tc.preview, "api", "api-preview-b", commitB)
			e.setStatus("api-preview-b", previewPlanned())
			e.eventually("the comment updated for the new commit", func() bool {
				c := ours(host, 12)
				return latest(commitB, "api") == "success" && len(c) == 1 && strings.Contains(c[0].Body, "Commit `bbbbbbbbbbbb`")
			}, requests)
			if c := ours(host, 12)[0]; c.ID != first.ID || c.Updated != 1 {
				t.Errorf("comment %d edited %d time(s), want comment %d edited once", c.ID, c.Updated, first.ID)
			}

			e.createPreviewRevision("deploy", tc.preview, "web", "web-preview-b", commitB)
			e.setStatus("web-preview-b", previewFailed(syncv1.ReasonValidationFailure, "Deployment shop/web: spec.replicas: Invalid value: -1"))
			e.eventually("a failure status and the web comment", func() bool {
				return latest(commitB, "web") == tc.failure && len(ours(host, 12)) == 2
			}, requests)
			web := ours(host, 12)[1]
			for _, want := range []string{"preview " + e.ns + "/web -->", "plan failed", "**Failed:** ValidationFailure: Deployment shop/web: spec\\.replicas: Invalid value: \\-1",
				"**Diagnosis:** the Deployment is invalid", "- `Deployment` `shop/web`: spec\\.replicas must be at least 0"} {
				if !strings.Contains(web.Body, want) {
					t.Errorf("failure comment lacks %q:\n%s", want, web.Body)
				}
			}

			branch := syncv1.BranchPreviewName("preview/cheaper")
			e.createPreviewRevision("deploy", branch, "api", "api-preview-branch", commitA[:39]+"c")
			e.setStatus("api-preview-branch", previewPlanned())
			e.eventually("the branch preview's status", func() bool { return latest(commitA[:39]+"c", "api") == "success" }, requests)

			all := host.Comments(12)
			if len(all) != 3 || all[0].ID != foreign || all[0].Updated != 0 {
				t.Errorf("comments on 12: %+v, want the reviewer's untouched and one per Application", all)
			}
			posted := 0
			for _, r := range host.Requests() {
				if r.Method == "POST" && (strings.HasSuffix(r.Path, "/comments") || strings.HasSuffix(r.Path, "/notes")) {
					posted++
				}
			}
			if posted != 2 {
				t.Errorf("%d comments posted, want 2 (api and web; a branch has no pull request)", posted)
			}
			if refused := host.Refused(); len(refused) != 0 {
				t.Errorf("the host refused requests: %+v", refused)
			}
			// A Revision whose plan lands before it is first seen has no pending delivery.
			if got := deliveries(tc.sink, delivery.ResultDelivered) - delivered; got < 5 || got > 8 {
				t.Errorf("%s deliveries counted as delivered: %v, want 5 to 8", tc.sink, got)
			}
		})
	}
}
