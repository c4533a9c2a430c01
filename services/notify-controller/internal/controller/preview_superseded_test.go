package controller

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/githost"
)

// TestPreview_DeletedRevisionLeavesTheCommentToItsSuccessor: a preview
// Revision deleted while its delivery waits (its pull request moved to a
// new commit) still sets its commit's status, but does not write the
// comment, which belongs to the new commit's Revision.
func TestPreview_DeletedRevisionLeavesTheCommentToItsSuccessor(t *testing.T) {
	e := newEnv(t)
	host := githost.Start(t, githost.Options{Kind: githost.GitHub, Token: hostToken, Repository: "shop/deploy"})
	e.createPreviewSink("host", syncv1.SinkGitHub, host.URL(), hostToken)
	e.createPreviewRepository("deploy", syncv1.PreviewProviderGitHub, "host")
	e.startController(Options{Delivery: testDelivery(host.RootCAs())})
	requests := func() string { return fmt.Sprintf("%+v", host.Requests()) }

	host.Hold()
	e.createPreviewRevision("deploy", "pr-5", "api", "api-preview-a", commitA)
	e.setStatus("api-preview-a", previewPlanned())
	e.eventually("a delivery of the first commit under way", func() bool { return host.Waiting() > 0 }, requests)
	old := &syncv1.Revision{}
	must(t, admin.Get(t.Context(), client.ObjectKey{Namespace: e.ns, Name: "api-preview-a"}, old))
	must(t, admin.Delete(t.Context(), old))
	e.createPreviewRevision("deploy", "pr-5", "api", "api-preview-b", commitB)
	e.setStatus("api-preview-b", previewPlanned())
	host.Release()

	e.eventually("the new commit's status and comment", func() bool {
		s, _ := host.LatestStatus(commitB, "kuvryn-sync/api")
		c := ours(host, 5)
		return s.State == "success" && len(c) == 1 && strings.Contains(c[0].Body, "Commit `bbbbbbbbbbbb`")
	}, requests)
	if s, _ := host.LatestStatus(commitA, "kuvryn-sync/api"); s.State == "" {
		t.Errorf("the first commit got no status:\n%s", requests())
	}
	for _, r := range host.Requests() {
		if r.Method != "GET" && strings.Contains(r.Path, "/comments") && strings.Contains(string(r.Body), "aaaaaaaaaaaa") {
			t.Errorf("the deleted Revision's comment was written: %s %s", r.Method, r.Path)
		}
	}
}
