package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ApplicationSpec says what to render from which Repository, where to apply
// it, as whom, and how to roll it out.
type ApplicationSpec struct {
	Source ApplicationSource `json:"source"`

	// +optional
	Destination Destination `json:"destination,omitempty"`

	// ServiceAccountName in the Application's namespace that plans and applies
	// the Application (impersonated). Empty uses the manager's
	// --default-service-account; if that is empty too the Application is refused.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must be a Kubernetes object name: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// +optional
	Sync SyncPolicy `json:"sync,omitempty"`

	// Decryption of SOPS-encrypted files with age keys.
	// +optional
	Decryption *Decryption `json:"decryption,omitempty"`

	// +optional
	History HistoryPolicy `json:"history,omitempty"`

	// IgnoreDifferences names fields of the Application's objects that
	// Kuvryn Sync leaves to whoever else sets them, as Argo CD's
	// ignoreDifferences: once an object exists, an ignored field is never
	// planned, applied, reported as drift or taken back from a hand edit.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	IgnoreDifferences []IgnoreRule `json:"ignoreDifferences,omitempty"`

	// Notifications sends lifecycle events to NotificationSinks in this namespace.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Notifications []NotificationSubscription `json:"notifications,omitempty"`
}

// ApplicationSource is a path in a Repository and how to render it.
type ApplicationSource struct {
	RepositoryRef LocalObjectReference `json:"repositoryRef"`

	// Path inside the repository, relative; defaults to the root.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/')",message="must be a relative path"
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|/)[.][.](/|$)')",message="must not contain '..'"
	// +kubebuilder:validation:XValidation:rule="!self.matches('[[:cntrl:]]')",message="must not contain control characters"
	Path string `json:"path,omitempty"`

	// +optional
	Render Render `json:"render,omitempty"`
}

// RenderType is how a source path becomes Kubernetes objects.
// +kubebuilder:validation:Enum=yaml;kustomize;helm
type RenderType string

const (
	RenderYAML      RenderType = "yaml"
	RenderKustomize RenderType = "kustomize"
	RenderHelm      RenderType = "helm"
)

// Render picks the renderer.
// +kubebuilder:validation:XValidation:rule="!has(self.helm) || self.type == 'helm'",message="helm may only be set when type is helm"
type Render struct {
	// Type of renderer: yaml (a directory of manifests), kustomize or helm.
	// +kubebuilder:default=yaml
	// +optional
	Type RenderType `json:"type,omitempty"`

	// +optional
	Helm *HelmRender `json:"helm,omitempty"`
}

// HelmRender renders a chart from Git (the source path) or from a chart repository.
type HelmRender struct {
	// Chart pulls the chart from a chart repository instead of the source path.
	// +optional
	Chart *HelmChart `json:"chart,omitempty"`

	// ReleaseName defaults to the Application name.
	// +optional
	// +kubebuilder:validation:MaxLength=53
	ReleaseName string `json:"releaseName,omitempty"`

	// ValuesFiles relative to the source path, in Git, merged in order.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=1024
	// +kubebuilder:validation:items:XValidation:rule="!self.startsWith('/')",message="must be a relative path"
	// +kubebuilder:validation:items:XValidation:rule="!self.matches('(^|/)[.][.](/|$)')",message="must not contain '..'"
	// +kubebuilder:validation:items:XValidation:rule="!self.matches('[[:cntrl:]]')",message="must not contain control characters"
	ValuesFiles []string `json:"valuesFiles,omitempty"`

	// ValuesFrom Secrets or ConfigMaps in the Application's namespace, merged in order after valuesFiles.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	ValuesFrom []ValuesReference `json:"valuesFrom,omitempty"`

	// Values merged last. They are one atomic field to Server-Side Apply,
	// owned whole by whoever sets them, as Helm reads them: the API server
	// then tracks one field, not every leaf, so that values nested deep
	// cost no more to write than flat ones.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +mapType=atomic
	Values *apiextensionsv1.JSON `json:"values,omitempty"`
}

// HelmChart is a chart at an exact version in an OCI or https Helm repository.
// +kubebuilder:validation:XValidation:rule="self.repository.startsWith('oci://') || self.repository.startsWith('https://') || (has(self.insecure) && self.insecure && self.repository.startsWith('http://'))",message="repository must be an oci:// or https:// URL (http:// only with insecure: true)"
type HelmChart struct {
	// Repository URL: oci://host/path or https://host/path.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	Repository string `json:"repository"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Version is an exact SemVer version; a leading v is allowed, ranges are refused.
	// +kubebuilder:validation:Pattern=`^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`
	Version string `json:"version"`
	// SecretRef names registry or repository credentials (username, password).
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`
	// Insecure allows plain HTTP, for registries on a private network or loopback.
	// +optional
	Insecure bool `json:"insecure,omitempty"`
}

// ValuesReference is a Secret or ConfigMap holding Helm values.
type ValuesReference struct {
	// +kubebuilder:validation:Enum=Secret;ConfigMap
	Kind string `json:"kind"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must be a Kubernetes object name: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	Name string `json:"name"`
	// Key holding the values; defaults to values.yaml.
	// +optional
	Key string `json:"key,omitempty"`
}

// Destination is where the rendered objects go.
type Destination struct {
	// Namespace for namespaced objects that set none; defaults to the Application's namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="must be a namespace name: lower-case letters, digits and '-', starting and ending with a letter or digit"
	Namespace string `json:"namespace,omitempty"`
}

// SyncPolicy says whether Revisions roll out on their own and whether prune runs.
type SyncPolicy struct {
	// Automatic rolls out every planned Revision. False waits for an
	// approval bound to the plan digest.
	// +optional
	Automatic bool `json:"automatic,omitempty"`
	// Force applies every object with force: fields another field manager
	// owns are taken over instead of failing with ApplyConflict. One object
	// opts in with the annotation sync.kuvryn.io/force: "true". The plan marks
	// every forced entry, so an approver sees it before approving.
	// +optional
	Force bool `json:"force,omitempty"`
	// Prune deletes objects that left desired state. Defaults to true.
	// +kubebuilder:default=true
	// +optional
	Prune *bool `json:"prune,omitempty"`
}

// IgnoreRule picks objects by group and kind, and optionally name and
// namespace, and the fields of them to ignore as JSON pointers (RFC 6901).
type IgnoreRule struct {
	// Group of the objects; empty for the core group.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group,omitempty"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
	// Name of the object; empty for every object of the kind.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`
	// Namespace of the object; empty for every namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
	// JSONPointers to the ignored fields, such as /spec/replicas or
	// /metadata/annotations/example.com~1owner. The object's identity
	// (apiVersion, kind, metadata, metadata.name, metadata.namespace) cannot
	// be ignored.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=512
	// +kubebuilder:validation:items:Pattern=`^(/([^/~]|~[01])*)+$`
	// +kubebuilder:validation:XValidation:rule="self.all(p, !(p in ['/apiVersion', '/kind', '/metadata', '/metadata/name', '/metadata/namespace']))",message="must not ignore apiVersion, kind, metadata, metadata.name or metadata.namespace"
	JSONPointers []string `json:"jsonPointers"`
}

// Decryption names the age keys for SOPS files.
type Decryption struct {
	// +kubebuilder:validation:Enum=sops
	Provider string `json:"provider"`
	// SecretRef names a Secret labelled sync.kuvryn.io/decryption-key: "true"
	// whose entries ending in .agekey hold age identities.
	SecretRef LocalObjectReference `json:"secretRef"`
}

// HistoryPolicy bounds how many Revisions are kept.
type HistoryPolicy struct {
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	Limit int32 `json:"limit,omitempty"`
}

// NotificationEvent is a lifecycle event a sink can receive.
// +kubebuilder:validation:Enum=AwaitingApproval;Applying;Healthy;Failed;RolledBack;Diagnosed
type NotificationEvent string

// Notification events; docs/notifications.md says when each fires.
const (
	NotificationAwaitingApproval NotificationEvent = "AwaitingApproval"
	NotificationApplying         NotificationEvent = "Applying"
	NotificationHealthy          NotificationEvent = "Healthy"
	NotificationFailed           NotificationEvent = "Failed"
	NotificationRolledBack       NotificationEvent = "RolledBack"
	NotificationDiagnosed        NotificationEvent = "Diagnosed"
)

// NotificationSubscription sends the listed events to one sink.
type NotificationSubscription struct {
	SinkRef LocalObjectReference `json:"sinkRef"`
	// +kubebuilder:validation:MinItems=1
	// +listType=set
	Events []NotificationEvent `json:"events"`
}

// SyncState says whether live state matches the desired Revision.
type SyncState string

const (
	SyncStateUnknown   SyncState = "Unknown"
	SyncStateSynced    SyncState = "Synced"
	SyncStateOutOfSync SyncState = "OutOfSync"
)

// HealthState is the aggregate kstatus health of the applied objects.
type HealthState string

const (
	HealthUnknown     HealthState = "Unknown"
	HealthProgressing HealthState = "Progressing"
	HealthHealthy     HealthState = "Healthy"
	HealthDegraded    HealthState = "Degraded"
	HealthMissing     HealthState = "Missing"
)

// ApplicationStatus is written by the source-controller (desiredRevision,
// render conditions), the sync-controller (everything else) and the
// notify-controller (NotificationsReady, deliveredNotifications).
type ApplicationStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// DesiredRevision is the Revision rendered from the newest fetched commit.
	// +optional
	DesiredRevision string `json:"desiredRevision,omitempty"`
	// SourceCommit is the commit the Application was last rendered at. A later
	// commit that changes none of the files that render read leaves it, and
	// the Application, as they are.
	// +optional
	SourceCommit string `json:"sourceCommit,omitempty"`

	// +optional
	Sync SyncState `json:"sync,omitempty"`
	// +optional
	Health HealthState `json:"health,omitempty"`
	// Phase of the Revision being worked on, as in its lifecycle.
	// +optional
	Phase RevisionPhase `json:"phase,omitempty"`

	// DeployedRevision is the Revision whose rollout completed last.
	// +optional
	DeployedRevision string `json:"deployedRevision,omitempty"`
	// LastKnownGoodRevision is the newest Revision that became Healthy.
	// +optional
	LastKnownGoodRevision string `json:"lastKnownGoodRevision,omitempty"`
	// HeldRevision was rolled back from and is not applied again until a newer desired state arrives.
	// +optional
	HeldRevision string `json:"heldRevision,omitempty"`

	// History lists retained deployment attempts, newest first, bounded by spec.history.limit.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	History []HistoryEntry `json:"history,omitempty"`

	// DeliveredNotifications records the notifications the notify-controller
	// delivered of the transitions the Revisions show now, oldest first, so
	// that a restarted or new leader sends what is missing and nothing
	// twice. Transitions the Revisions no longer show are dropped from it.
	// +optional
	// +listType=map
	// +listMapKey=sink
	// +listMapKey=id
	// +kubebuilder:validation:MaxItems=32
	DeliveredNotifications []DeliveredNotification `json:"deliveredNotifications,omitempty"`
}

// MaxDeliveredNotifications bounds status.deliveredNotifications.
const MaxDeliveredNotifications = 32

// DeliveredNotification is one notification a sink accepted.
type DeliveredNotification struct {
	// Sink is the NotificationSink that accepted it.
	// +kubebuilder:validation:MaxLength=253
	Sink string `json:"sink"`
	// ID is the notification's id, as its body carries it: one per
	// transition, Application and event.
	// +kubebuilder:validation:MaxLength=64
	ID    string            `json:"id"`
	Event NotificationEvent `json:"event"`
	// +kubebuilder:validation:MaxLength=253
	Revision string `json:"revision"`
}

// HistoryEntry is one deployment attempt.
type HistoryEntry struct {
	Revision string `json:"revision"`
	// Attempt is the Revision's attempt this entry records.
	// +optional
	Attempt int32 `json:"attempt,omitempty"`
	// +optional
	SourceCommit string `json:"sourceCommit,omitempty"`
	// +optional
	PlanDigest string `json:"planDigest,omitempty"`
	// Result is the Revision phase the attempt ended in, or Applying while it runs.
	Result RevisionPhase `json:"result"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// +optional
	Approval *ApprovalRecord `json:"approval,omitempty"`
	// Rollback is true when the attempt was a requested rollback.
	// +optional
	Rollback bool `json:"rollback,omitempty"`
	// Drift is the drift the attempt corrected, for a self-heal attempt:
	// the drifted objects and the hand-edited fields taken back, with who
	// changed them.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Drift string `json:"drift,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=app;apps,categories=kuvryn
// +kubebuilder:printcolumn:name="Sync",type=string,JSONPath=`.status.sync`
// +kubebuilder:printcolumn:name="Health",type=string,JSONPath=`.status.health`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Desired",type=string,JSONPath=`.status.desiredRevision`
// +kubebuilder:printcolumn:name="Deployed",type=string,JSONPath=`.status.deployedRevision`
// +kubebuilder:printcolumn:name="Automatic",type=boolean,JSONPath=`.spec.sync.automatic`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Application is a path in a Repository rendered, planned and rolled out to the cluster.
type Application struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ApplicationSpec   `json:"spec"`
	Status ApplicationStatus `json:"status,omitempty"`
}

// DestinationNamespace is where the Application's namespaced objects that
// name no namespace go: spec.destination.namespace, else the Application's
// own namespace.
func (a *Application) DestinationNamespace() string {
	if ns := a.Spec.Destination.Namespace; ns != "" {
		return ns
	}
	return a.Namespace
}

// +kubebuilder:object:root=true

// ApplicationList is a list of Applications.
type ApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Application `json:"items"`
}
