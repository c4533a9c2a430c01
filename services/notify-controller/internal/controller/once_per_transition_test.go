package controller

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/payload"
)

// TestTransitions_DeliverOnceAcrossReconcilesAndARestart: AwaitingApproval,
// Applying and Healthy each reach the sink once, although every state is
// written many times, two writes land back to back, and the controller is
// replaced by a fresh one (empty memory) in the middle of the rollout,
// once the first recorded what it delivered.
func TestTransitions_DeliverOnceAcrossReconcilesAndARestart(t *testing.T) {
	e := newEnv(t)
	sink := newReceiver(t, 0)
	e.createSink("audit", syncv1.SinkWebhook, sink.url(), "key")
	e.createApplication("api", "audit", syncv1.NotificationAwaitingApproval, syncv1.NotificationApplying,
		syncv1.NotificationHealthy, syncv1.NotificationFailed, syncv1.NotificationDiagnosed)
	o := Options{Delivery: testDelivery(sink.roots())}
	_, stop := e.startController(o)

	e.createRevision("api", "api-1")
	// Each write is a new resourceVersion and wakes the controller; the
	// plan time changes so Server-Side Apply cannot skip any of them.
	rewrite := func(st func() *syncv1.RevisionStatus, times int) {
		for i := range times {
			s := st()
			s.Conditions[0].Message = fmt.Sprintf("planned, write %d", i)
			e.setStatus("api-1", s)
		}
	}
	rewrite(func() *syncv1.RevisionStatus { return awaitingApproval("api-1") }, 8)
	e.eventually("AwaitingApproval delivered", func() bool { return len(sink.got()) >= 1 }, nil)
	rewrite(func() *syncv1.RevisionStatus { return applying(1) }, 8)
	e.eventually("Applying delivered", func() bool { return len(sink.got()) >= 2 }, nil)
	e.waitRecorded("Applying")

	stop()
	e.startController(o)
	rewrite(func() *syncv1.RevisionStatus { return applying(1) }, 4)
	rewrite(func() *syncv1.RevisionStatus { return healthy(1) }, 8)
	e.eventually("Healthy delivered", func() bool { return len(sink.got()) >= 3 }, nil)

	// A later transition, delivered after everything queued before it by
	// the one worker, marks the point where no earlier one is pending.
	failed := healthy(1)
	failed.Phase = syncv1.PhaseFailed
	failed.Conditions[2] = cond(syncv1.ConditionRolloutComplete, false, syncv1.ReasonHealthFailure, "Deployment api is Degraded")
	failed.Diagnosis = &syncv1.Diagnosis{Summary: "Deployment api: image pull failed",
		Causes: []syncv1.Cause{{Chain: []syncv1.CauseLink{{ObjectRef: syncv1.ObjectRef{Kind: "Pod", Name: "api-x"}, Message: "ErrImagePull"}}}}}
	e.setStatus("api-1", failed)
	e.eventually("Failed and Diagnosed delivered", func() bool { return len(sink.got()) >= 5 }, nil)

	var events []string
	for _, r := range sink.got() {
		var n payload.Notification
		must(t, json.Unmarshal(r.body, &n))
		events = append(events, string(n.Event))
	}
	want := "AwaitingApproval,Applying,Healthy,Failed,Diagnosed"
	if strings.Join(events, ",") != want {
		t.Errorf("sink got %v, want each of %s once", events, want)
	}
}
