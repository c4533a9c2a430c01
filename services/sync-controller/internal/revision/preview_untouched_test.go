package revision

import (
	"testing"
	"time"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestPreview_ARolloutNeverActsOnAPreviewRevision: a preview Revision of a
// deployed Application changes nothing of it (its status keeps its
// resourceVersion, the live object its value), and the Application's later
// rollouts never plan, apply, supersede or record it, nor collect it with
// the Revisions beyond spec.history.limit.
func TestPreview_ARolloutNeverActsOnAPreviewRevision(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", func(app *syncv1.Application) { app.Spec.History.Limit = 1 })
	first := e.publish("shop", settings(t, "blue"))
	e.waitForPhase(first, syncv1.PhaseHealthy)
	var settled *syncv1.Application
	eventually(t, "the Application's status to settle", func() bool {
		before := e.application("shop")
		time.Sleep(time.Second)
		settled = e.application("shop")
		return settled.ResourceVersion == before.ResourceVersion
	}, nil)

	preview := e.createRevision("shop", &syncv1.RevisionPreview{
		Name: "pr-7", Repository: "repo", Ref: "refs/pull/7/head", Commit: "0123456789abcdef0123456789abcdef01234567",
	}, settings(t, "red"))
	// The controller reacts to a Revision's creation at once; give it time to.
	time.Sleep(3 * time.Second)
	if app := e.application("shop"); app.ResourceVersion != settled.ResourceVersion {
		t.Errorf("the Application changed when a preview Revision was created: status %+v", app.Status)
	}
	if color := e.get("v1", "ConfigMap", "settings").Object["data"].(map[string]any)["color"]; color != "blue" {
		t.Errorf("settings color = %v after a preview Revision was created, want blue", color)
	}

	second := e.publish("shop", settings(t, "green"))
	e.waitForPhase(second, syncv1.PhaseHealthy)
	third := e.publish("shop", settings(t, "yellow"))
	e.waitForPhase(third, syncv1.PhaseHealthy)
	eventually(t, "the first Revision collected beyond the history limit", func() bool {
		return !e.exists(&syncv1.Revision{}, first)
	}, nil)
	if !e.exists(&syncv1.Revision{}, preview) {
		t.Fatalf("the preview Revision %s, older than two rollouts, was collected with the history", preview)
	}
	rev := e.revision(preview)
	if rev.Status.Phase != "" || rev.Status.Plan != nil || len(rev.Status.Conditions) != 0 {
		t.Errorf("the rollout wrote the preview Revision's status: %+v", rev.Status)
	}
	for _, h := range e.application("shop").Status.History {
		if h.Revision == preview {
			t.Errorf("the history records the preview Revision: %+v", h)
		}
	}
}
