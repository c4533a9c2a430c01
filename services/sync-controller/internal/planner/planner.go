// Package planner plans a Revision: it reads and verifies its desired
// state, dry-runs every object with Server-Side Apply as the Application's
// service account, compares the answer with live state under the
// Application's ignore rules, force settings and ownership checks, and adds
// the deletes a prune would make. The rollout of a desired Revision
// (package revision) and the plan of a preview Revision (package preview)
// both plan through it.
package planner

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/desired"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/hook"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/memory"
)

// Planner holds what planning needs beyond the scope of one plan.
type Planner struct {
	// Cache reads Revisions, for the inventories prune would delete from.
	Cache client.Reader
	// APIReader reads the desired-state Secrets without a cache.
	APIReader client.Reader
	Mapper    meta.RESTMapper
	// HandEditManagers are the field managers whose fields are taken back
	// (reclaimHandEdits); nil means DefaultHandEditManagers.
	HandEditManagers []string
	// Absent tells whether an object is missing from its kind's watch
	// cache, so its plan need not read it (planObject); nil reads every one.
	Absent func(context.Context, *unstructured.Unstructured) bool
	// DesiredStates keeps the desired states verified, by digest.
	DesiredStates *memory.DesiredStates
}

// Scope is what one plan works on: the Application, the Revision planned
// and the client acting as the service account. Plans fill in the rest.
type Scope struct {
	App    *syncv1.Application
	Rev    *syncv1.Revision
	Client client.Client
	Now    metav1.Time
	// ReadOnly plans without changing anything live: the objects that
	// exist are planned as a manual Application's are (planTakeover), so
	// hand-edited fields are shown taken back instead of being taken.
	ReadOnly bool

	// Desired is Rev's desired state, read once (LoadDesired).
	Desired *desired.State
	// Noops are the objects the last plan found an apply would leave
	// exactly as they are, with their live state.
	Noops map[ObjectID]*unstructured.Unstructured
	// Planned is set once a plan planned every object, and HandEdited then
	// holds, for a manual Application, the live state of those with
	// hand-edited fields its rollout takes back (planTakeover).
	Planned    bool
	HandEdited map[ObjectID]*unstructured.Unstructured
	// HandEdits are the hand-edited fields the last plan took back or, for
	// a manual Application, that its rollout takes back, in the order of
	// the objects, for the caller to record, failed plans included.
	HandEdits []HandEdits
}

// HandEdits names the hand-edited fields of one object, one item per field
// manager.
type HandEdits struct {
	ID     ObjectID
	Fields []string
}

// HookStages lists the stages whose hooks run as their own groups.
var HookStages = []hook.Stage{hook.PreSync, hook.PostSync}

// PruneEnabled is spec.sync.prune, true unless set to false.
func (s *Scope) PruneEnabled() bool {
	return s.App.Spec.Sync.Prune == nil || *s.App.Spec.Sync.Prune
}
