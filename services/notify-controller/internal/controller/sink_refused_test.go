package controller

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestSink_RefusedSecretsSetNotificationsReadyFalse: an http:// URL, a
// webhook sink without hmacKey and a missing sink make NotificationsReady
// False, naming the sink, the Secret and the key but never the URL; the
// sink's own Ready says the same, and a valid sink is Ready. Both are
// written by field manager kuvryn-notify.
func TestSink_RefusedSecretsSetNotificationsReadyFalse(t *testing.T) {
	e := newEnv(t)
	sink := newReceiver(t, 0)
	plain := "http://" + strings.TrimPrefix(sink.URL, "https://") + secretPath
	cases := []struct {
		name, sink string
		typ        syncv1.SinkType
		url, key   string
		ready      bool
		want       string
	}{
		{name: "https", sink: "good", typ: syncv1.SinkWebhook, url: sink.url(), key: "k", ready: true,
			want: "NotificationSinks ready: good"},
		{name: "http", sink: "plain", typ: syncv1.SinkSlack, url: plain, ready: false,
			want: "NotificationSink plain: Secret plain-sink, key url: must be an https:// URL"},
		{name: "no-hmacKey", sink: "unsigned", typ: syncv1.SinkWebhook, url: sink.url(), ready: false,
			want: "NotificationSink unsigned: Secret unsigned-sink, key hmacKey: missing"},
		{name: "missing-sink", ready: false,
			want: "NotificationSink absent does not exist in namespace " + e.ns},
	}
	for _, tc := range cases {
		ref := tc.sink
		if ref == "" {
			ref = "absent"
		} else {
			e.createSink(tc.sink, tc.typ, tc.url, tc.key)
		}
		e.createApplication("app-"+strings.ToLower(tc.name), ref, syncv1.NotificationHealthy)
	}
	e.startController(Options{Delivery: testDelivery(sink.roots())})
	e.eventually("NotificationsReady on every Application and Ready on every sink", func() bool {
		var apps syncv1.ApplicationList
		must(t, admin.List(t.Context(), &apps, client.InNamespace(e.ns)))
		for _, a := range apps.Items {
			if meta.FindStatusCondition(a.Status.Conditions, syncv1.ConditionNotificationsReady) == nil {
				return false
			}
		}
		var sinks syncv1.NotificationSinkList
		must(t, admin.List(t.Context(), &sinks, client.InNamespace(e.ns)))
		for _, s := range sinks.Items {
			if meta.FindStatusCondition(s.Status.Conditions, syncv1.ConditionReady) == nil {
				return false
			}
		}
		return len(apps.Items) == len(cases) && len(sinks.Items) == len(cases)-1
	}, nil)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app := "app-" + strings.ToLower(tc.name)
			a := &syncv1.Application{}
			must(t, admin.Get(t.Context(), client.ObjectKey{Namespace: e.ns, Name: app}, a))
			c := meta.FindStatusCondition(a.Status.Conditions, syncv1.ConditionNotificationsReady)
			if (c.Status == metav1.ConditionTrue) != tc.ready || !strings.Contains(c.Message, tc.want) {
				t.Errorf("NotificationsReady = %s %s %q, want ready=%v with %q", c.Status, c.Reason, c.Message, tc.ready, tc.want)
			}
			if strings.Contains(c.Message, secretPath) || strings.Contains(c.Message, "127.0.0.1") {
				t.Errorf("NotificationsReady message %q holds the URL", c.Message)
			}
			if !managedBy(a, syncv1.FieldManagerNotify) {
				t.Errorf("Application %s status not written by %s", app, syncv1.FieldManagerNotify)
			}
			if tc.sink == "" {
				return
			}
			s := &syncv1.NotificationSink{}
			must(t, admin.Get(t.Context(), client.ObjectKey{Namespace: e.ns, Name: tc.sink}, s))
			r := meta.FindStatusCondition(s.Status.Conditions, syncv1.ConditionReady)
			if (r.Status == metav1.ConditionTrue) != tc.ready || (!tc.ready && !strings.Contains(c.Message, r.Message)) {
				t.Errorf("sink Ready = %s %q, want ready=%v saying what NotificationsReady says", r.Status, r.Message, tc.ready)
			}
			if !managedBy(s, syncv1.FieldManagerNotify) {
				t.Errorf("NotificationSink %s status not written by %s", tc.sink, syncv1.FieldManagerNotify)
			}
		})
	}
}

func managedBy(obj client.Object, manager string) bool {
	for _, f := range obj.GetManagedFields() {
		if f.Manager == manager && f.Subresource == "status" {
			return true
		}
	}
	return false
}
