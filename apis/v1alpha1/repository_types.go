package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// RepositorySpec says where a Git repository is and how to fetch it.
type RepositorySpec struct {
	Git GitSource `json:"git"`

	// PollInterval is how often the repository is fetched when no push
	// webhook asks for it sooner: a Go duration of at least 5s.
	// +kubebuilder:default="1m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$')",message="must be a duration such as 30s, 5m or 1h"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$') || duration(self) >= duration('5s')",message="must be at least 5s"
	// +optional
	PollInterval *metav1.Duration `json:"pollInterval,omitempty"`

	// Webhook lets a Git host's push event trigger an immediate fetch.
	// +optional
	Webhook *WebhookSpec `json:"webhook,omitempty"`

	// ImageUpdate commits images selected by ImagePolicies back to Git.
	// +optional
	ImageUpdate *ImageUpdateSpec `json:"imageUpdate,omitempty"`

	// ApplicationConfigPaths lists repository-relative .ksync.yaml files that
	// declare Applications. Empty reads the root .ksync.yaml.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=1024
	// +kubebuilder:validation:items:XValidation:rule="!self.startsWith('/')",message="must be a relative path"
	// +kubebuilder:validation:items:XValidation:rule="!self.matches('(^|/)[.][.](/|$)')",message="must not contain '..'"
	// +kubebuilder:validation:items:XValidation:rule="!self.matches('[[:cntrl:]]')",message="must not contain control characters"
	// +kubebuilder:validation:items:XValidation:rule="!self.matches('(^|/)[.]/') && !self.contains('//')",message="must be a clean path, without './' or '//', so that the same file cannot be listed twice"
	// +kubebuilder:validation:items:XValidation:rule="self == '.ksync.yaml' || self.endsWith('/.ksync.yaml')",message="must name a file called .ksync.yaml"
	ApplicationConfigPaths []string `json:"applicationConfigPaths,omitempty"`
}

// GitSource is a Git repository URL, the revision to follow and credentials.
type GitSource struct {
	// URL of the repository: https://, http:// or ssh:// (or scp-like user@host:path).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('http://') || self.startsWith('ssh://') || self.matches('^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:.+$')",message="must be an https://, http:// or ssh:// URL, or user@host:path"
	URL string `json:"url"`

	// Revision is a branch, a tag or a full 40-character commit. A branch
	// wins over a tag of the same name; refs/heads/<x> and refs/tags/<x>
	// choose explicitly. Defaults to main.
	// +kubebuilder:default="main"
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Revision string `json:"revision,omitempty"`

	// SecretRef names a Secret labelled sync.kuvryn.io/git-credentials: "true"
	// holding username/password (or password alone as a token) for HTTPS, or
	// identity and known_hosts for SSH.
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`
}

// WebhookSpec names the Secret whose `token` authenticates push webhooks.
type WebhookSpec struct {
	SecretRef LocalObjectReference `json:"secretRef"`
}

// ImageUpdateSpec says where and as whom image bumps are committed.
type ImageUpdateSpec struct {
	// SecretRef names Git credentials allowed to push, labelled
	// sync.kuvryn.io/git-credentials: "true".
	SecretRef LocalObjectReference `json:"secretRef"`
	// Branch to commit to; defaults to spec.git.revision.
	// +optional
	Branch string `json:"branch,omitempty"`
	// Path under which setter markers are rewritten; defaults to the root.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/')",message="must be a relative path"
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|/)[.][.](/|$)')",message="must not contain '..'"
	// +kubebuilder:validation:XValidation:rule="!self.matches('[[:cntrl:]]')",message="must not contain control characters"
	Path string `json:"path,omitempty"`
}

// RepositoryStatus is written by the source-controller (artifact, Ready,
// Fetched, ApplicationsDiscovered) and the image-controller (ImagesUpdated).
type RepositoryStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Artifact is the last fetched commit.
	// +optional
	Artifact *Artifact `json:"artifact,omitempty"`
	// LastHandledReconcileAt is the last sync.kuvryn.io/reconcile-requested-at value acted on.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`
	// DiscoveredApplications counts the Applications declared in .ksync.yaml files.
	// +optional
	DiscoveredApplications int32 `json:"discoveredApplications,omitempty"`
	// ImageUpdate is the image-controller's last write-back.
	// +optional
	ImageUpdate *ImageUpdateStatus `json:"imageUpdate,omitempty"`
}

// ImageUpdateStatus records what the image-controller last wrote back, so
// markers are re-read only when a selected image changes.
type ImageUpdateStatus struct {
	// ObservedImages is a digest of the spec.imageUpdate generation and the
	// selected image of every ImagePolicy in the namespace at the last
	// successful write-back.
	// +optional
	ObservedImages string `json:"observedImages,omitempty"`
	// LastPushCommit is the last commit the image-controller pushed.
	// +optional
	LastPushCommit string `json:"lastPushCommit,omitempty"`
	// LastPushTime is when it was pushed.
	// +optional
	LastPushTime *metav1.Time `json:"lastPushTime,omitempty"`
}

// Artifact is a fetched commit.
type Artifact struct {
	// Revision is spec.git.revision as resolved, such as refs/heads/main.
	Revision string `json:"revision"`
	// Commit is the full commit hash.
	Commit string `json:"commit"`
	// FetchedAt is when the commit was fetched.
	FetchedAt metav1.Time `json:"fetchedAt"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=repo;repos,categories=kuvryn
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.git.url`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.spec.git.revision`
// +kubebuilder:printcolumn:name="Commit",type=string,JSONPath=`.status.artifact.commit`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Repository is a Git repository Kuvryn Sync fetches and renders Applications from.
type Repository struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RepositorySpec   `json:"spec"`
	Status RepositoryStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// RepositoryList is a list of Repositories.
type RepositoryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Repository `json:"items"`
}
