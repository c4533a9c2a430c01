package webhook_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func TestApproval_RecordsTheAuthenticatedUserAndTheCurrentPlan(t *testing.T) {
	tests := []struct {
		name string
		as   client.Client
		user string
		// bind sends approve-digest, as `ksync approve` does.
		bind bool
	}{
		{name: "user with a client certificate, bound to the reviewed plan", as: alice, user: "alice", bind: true},
		{name: "impersonated user, bound to the reviewed plan", as: bob, user: "bob", bind: true},
		{name: "approved-revision alone records the current plan", as: alice, user: "alice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := namespace(t)
			plan := digest("plan " + ns)
			revision(t, ns, "api-1", "api", plan)
			application(t, ns, "api", nil)

			request := map[string]*string{syncv1.ApprovedRevisionAnnotation: ptr("api-1")}
			if tt.bind {
				request[syncv1.ApproveDigestAnnotation] = ptr(plan)
			}
			before := time.Now()
			mustAnnotate(t, tt.as, ns, "api", request)
			after := time.Now()

			got := stored(t, ns, "api")
			wantRecords(t, got, map[string]string{
				syncv1.ApprovedRevisionAnnotation: "api-1",
				syncv1.ApprovedByAnnotation:       tt.user,
				syncv1.ApprovedDigestAnnotation:   plan,
				syncv1.ApproveDigestAnnotation:    "",
			})
			recordedAt(t, got, syncv1.ApprovedAtAnnotation, before, after)
		})
	}
}

func TestApproval_CreateWithAnApprovalRecordsTheCreator(t *testing.T) {
	ns := namespace(t)
	plan := digest("plan " + ns)
	revision(t, ns, "api-1", "api", plan)

	before := time.Now()
	application(t, ns, "api", map[string]string{
		syncv1.ApprovedRevisionAnnotation: "api-1",
		syncv1.ApproveDigestAnnotation:    plan,
		syncv1.ApprovedByAnnotation:       "mallory",
	})
	got := stored(t, ns, "api")
	wantRecords(t, got, map[string]string{
		syncv1.ApprovedByAnnotation:     "kuvryn-admin",
		syncv1.ApprovedDigestAnnotation: plan,
		syncv1.ApproveDigestAnnotation:  "",
	})
	recordedAt(t, got, syncv1.ApprovedAtAnnotation, before, time.Now())
}

func TestApproval_HandSetRecordsAreOverwrittenWithTheTruth(t *testing.T) {
	forged := map[string]string{
		syncv1.ApprovedByAnnotation:     "mallory",
		syncv1.ApprovedAtAnnotation:     "2001-01-01T00:00:00Z",
		syncv1.ApprovedDigestAnnotation: digest("a plan nobody reviewed"),
	}
	t.Run("records set at create without an approval are dropped", func(t *testing.T) {
		ns := namespace(t)
		application(t, ns, "api", forged)
		wantRecords(t, stored(t, ns, "api"), map[string]string{
			syncv1.ApprovedByAnnotation:     "",
			syncv1.ApprovedAtAnnotation:     "",
			syncv1.ApprovedDigestAnnotation: "",
		})
	})

	edits := []struct {
		name string
		edit func(t *testing.T, ns string) error
	}{
		{"approved-by edited alone", func(t *testing.T, ns string) error {
			return annotate(t.Context(), bob, ns, "api", map[string]*string{syncv1.ApprovedByAnnotation: ptr("bob")})
		}},
		{"all three records edited", func(t *testing.T, ns string) error {
			return annotate(t.Context(), bob, ns, "api", map[string]*string{
				syncv1.ApprovedByAnnotation:     ptr(forged[syncv1.ApprovedByAnnotation]),
				syncv1.ApprovedAtAnnotation:     ptr(forged[syncv1.ApprovedAtAnnotation]),
				syncv1.ApprovedDigestAnnotation: ptr(forged[syncv1.ApprovedDigestAnnotation]),
			})
		}},
		{"records removed", func(t *testing.T, ns string) error {
			return annotate(t.Context(), bob, ns, "api", map[string]*string{
				syncv1.ApprovedByAnnotation:     nil,
				syncv1.ApprovedAtAnnotation:     nil,
				syncv1.ApprovedDigestAnnotation: nil,
			})
		}},
		{"records edited with an unrelated change, by a full update", func(t *testing.T, ns string) error {
			app := &syncv1.Application{}
			if err := bob.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "api"}, app); err != nil {
				return err
			}
			app.Annotations[syncv1.ApprovedByAnnotation] = "mallory"
			app.Annotations[syncv1.ApprovedDigestAnnotation] = forged[syncv1.ApprovedDigestAnnotation]
			app.Annotations["example.com/note"] = "unrelated"
			return bob.Update(t.Context(), app)
		}},
	}
	for _, tt := range edits {
		t.Run(tt.name, func(t *testing.T) {
			ns := namespace(t)
			plan := digest("plan " + ns)
			revision(t, ns, "api-1", "api", plan)
			application(t, ns, "api", nil)
			mustAnnotate(t, alice, ns, "api", map[string]*string{
				syncv1.ApprovedRevisionAnnotation: ptr("api-1"),
				syncv1.ApproveDigestAnnotation:    ptr(plan),
			})
			truth := stored(t, ns, "api")

			if err := tt.edit(t, ns); err != nil {
				t.Fatalf("editing the records: %v", err)
			}
			wantRecords(t, stored(t, ns, "api"), map[string]string{
				syncv1.ApprovedRevisionAnnotation: "api-1",
				syncv1.ApprovedByAnnotation:       "alice",
				syncv1.ApprovedAtAnnotation:       truth[syncv1.ApprovedAtAnnotation],
				syncv1.ApprovedDigestAnnotation:   plan,
			})
		})
	}

	t.Run("records forged alongside an approval name the approver", func(t *testing.T) {
		ns := namespace(t)
		plan := digest("plan " + ns)
		revision(t, ns, "api-1", "api", plan)
		application(t, ns, "api", nil)
		mustAnnotate(t, bob, ns, "api", map[string]*string{
			syncv1.ApprovedRevisionAnnotation: ptr("api-1"),
			syncv1.ApproveDigestAnnotation:    ptr(plan),
			syncv1.ApprovedByAnnotation:       ptr("alice"),
			syncv1.ApprovedDigestAnnotation:   ptr(forged[syncv1.ApprovedDigestAnnotation]),
		})
		wantRecords(t, stored(t, ns, "api"), map[string]string{
			syncv1.ApprovedByAnnotation:     "bob",
			syncv1.ApprovedDigestAnnotation: plan,
		})
	})
}

func TestApproval_StaleDigestIsRefusedWithTheCurrentDigest(t *testing.T) {
	ns := namespace(t)
	reviewed, current := digest("plan reviewed "+ns), digest("plan current "+ns)
	rev := revision(t, ns, "api-1", "api", reviewed)
	application(t, ns, "api", nil)
	mustAnnotate(t, bob, ns, "api", map[string]*string{
		syncv1.ApprovedRevisionAnnotation: ptr("api-1"),
		syncv1.ApproveDigestAnnotation:    ptr(reviewed),
	})
	before := stored(t, ns, "api")

	// Live state changed and the sync-controller planned the Revision again.
	setPlan(t, rev, current)
	err := annotate(t.Context(), alice, ns, "api", map[string]*string{
		syncv1.ApprovedRevisionAnnotation: ptr("api-1"),
		syncv1.ApproveDigestAnnotation:    ptr(reviewed),
	})
	wantDenied(t, err, syncv1.ApproveDigestAnnotation,
		"plan changed since you reviewed it: current digest "+current+", approve-digest "+reviewed)

	wantRecords(t, stored(t, ns, "api"), map[string]string{
		syncv1.ApprovedByAnnotation:     "bob",
		syncv1.ApprovedAtAnnotation:     before[syncv1.ApprovedAtAnnotation],
		syncv1.ApprovedDigestAnnotation: reviewed,
		syncv1.ApproveDigestAnnotation:  "",
	})
}

func TestApproval_RefusalsNameTheAnnotationAndTheProblem(t *testing.T) {
	tests := []struct {
		name       string
		annotation map[string]*string
		want       []string
	}{
		{
			name:       "Revision does not exist",
			annotation: map[string]*string{syncv1.ApprovedRevisionAnnotation: ptr("api-404")},
			want:       []string{syncv1.ApprovedRevisionAnnotation, "api-404 not found"},
		},
		{
			name:       "Revision of another Application",
			annotation: map[string]*string{syncv1.ApprovedRevisionAnnotation: ptr("web-1")},
			want:       []string{syncv1.ApprovedRevisionAnnotation, `belongs to Application "web", not "api"`},
		},
		{
			name:       "Revision not planned yet",
			annotation: map[string]*string{syncv1.ApprovedRevisionAnnotation: ptr("api-2")},
			want:       []string{syncv1.ApprovedRevisionAnnotation, "has no plan yet (status.plan.digest is empty)"},
		},
		{
			name:       "approve-digest without approved-revision",
			annotation: map[string]*string{syncv1.ApproveDigestAnnotation: ptr(digest("x"))},
			want:       []string{syncv1.ApproveDigestAnnotation, "is set without " + syncv1.ApprovedRevisionAnnotation},
		},
		{
			name:       "empty approved-revision",
			annotation: map[string]*string{syncv1.ApprovedRevisionAnnotation: ptr("")},
			want:       []string{syncv1.ApprovedRevisionAnnotation, "is empty"},
		},
	}
	ns := namespace(t)
	revision(t, ns, "api-1", "api", digest("plan "+ns))
	revision(t, ns, "api-2", "api", "")
	revision(t, ns, "web-1", "web", digest("plan web "+ns))
	application(t, ns, "api", nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantDenied(t, annotate(t.Context(), alice, ns, "api", tt.annotation), tt.want...)
			if got := stored(t, ns, "api"); len(got) != 0 {
				t.Errorf("annotations = %v after a refused request, want none", got)
			}
		})
	}
}

func TestApproval_SettingApproveDigestAgainReapproves(t *testing.T) {
	ns := namespace(t)
	plan := digest("plan " + ns)
	revision(t, ns, "api-1", "api", plan)
	application(t, ns, "api", nil)
	approve := map[string]*string{
		syncv1.ApprovedRevisionAnnotation: ptr("api-1"),
		syncv1.ApproveDigestAnnotation:    ptr(plan),
	}
	start := time.Now()
	mustAnnotate(t, alice, ns, "api", approve)
	first := recordedAt(t, stored(t, ns, "api"), syncv1.ApprovedAtAnnotation, start, time.Now())

	// approved-at has second precision: let the clock move past it.
	time.Sleep(time.Until(first.Add(time.Second)))

	// The same value of approved-revision alone is no new request.
	mustAnnotate(t, bob, ns, "api", map[string]*string{syncv1.ApprovedRevisionAnnotation: ptr("api-1")})
	wantRecords(t, stored(t, ns, "api"), map[string]string{
		syncv1.ApprovedByAnnotation: "alice",
		syncv1.ApprovedAtAnnotation: first.Format(time.RFC3339),
	})

	mustAnnotate(t, bob, ns, "api", approve)
	got := stored(t, ns, "api")
	wantRecords(t, got, map[string]string{
		syncv1.ApprovedByAnnotation:     "bob",
		syncv1.ApprovedDigestAnnotation: plan,
		syncv1.ApproveDigestAnnotation:  "",
	})
	if again := recordedAt(t, got, syncv1.ApprovedAtAnnotation, start, time.Now()); !again.After(first) {
		t.Errorf("approved-at = %s after re-approving, want later than the first approval at %s", again, first)
	}
}

func TestApproval_RemovingApprovedRevisionClearsTheRecords(t *testing.T) {
	ns := namespace(t)
	plan := digest("plan " + ns)
	revision(t, ns, "api-1", "api", plan)
	application(t, ns, "api", nil)
	mustAnnotate(t, alice, ns, "api", map[string]*string{
		syncv1.ApprovedRevisionAnnotation: ptr("api-1"),
		syncv1.ApproveDigestAnnotation:    ptr(plan),
	})

	mustAnnotate(t, bob, ns, "api", map[string]*string{syncv1.ApprovedRevisionAnnotation: nil})
	if got := stored(t, ns, "api"); len(got) != 0 {
		t.Errorf("annotations = %v after removing %s, want none", got, syncv1.ApprovedRevisionAnnotation)
	}
}

func TestApproval_ConcurrentApprovalsOfDifferentRevisionsRecordOneApprover(t *testing.T) {
	ns := namespace(t)
	approvers := []struct {
		as       client.Client
		user     string
		revision string
		plan     string
	}{
		{alice, "alice", "api-a", digest("plan a " + ns)},
		{bob, "bob", "api-b", digest("plan b " + ns)},
	}
	for _, a := range approvers {
		revision(t, ns, a.revision, "api", a.plan)
	}
	application(t, ns, "api", nil)

	for round := range 5 {
		start := make(chan struct{})
		errs := make([]error, len(approvers))
		var wg sync.WaitGroup
		for i, a := range approvers {
			wg.Go(func() {
				<-start
				errs[i] = annotate(t.Context(), a.as, ns, "api", map[string]*string{
					syncv1.ApprovedRevisionAnnotation: ptr(a.revision),
					syncv1.ApproveDigestAnnotation:    ptr(a.plan),
				})
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: approval by %s: %v", round, approvers[i].user, err)
			}
		}

		got := stored(t, ns, "api")
		winner := -1
		for i, a := range approvers {
			if got[syncv1.ApprovedRevisionAnnotation] == a.revision {
				winner = i
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: approved-revision = %q, want one of the two approved", round, got[syncv1.ApprovedRevisionAnnotation])
		}
		// The record must come from the same request as approved-revision.
		w := approvers[winner]
		wantRecords(t, got, map[string]string{
			syncv1.ApprovedByAnnotation:     w.user,
			syncv1.ApprovedDigestAnnotation: w.plan,
			syncv1.ApproveDigestAnnotation:  "",
		})
	}
}

func TestApproval_UserWithoutUpdateRightsIsRefusedByRBACAndNothingIsRecorded(t *testing.T) {
	ns := namespace(t)
	plan := digest("plan " + ns)
	revision(t, ns, "api-1", "api", plan)
	application(t, ns, "api", nil)

	err := annotate(t.Context(), carol, ns, "api", map[string]*string{
		syncv1.ApprovedRevisionAnnotation: ptr("api-1"),
		syncv1.ApproveDigestAnnotation:    ptr(plan),
		syncv1.ApprovedByAnnotation:       ptr("carol"),
	})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "carol" cannot patch resource "applications"`) {
		t.Fatalf("error = %v, want RBAC to forbid carol to patch applications", err)
	}
	if got := stored(t, ns, "api"); len(got) != 0 {
		t.Errorf("annotations = %v after a request RBAC refused, want none", got)
	}
}
