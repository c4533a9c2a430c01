package controller

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/githost"
)

// TestPreview_SinkProblemsShowInItsStatus: a wrong token shows in the
// sink's Delivered condition (HTTP 401, after one attempt, since another
// cannot mend it); a Secret without token, a webhook sink named in a
// Repository's spec.previews.sinkRef and a github sink an Application
// subscribes to make the sink's Ready False saying why; a failed delivery
// and a missing sink are NotificationFailed Events about the preview
// Revision. No status, Event or log line holds a token or the host's address.
func TestPreview_SinkProblemsShowInItsStatus(t *testing.T) {
	e := newEnv(t)
	host := githost.Start(t, githost.Options{Kind: githost.GitHub, Token: hostToken, Repository: "shop/deploy"})
	const wrongToken = "ghp_wr0ngT0KENvalue"
	e.createPreviewSink("wrong-token", syncv1.SinkGitHub, host.URL(), wrongToken)
	e.createPreviewRepository("deploy", syncv1.PreviewProviderGitHub, "wrong-token")
	e.createPreviewSink("no-token", syncv1.SinkGitLab, host.URL(), "")
	e.createPreviewRepository("tokenless", syncv1.PreviewProviderGitLab, "no-token")
	e.createSink("audit", syncv1.SinkWebhook, host.URL(), "key")
	e.createPreviewRepository("webhooked", syncv1.PreviewProviderGitHub, "audit")
	e.createPreviewRepository("sinkless", syncv1.PreviewProviderGitHub, "absent")
	e.createPreviewSink("subscribed", syncv1.SinkGitHub, host.URL(), hostToken)
	e.createApplication("api", "subscribed", syncv1.NotificationHealthy)
	e.startController(Options{Delivery: testDelivery(host.RootCAs())})
	e.createPreviewRevision("deploy", "pr-12", "api", "api-preview-a", commitA)
	e.setStatus("api-preview-a", previewPlanned())
	e.createPreviewRevision("sinkless", "pr-3", "api", "api-preview-sinkless", commitB)

	for _, tc := range []struct {
		sink, condition string
		want            string
	}{
		{"wrong-token", syncv1.ConditionDelivered, "the last notification failed after 1 attempt(s): setting the commit status: the sink answered HTTP 401 Unauthorized: it refused the credentials"},
		{"no-token", syncv1.ConditionReady, "NotificationSink no-token: Secret no-token-sink, key token: missing or empty; github and gitlab sinks authenticate with it"},
		{"audit", syncv1.ConditionReady, "NotificationSink audit is of type webhook; Repository webhooked names it in spec.previews.sinkRef, which needs type github or gitlab"},
		{"subscribed", syncv1.ConditionReady, "NotificationSink subscribed is of type github, which receives previews only; Application api names it in spec.notifications, which needs type webhook or slack"},
	} {
		t.Run(tc.sink, func(t *testing.T) {
			e.eventually(tc.condition+" False on "+tc.sink, func() bool {
				c := meta.FindStatusCondition(e.sink(tc.sink).Status.Conditions, tc.condition)
				return c != nil && c.Status == metav1.ConditionFalse && c.Message == tc.want
			}, e.explain)
		})
	}
	e.eventually("NotificationsReady False on api", func() bool {
		c := meta.FindStatusCondition(e.application("api").Status.Conditions, syncv1.ConditionNotificationsReady)
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "NotificationSink subscribed is of type github, which receives previews only")
	}, e.explain)
	for rev, want := range map[string]string{
		"api-preview-a":        "failed after 1 attempt(s): setting the commit status: the sink answered HTTP 401 Unauthorized",
		"api-preview-sinkless": "NotificationSink absent does not exist in namespace " + e.ns,
	} {
		e.eventually("a NotificationFailed Event about "+rev, func() bool {
			for _, ev := range e.events(syncv1.ReasonNotificationFailed) {
				if ev.Regarding.Kind == "Revision" && ev.Regarding.Name == rev && strings.Contains(ev.Note, want) {
					return true
				}
			}
			return false
		}, e.explain)
	}
	if got := host.Statuses(commitA); len(got) != 0 {
		t.Errorf("statuses set with a wrong token: %+v", got)
	}

	var shown strings.Builder
	shown.WriteString(logs.String())
	for _, ev := range e.events("") {
		out, _ := yaml.Marshal(ev)
		shown.Write(out)
	}
	for _, list := range []client.ObjectList{&syncv1.ApplicationList{}, &syncv1.NotificationSinkList{}, &syncv1.RevisionList{}} {
		must(t, admin.List(t.Context(), list, client.InNamespace(e.ns)))
		out, _ := yaml.Marshal(list)
		shown.Write(out)
	}
	for _, secret := range []string{hostToken, wrongToken, strings.TrimSuffix(strings.TrimPrefix(host.APIBase(), "https://"), "/api/v3"), host.URL()} {
		if i := strings.Index(shown.String(), secret); i >= 0 {
			t.Errorf("%q shown in logs, Events or status: ...%s...", secret, shown.String()[max(0, i-200):min(shown.Len(), i+100)])
		}
	}
	if !strings.Contains(shown.String(), "HTTP 401 Unauthorized") {
		t.Errorf("no Event or log says the host refused the token")
	}
}
