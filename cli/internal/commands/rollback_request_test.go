package commands

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// actOnRollbacks stands in for the webhook and the sync-controller: each
// new rollback request id on the Application is recorded and then acted on,
// by copying it into the target Revision's status.approval. It returns the
// number of requests acted on so far.
func actOnRollbacks(t *testing.T, ns, name string) func() int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	acted := make(chan int, 1)
	acted <- 0
	go func() {
		defer close(done)
		seen := ""
		for ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
			app := &syncv1.Application{}
			if k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, app) != nil {
				continue
			}
			id, target := app.Annotations[syncv1.RollbackRequestIDAnnotation], app.Annotations[syncv1.RollbackRequestedAnnotation]
			if id == "" || id == seen {
				continue
			}
			rev := &syncv1.Revision{}
			if k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: target}, rev) != nil {
				continue
			}
			rev.Status.Approval = &syncv1.ApprovalRecord{Revision: target, By: "admin", At: metav1.Now(), Digest: rev.Spec.DesiredState.Digest, Rollback: true, RequestID: id}
			if k8s.Status().Update(ctx, rev) == nil {
				seen = id
				acted <- <-acted + 1
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return func() int { n := <-acted; acted <- n; return n }
}

// TestRollback_EveryRequestIsNewAndWaitsUntilActedOn: a second rollback to
// the same target is a new request (a new id), and ksync returns only once
// the sync-controller has acted on it.
func TestRollback_EveryRequestIsNewAndWaitsUntilActedOn(t *testing.T) {
	ns := namespace(t, "rollback-again", nil)
	app := application(ns, "api")
	app.Status = syncv1.ApplicationStatus{
		DesiredRevision: "api-3", DeployedRevision: "api-3",
		History: []syncv1.HistoryEntry{entry("api-3", syncv1.PhaseHealthy), entry("api-1", syncv1.PhaseHealthy), entry("api-2", syncv1.PhaseHealthy)},
	}
	createApplication(t, app)
	for _, rev := range []string{"api-1", "api-2", "api-3"} {
		createRevision(t, ns, "api", rev, syncv1.RevisionStatus{Phase: syncv1.PhaseHealthy})
	}
	acted := actOnRollbacks(t, ns, "api")

	var ids []string
	for i := 1; i <= 2; i++ {
		r := ksync(t, "rollback", "api", "-n", ns, "--yes", "--timeout=30s")
		r.expect(t, 0)
		id := getApp(t, ns, "api").Annotations[syncv1.RollbackRequestIDAnnotation]
		want := "Rolling back api to Revision api-1 (from api-3)\n" +
			"Requested rollback of Application rollback-again/api to Revision api-1 (request " + id + ").\n" +
			"Rollback started: Revision api-1 is rolling out; Revision api-3 is held until a newer desired state arrives.\n"
		if r.stdout != want {
			t.Errorf("rollback %d: stdout %q, want %q", i, r.stdout, want)
		}
		if got := acted(); got != i {
			t.Errorf("rollback %d: %d requests acted on, want %d", i, got, i)
		}
		ids = append(ids, id)
	}
	if ids[0] == ids[1] || ids[0] == "" {
		t.Errorf("request ids %q: want two different ids", ids)
	}
}

// TestRollback_FailsWhenTheRequestIsNotActedOn: without a sync-controller
// to act on it, ksync says so and exits non-zero.
func TestRollback_FailsWhenTheRequestIsNotActedOn(t *testing.T) {
	ns := namespace(t, "rollback-ignored", nil)
	app := application(ns, "api")
	app.Status = syncv1.ApplicationStatus{
		DesiredRevision: "api-2", DeployedRevision: "api-2",
		History: []syncv1.HistoryEntry{entry("api-2", syncv1.PhaseHealthy), entry("api-1", syncv1.PhaseHealthy)},
	}
	createApplication(t, app)
	createRevision(t, ns, "api", "api-1", syncv1.RevisionStatus{Phase: syncv1.PhaseHealthy})

	r := ksync(t, "rollback", "api", "-n", ns, "--yes", "--timeout=2s")
	r.expect(t, exitFailed)
	id := getApp(t, ns, "api").Annotations[syncv1.RollbackRequestIDAnnotation]
	want := "ksync: rollback request " + id + " of Application rollback-ignored/api to Revision api-1 was not acted on within 2s: " +
		"the sync-controller's admission webhook did not record it"
	if !strings.HasPrefix(r.stderr, want) {
		t.Errorf("stderr %q, want it to start with %q", r.stderr, want)
	}
}
