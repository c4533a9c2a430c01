package webhook_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

func TestWebhookDown_ApplicationCreateAndUpdateAreRefused(t *testing.T) {
	ns := namespace(t)
	plan := digest("plan " + ns)
	revision(t, ns, "api-1", "api", plan)
	application(t, ns, "api", nil)

	stopWebhook()
	t.Cleanup(func() {
		var err error
		if stopWebhook, err = startManager(webhookPort); err != nil {
			t.Fatalf("restarting the webhook: %v", err)
		}
		// t.Context() is already cancelled when cleanups run.
		if err := controlplane.WaitForWebhooks(context.Background(), admin, ns, time.Minute); err != nil {
			t.Fatal(err)
		}
	})

	requests := []struct {
		name string
		send func(t *testing.T) error
	}{
		{"create", func(t *testing.T) error {
			return admin.Create(t.Context(), newApplication(ns, "web", nil))
		}},
		{"update of a label", func(t *testing.T) error {
			app := &syncv1.Application{}
			if err := admin.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "api"}, app); err != nil {
				t.Fatal(err)
			}
			app.Labels = map[string]string{"team": "payments"}
			return admin.Update(t.Context(), app)
		}},
		{"approval", func(t *testing.T) error {
			return annotate(t.Context(), alice, ns, "api", map[string]*string{
				syncv1.ApprovedRevisionAnnotation: ptr("api-1"),
				syncv1.ApproveDigestAnnotation:    ptr(plan),
			})
		}},
	}
	for _, tt := range requests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.send(t)
			if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "failed calling webhook") {
				t.Fatalf("error = %v, want the request refused because the webhook is unreachable", err)
			}
		})
	}

	app := &syncv1.Application{}
	if err := admin.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, app); !apierrors.IsNotFound(err) {
		t.Errorf("Application web after a refused create: %v, want not found", err)
	}
	if err := admin.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "api"}, app); err != nil {
		t.Fatal(err)
	}
	if len(app.Labels) != 0 || len(app.Annotations) != 0 {
		t.Errorf("Application api has labels %v and annotations %v after refused updates, want none", app.Labels, app.Annotations)
	}
}
