// Package transition finds the lifecycle events an Application's Revisions
// show in their status and remembers which it has seen, so that each fires
// once per transition however often status is read.
package transition

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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

// key is one event at one Revision, told apart by UID from an earlier
// Revision of the same name.
type key struct {
	revision types.UID
	event    syncv1.NotificationEvent
}

// Tracker remembers, per Application, the identity of every event its
// Revisions showed when it last looked. It lives in memory only, so a
// restarted process starts from what status shows then.
type Tracker struct {
	mu   sync.Mutex
	apps map[types.NamespacedName]map[key]string
}

// NewTracker returns an empty Tracker.
func NewTracker() *Tracker {
	return &Tracker{apps: map[types.NamespacedName]map[key]string{}}
}

// Baseline records occ, what a Revision showed before this process watched
// it, as known: those transitions happened earlier and a process that is
// gone may have delivered them, so they may be lost but are never sent twice.
func (t *Tracker) Baseline(app types.NamespacedName, occ []Occurrence) {
	t.mu.Lock()
	defer t.mu.Unlock()
	seen := t.apps[app]
	if seen == nil {
		seen = map[key]string{}
		t.apps[app] = seen
	}
	for _, o := range occ {
		seen[key{o.Revision.UID, o.Event}] = o.Identity
	}
}

// Fresh records occ as what the Application's Revisions show now and
// returns the occurrences they did not show when last seen.
func (t *Tracker) Fresh(app types.NamespacedName, occ []Occurrence) []Occurrence {
	t.mu.Lock()
	defer t.mu.Unlock()
	before := t.apps[app]
	now := make(map[key]string, len(occ))
	var fresh []Occurrence
	for _, o := range occ {
		k := key{o.Revision.UID, o.Event}
		now[k] = o.Identity
		if before[k] != o.Identity {
			fresh = append(fresh, o)
		}
	}
	t.apps[app] = now
	return fresh
}

// Forget drops a deleted Application.
func (t *Tracker) Forget(app types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.apps, app)
}
