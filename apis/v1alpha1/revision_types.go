package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// RevisionSpec is one rendered desired state of an Application. It never
// changes: a new desired state is a new Revision.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
type RevisionSpec struct {
	// ApplicationName is the Application in the same namespace.
	// +kubebuilder:validation:MinLength=1
	ApplicationName string `json:"applicationName"`

	// DesiredState is the Secret holding the rendered objects. It is absent
	// only from a Revision that records a render failure: renderFailure
	// says why, and nothing is applied.
	// +optional
	DesiredState DesiredStateRef `json:"desiredState,omitzero"`

	// Source is where the desired state was rendered from: the first commit
	// that rendered it. Rendering the same content again, from a later
	// commit, reuses the Revision as it is.
	// +optional
	Source *RevisionSource `json:"source,omitempty"`

	// RenderFailure is set, instead of desiredState, on a Revision that
	// records that its commit failed to render.
	// +optional
	RenderFailure *RenderFailure `json:"renderFailure,omitempty"`

	// Preview is set on a preview Revision: the plan of a pull request,
	// merge request or branch. It is planned with dry-runs only, never
	// desired, applied, counted in history or used for rollback, and is
	// deleted with its preview.
	// +optional
	Preview *RevisionPreview `json:"preview,omitempty"`
}

// RevisionPreview is which preview a preview Revision plans.
type RevisionPreview struct {
	// Name of the preview in the Repository's status.previews.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Repository the preview belongs to, in the Revision's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Repository string `json:"repository"`
	// Ref is the Git ref, such as refs/pull/12/head.
	// +kubebuilder:validation:MaxLength=512
	Ref string `json:"ref"`
	// Commit is the head commit rendered.
	// +kubebuilder:validation:MaxLength=64
	Commit string `json:"commit"`
	// NewApplication is set when the Application exists only in the
	// preview's .ksync.yaml: it says as whom and where the plan dry-runs.
	// The plan of an existing Application uses the live Application.
	// +optional
	NewApplication *PreviewApplication `json:"newApplication,omitempty"`
	// Withheld lists what the render left out because spec.previews.decrypt
	// is off (SOPS files, valuesFrom Secrets, chart credentials), at most 20.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=512
	Withheld []string `json:"withheld,omitempty"`
}

// PreviewApplication is what a preview declares of an Application that does
// not exist yet, as much as planning it needs.
type PreviewApplication struct {
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=63
	DestinationNamespace string `json:"destinationNamespace,omitempty"`
}

// IsPreview reports whether the Revision plans a preview rather than a
// desired state.
func (r *Revision) IsPreview() bool { return r.Spec.Preview != nil }

// DesiredStateRef points at the desired-state Secret and pins its content.
type DesiredStateRef struct {
	// SecretName of the Secret of type sync.kuvryn.io/desired-state, owned by this Revision.
	// +kubebuilder:validation:MinLength=1
	SecretName string `json:"secretName"`
	// Digest is sha256:<hex> of the canonical rendered objects.
	// +kubebuilder:validation:Pattern=`^sha256:[a-f0-9]{64}$`
	Digest string `json:"digest"`
	// Objects counts the rendered objects.
	// +kubebuilder:validation:Minimum=0
	Objects int32 `json:"objects"`
}

// RevisionPhase is a step of the Revision lifecycle.
// +kubebuilder:validation:Enum=Rendered;Planned;AwaitingApproval;Approved;Applying;Healthy;Failed;Superseded;RolledBack
type RevisionPhase string

const (
	PhaseRendered         RevisionPhase = "Rendered"
	PhasePlanned          RevisionPhase = "Planned"
	PhaseAwaitingApproval RevisionPhase = "AwaitingApproval"
	PhaseApproved         RevisionPhase = "Approved"
	PhaseApplying         RevisionPhase = "Applying"
	PhaseHealthy          RevisionPhase = "Healthy"
	PhaseFailed           RevisionPhase = "Failed"
	PhaseSuperseded       RevisionPhase = "Superseded"
	PhaseRolledBack       RevisionPhase = "RolledBack"
)

// TakesApproval reports whether a Revision in phase p can be approved. One
// that is rolling out or has rolled out (Applying, Healthy), or will never
// roll out again (Superseded, RolledBack), has no plan left to approve; a
// Failed one takes the fresh approval that retries it.
func (p RevisionPhase) TakesApproval() bool {
	switch p {
	case PhaseApplying, PhaseHealthy, PhaseSuperseded, PhaseRolledBack:
		return false
	}
	return true
}

// RevisionStatus is written by the sync-controller alone. Every list is
// bounded.
type RevisionStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// +optional
	Phase RevisionPhase `json:"phase,omitempty"`
	// +optional
	Plan *Plan `json:"plan,omitempty"`
	// Drift is what the current plan corrects when the drift check made
	// it (self-heal): the drifted objects and the hand-edited fields taken
	// back, with who changed them. It moves to the history entry of the
	// attempt once that starts.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Drift string `json:"drift,omitempty"`
	// +optional
	Approval *ApprovalRecord `json:"approval,omitempty"`
	// +optional
	Hooks *HookList `json:"hooks,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Waves []WaveStatus `json:"waves,omitempty"`
	// Inventory lists every object the rollout applied, for prune.
	// +optional
	Inventory *Inventory `json:"inventory,omitempty"`
	// +optional
	Health HealthState `json:"health,omitempty"`
	// +optional
	Diagnosis *Diagnosis `json:"diagnosis,omitempty"`
	// Attempt counts rollouts of this Revision; hooks run once per attempt.
	// +optional
	Attempt int32 `json:"attempt,omitempty"`
	// StartedAt is when the attempt began. With Attempt it lets a restarted
	// controller bring the Application's history up to this record, which
	// is the rollout's only write-ahead record.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
}

// RevisionSource is where a desired state was rendered from.
type RevisionSource struct {
	// +kubebuilder:validation:MaxLength=64
	Commit string `json:"commit"`
	// Path is the Application's spec.source.path at render time.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Path string `json:"path,omitempty"`
	// +optional
	RenderedAt metav1.Time `json:"renderedAt,omitempty"`
	// Chart is set for Helm charts pulled from a chart repository.
	// +optional
	Chart *ChartArtifact `json:"chart,omitempty"`
}

// ChartArtifact records the pulled chart archive.
type ChartArtifact struct {
	// +kubebuilder:validation:MaxLength=2048
	Repository string `json:"repository"`
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version"`
	// SHA256 of the pulled archive, hex.
	// +kubebuilder:validation:MaxLength=64
	SHA256 string `json:"sha256"`
}

// RenderFailure is why a commit failed to render.
type RenderFailure struct {
	// Reason is one of the condition reasons, such as RenderFailed or
	// DecryptionFailed.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason"`
	// Message names the commit, the file and what is wrong, at most
	// MaxMessageBytes.
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message"`
}

// PlanAction is what apply will do to one object.
// +kubebuilder:validation:Enum=create;update;delete;unchanged
type PlanAction string

const (
	ActionCreate    PlanAction = "create"
	ActionUpdate    PlanAction = "update"
	ActionDelete    PlanAction = "delete"
	ActionUnchanged PlanAction = "unchanged"
)

// Plan is the redacted, bounded result of a Server-Side Apply dry-run.
type Plan struct {
	// Digest is sha256:<hex> over every object's identity, action and the
	// hashes of its normalised live and dry-run state.
	Digest string `json:"digest"`
	// +optional
	PlannedAt metav1.Time `json:"plannedAt,omitempty"`
	Summary   PlanSummary `json:"summary"`
	// Entries, at most MaxPlanEntries; Truncated says more were left out.
	// +optional
	// +kubebuilder:validation:MaxItems=200
	Entries []PlanEntry `json:"entries,omitempty"`
	// +optional
	Truncated bool `json:"truncated,omitempty"`
}

// PlanSummary counts actions.
type PlanSummary struct {
	Create    int32 `json:"create"`
	Update    int32 `json:"update"`
	Delete    int32 `json:"delete"`
	Unchanged int32 `json:"unchanged"`
}

// PlanEntry is one object's planned action, with a redacted, truncated diff.
type PlanEntry struct {
	ObjectRef `json:",inline"`
	Action    PlanAction `json:"action"`
	// +optional
	Wave int32 `json:"wave,omitempty"`
	// +optional
	Hook string `json:"hook,omitempty"`
	// Force is true when the object is applied with force (annotation
	// sync.kuvryn.io/force), taking fields other field managers own.
	// +optional
	Force bool `json:"force,omitempty"`
	// Diff is a unified diff with Secret values redacted, at most MaxDiffBytes.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Diff string `json:"diff,omitempty"`
	// +optional
	DiffTruncated bool `json:"diffTruncated,omitempty"`
}

// ApprovalRecord is who approved which plan, and when.
type ApprovalRecord struct {
	// Revision approved.
	Revision string `json:"revision"`
	// By is the Kubernetes user who approved or requested the rollback.
	By string      `json:"by"`
	At metav1.Time `json:"at"`
	// Digest of the approved plan; for a rollback, the desired-state digest.
	Digest string `json:"digest"`
	// Rollback is true when a rollback request was the approval.
	// +optional
	Rollback bool `json:"rollback,omitempty"`
	// RequestID of the rollback request (annotation
	// sync.kuvryn.io/rollback-request-id), which `ksync rollback` waits to see.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	RequestID string `json:"requestID,omitempty"`
	// Holds is, for a rollback, the Revision it holds (does not deploy
	// again) until a newer desired state arrives. It is recorded with the
	// attempt, so a restarted controller keeps holding it.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Holds string `json:"holds,omitempty"`
}

// HookState is where one hook is in this rollout.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type HookState string

const (
	HookPending   HookState = "Pending"
	HookRunning   HookState = "Running"
	HookSucceeded HookState = "Succeeded"
	HookFailed    HookState = "Failed"
)

// HookList is the bounded list of hooks of a rollout.
type HookList struct {
	// +optional
	// +kubebuilder:validation:MaxItems=50
	Items []HookStatus `json:"items,omitempty"`
	// +optional
	Truncated bool `json:"truncated,omitempty"`
}

// HookStatus is one hook's stage and state.
type HookStatus struct {
	ObjectRef `json:",inline"`
	// +kubebuilder:validation:Enum=pre-sync;post-sync
	Stage string    `json:"stage"`
	State HookState `json:"state"`
	// UID of the hook object this attempt created, so a recreated object is told apart.
	// +optional
	UID string `json:"uid,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// WaveState is where one wave is in this rollout.
// +kubebuilder:validation:Enum=Pending;Applying;Healthy;Failed
type WaveState string

const (
	WavePending  WaveState = "Pending"
	WaveApplying WaveState = "Applying"
	WaveHealthy  WaveState = "Healthy"
	WaveFailed   WaveState = "Failed"
)

// WaveStatus is one wave's state.
type WaveStatus struct {
	Wave    int32     `json:"wave"`
	State   WaveState `json:"state"`
	Objects int32     `json:"objects"`
}

// Inventory is what a rollout applied, in Flux's compact form.
type Inventory struct {
	// Entries are "<namespace>_<name>_<group>_<kind>_<version>".
	// +optional
	// +listType=set
	Entries []string `json:"entries,omitempty"`
}

// Diagnosis explains a failure as causal chains, bounded.
type Diagnosis struct {
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Summary string `json:"summary,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Causes []Cause `json:"causes,omitempty"`
	// +optional
	Truncated bool `json:"truncated,omitempty"`
}

// Cause is one causal chain, from the symptom down to the root cause.
type Cause struct {
	// +kubebuilder:validation:MaxItems=10
	Chain []CauseLink `json:"chain"`
}

// CauseLink is one object and what is wrong with it.
type CauseLink struct {
	ObjectRef `json:",inline"`
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=rev;revs,categories=kuvryn
// +kubebuilder:printcolumn:name="Application",type=string,JSONPath=`.spec.applicationName`
// +kubebuilder:printcolumn:name="Commit",type=string,JSONPath=`.spec.source.commit`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Plan",type=string,JSONPath=`.status.plan.digest`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Revision is one rendered desired state of an Application and the record of its rollout.
type Revision struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RevisionSpec   `json:"spec"`
	Status RevisionStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// RevisionList is a list of Revisions.
type RevisionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Revision `json:"items"`
}
