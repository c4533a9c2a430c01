// Package transition finds the lifecycle events an Application's Revisions
// show in their status, and keeps the ledger of which were queued and
// delivered to which sink, so that each fires once per transition however
// often status is read and whichever process reads it.
package transition

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Occurrence is one event a Revision's status shows now.
type Occurrence struct {
	Event    syncv1.NotificationEvent
	Revision *syncv1.Revision
	// Identity tells this occurrence from earlier ones of the same event at
	// the same Revision: the attempt, and when the condition that shows it
	// last changed. The same status read twice has the same identity.
	Identity string
	Reason   string
	Message  string
}

// Observe lists the events every Revision's status shows:
//   - AwaitingApproval while the Revision waits (phase AwaitingApproval,
//     AwaitingApproval condition True), again when the approval went stale;
//   - Applying while an attempt rolls out (phase Applying);
//   - Healthy once an attempt completed and every object is Healthy (phase
//     Healthy, Healthy condition True), again after the objects recover;
//   - Failed when the plan or an attempt failed (phase Failed);
//   - RolledBack once a requested rollback completed and is Healthy, or the
//     phase is RolledBack;
//   - Diagnosed while status.diagnosis names causes, again when they change.
func Observe(revs []syncv1.Revision) []Occurrence {
	var out []Occurrence
	for i := range revs {
		out = append(out, observeRevision(&revs[i])...)
	}
	return out
}

func observeRevision(rev *syncv1.Revision) []Occurrence {
	st := &rev.Status
	conds := st.Conditions
	attempt := fmt.Sprintf("attempt %d", st.Attempt)
	var out []Occurrence
	add := func(event syncv1.NotificationEvent, identity string, c *metav1.Condition) {
		o := Occurrence{Event: event, Revision: rev, Identity: identity}
		if c != nil {
			o.Reason, o.Message = c.Reason, c.Message
		}
		out = append(out, o)
	}
	rollout := meta.FindStatusCondition(conds, syncv1.ConditionRolloutComplete)

	switch st.Phase {
	case syncv1.PhaseAwaitingApproval:
		// The condition stays True after the approval, so the phase says
		// whether the Revision waits; its reason tells a stale approval.
		if c := meta.FindStatusCondition(conds, syncv1.ConditionAwaitingApproval); c != nil && c.Status == metav1.ConditionTrue {
			add(syncv1.NotificationAwaitingApproval, attempt+", "+c.Reason+" since "+since(c), c)
		}
	case syncv1.PhaseApplying:
		add(syncv1.NotificationApplying, attempt, rollout)
	case syncv1.PhaseHealthy:
		if c := meta.FindStatusCondition(conds, syncv1.ConditionHealthy); c != nil && c.Status == metav1.ConditionTrue {
			add(syncv1.NotificationHealthy, attempt+", since "+since(c), rollout)
		}
		if st.Approval != nil && st.Approval.Rollback {
			add(syncv1.NotificationRolledBack, attempt, rollout)
		}
	case syncv1.PhaseRolledBack:
		add(syncv1.NotificationRolledBack, attempt, rollout)
	case syncv1.PhaseFailed:
		c := failure(conds)
		id := attempt
		if c != nil {
			id += ", " + c.Type + " since " + since(c)
		}
		add(syncv1.NotificationFailed, id, c)
	}
	if d := st.Diagnosis; d != nil && len(d.Causes) > 0 {
		out = append(out, Occurrence{
			Event: syncv1.NotificationDiagnosed, Revision: rev, Identity: "causes " + digest(d.Causes),
			Reason: syncv1.ReasonDiagnosed, Message: diagnosisMessage(d),
		})
	}
	return out
}

// failure is the condition that explains a failed Revision: the plan's or
// the rollout's, whichever is False.
func failure(conds []metav1.Condition) *metav1.Condition {
	for _, t := range []string{syncv1.ConditionRolloutComplete, syncv1.ConditionPlanned} {
		if c := meta.FindStatusCondition(conds, t); c != nil && c.Status == metav1.ConditionFalse {
			return c
		}
	}
	return nil
}

func since(c *metav1.Condition) string {
	return c.LastTransitionTime.UTC().Format(time.RFC3339)
}

func digest(v any) string {
	raw, _ := json.Marshal(v)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// diagnosisMessage is the summary, or else the root cause of the first chain.
func diagnosisMessage(d *syncv1.Diagnosis) string {
	if d.Summary != "" {
		return d.Summary
	}
	chain := d.Causes[0].Chain
	if len(chain) == 0 {
		return ""
	}
	root := chain[len(chain)-1]
	return fmt.Sprintf("%s %s: %s", root.Kind, root.Name, root.Message)
}

// ID names o for the Application with uid: the same transition has the
// same ID in every process, and receivers can tell a repeat by it.
func (o Occurrence) ID(app types.UID) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{string(app), o.Revision.Name, string(o.Revision.UID), string(o.Event), o.Identity}, "\x00")))
	return hex.EncodeToString(sum[:16])
}

// Delivery is one occurrence for one sink.
type Delivery struct {
	Sink       string
	ID         string
	Occurrence Occurrence
}

func (d Delivery) entry() syncv1.DeliveredNotification {
	return syncv1.DeliveredNotification{Sink: d.Sink, ID: d.ID, Event: d.Occurrence.Event, Revision: d.Occurrence.Revision.Name}
}

// sent is a delivery told apart from others.
type sent struct{ sink, id string }

// Ledger knows, per Application, what this process queued and what it
// delivered but has not recorded yet. What earlier processes delivered is
// read from the Application's status.deliveredNotifications, which the
// Ledger writes through its caller, once per batch of deliveries.
type Ledger struct {
	mu   sync.Mutex
	apps map[types.NamespacedName]*appLedger
}

type appLedger struct {
	// queued were queued, or given up on, by this process; a failed or
	// dropped delivery is not tried again until the next process.
	queued map[sent]bool
	// delivered were accepted by their sink and are not recorded yet.
	delivered []syncv1.DeliveredNotification
	// recorded is what this process last wrote, which the cache may not
	// show yet; nil until it writes.
	recorded []syncv1.DeliveredNotification
}

// NewLedger returns an empty Ledger.
func NewLedger() *Ledger {
	return &Ledger{apps: map[types.NamespacedName]*appLedger{}}
}

func (l *Ledger) app(key types.NamespacedName) *appLedger {
	a := l.apps[key]
	if a == nil {
		a = &appLedger{queued: map[sent]bool{}}
		l.apps[key] = a
	}
	return a
}

// Due returns the deliveries of want that are neither in status nor
// recorded, queued or delivered by this process, and counts them as
// queued. It forgets what was queued for transitions no longer wanted.
func (l *Ledger) Due(key types.NamespacedName, status []syncv1.DeliveredNotification, want []Delivery) []Delivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.app(key)
	done := map[sent]bool{}
	for _, e := range a.record(status) {
		done[sent{e.Sink, e.ID}] = true
	}
	for _, e := range a.delivered {
		done[sent{e.Sink, e.ID}] = true
	}
	queued := make(map[sent]bool, len(want))
	var due []Delivery
	for _, d := range want {
		k := sent{d.Sink, d.ID}
		if !a.queued[k] && !done[k] {
			due = append(due, d)
		}
		queued[k] = true
	}
	a.queued = queued
	return due
}

func (a *appLedger) record(status []syncv1.DeliveredNotification) []syncv1.DeliveredNotification {
	if a.recorded != nil {
		return a.recorded
	}
	return status
}

// Delivered notes that d's sink accepted it.
func (l *Ledger) Delivered(key types.NamespacedName, d Delivery) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.app(key)
	a.delivered = append(a.delivered, d.entry())
}

// Record returns what status.deliveredNotifications should hold: the
// recorded entries still wanted, then those delivered since, at most
// syncv1.MaxDeliveredNotifications, the newest kept; and how many
// deliveries it took in, none when there is nothing new to write.
func (l *Ledger) Record(key types.NamespacedName, status []syncv1.DeliveredNotification, want []Delivery) ([]syncv1.DeliveredNotification, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.app(key)
	current := make(map[sent]bool, len(want))
	for _, d := range want {
		current[sent{d.Sink, d.ID}] = true
	}
	seen := map[sent]bool{}
	out := []syncv1.DeliveredNotification{}
	for _, e := range append(append([]syncv1.DeliveredNotification(nil), a.record(status)...), a.delivered...) {
		k := sent{e.Sink, e.ID}
		if current[k] && !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	if len(out) > syncv1.MaxDeliveredNotifications {
		out = out[len(out)-syncv1.MaxDeliveredNotifications:]
	}
	return out, len(a.delivered)
}

// Recorded notes that rec, which Record returned having taken in n
// deliveries, was written.
func (l *Ledger) Recorded(key types.NamespacedName, rec []syncv1.DeliveredNotification, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.app(key)
	a.delivered = slices.Clone(a.delivered[n:])
	a.recorded = rec
}

// Forget drops a deleted Application.
func (l *Ledger) Forget(key types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.apps, key)
}
