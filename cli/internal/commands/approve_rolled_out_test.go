package commands

import (
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestApprove_RefusesAPlanThatRolledOut: approving a Healthy Revision's
// plan would exit 0 for a rollout that never comes; ksync says so and
// changes nothing.
func TestApprove_RefusesAPlanThatRolledOut(t *testing.T) {
	ns := namespace(t, "approve-rolled-out", nil)
	app := application(ns, "api")
	app.Status.DesiredRevision = "api-1"
	createApplication(t, app)
	createRevision(t, ns, "api", "api-1", syncv1.RevisionStatus{Phase: syncv1.PhaseHealthy, Plan: secretPlan()})
	before := getApp(t, ns, "api")

	r := ksync(t, "approve", "api", "-n", ns, "--yes")
	r.expect(t, exitFailed)
	want := "ksync: Revision api-1 of Application approve-rolled-out/api is Healthy and waits for no approval: plan " + secretPlan().Digest +
		" has rolled out or is rolling out; nothing approved\n"
	if r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
	expectOnlyAnnotations(t, before, nil)
}
