package controller

import (
	"fmt"
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/githost"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/delivery"
)

// TestPreview_RestartRepeatsHarmlessly: nothing records preview deliveries,
// so a controller started after another sends each preview's state once
// more. That sets the same status again (GitLab's refusal to repeat a
// pending status counts as done) and rewrites the same comment: still one
// comment per Application, and no failed delivery.
func TestPreview_RestartRepeatsHarmlessly(t *testing.T) {
	for _, tc := range []struct {
		kind     githost.Kind
		sink     syncv1.SinkType
		provider syncv1.PreviewProvider
		repo     string
		preview  string
		// refused is how often the host refused a repeated pending status.
		refused int
	}{
		{githost.GitHub, syncv1.SinkGitHub, syncv1.PreviewProviderGitHub, "shop/deploy", "pr-7", 0},
		{githost.GitLab, syncv1.SinkGitLab, syncv1.PreviewProviderGitLab, "shop/deploy", "mr-7", 1},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			e := newEnv(t)
			host := githost.Start(t, githost.Options{Kind: tc.kind, Token: hostToken, Repository: tc.repo})
			e.createPreviewSink("host", tc.sink, host.URL(), hostToken)
			e.createPreviewRepository("deploy", tc.provider, "host")
			failed := deliveries(tc.sink, delivery.ResultFailed)
			o := Options{Delivery: testDelivery(host.RootCAs())}
			requests := func() string { return fmt.Sprintf("%+v", host.Requests()) }

			_, stop := e.startController(o)
			e.createPreviewRevision("deploy", tc.preview, "api", "api-preview", commitA)
			e.setStatus("api-preview", previewPlanned())
			e.createPreviewRevision("deploy", tc.preview, "web", "web-preview", commitA)
			e.eventually("the api comment and the web pending status", func() bool {
				web, _ := host.LatestStatus(commitA, "kuvryn-sync/web")
				return len(ours(host, 7)) == 1 && web.State == "pending"
			}, requests)
			stop()
			sent := len(host.Statuses(commitA))

			e.startController(o)
			e.eventually("both states sent again", func() bool {
				c := ours(host, 7)
				return len(host.Requests()) > 0 && len(c) == 1 && c[0].Updated == 1 && countRequests(host, "/statuses/") >= sent+2
			}, requests)
			e.eventually("the api status success again", func() bool {
				api, _ := host.LatestStatus(commitA, "kuvryn-sync/api")
				return api.State == "success"
			}, requests)
			if got := deliveries(tc.sink, delivery.ResultFailed) - failed; got != 0 {
				t.Errorf("%v deliveries failed after the restart:\n%s", got, requests())
			}
			refused := host.Refused()
			if len(refused) != tc.refused || tc.refused > 0 && !strings.Contains(refused[0].Problem, "Cannot transition status via :enqueue from :pending") {
				t.Errorf("refused %+v, want %d repeated pending status(es)", refused, tc.refused)
			}
			if len(ours(host, 7)) != 1 {
				t.Errorf("comments after the restart: %+v", host.Comments(7))
			}
		})
	}
}

func countRequests(h *githost.Host, part string) int {
	n := 0
	for _, r := range h.Requests() {
		if strings.Contains(r.Path, part) {
			n++
		}
	}
	return n
}
