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

	// Previews plans pull requests, merge requests and branches before they
	// merge: dry-runs only, never applied (docs/previews.md).
	// +optional
	Previews *PreviewsSpec `json:"previews,omitempty"`
}

// PreviewProvider is the Git host whose pull or merge requests are previewed.
// +kubebuilder:validation:Enum=github;gitlab
type PreviewProvider string

const (
	PreviewProviderGitHub PreviewProvider = "github"
	PreviewProviderGitLab PreviewProvider = "gitlab"
)

// PreviewsSpec says which refs of a Repository are previewed, how many at
// once, for how long, and what a preview may read.
// +kubebuilder:validation:XValidation:rule="has(self.pullRequests) || (has(self.branches) && size(self.branches) > 0)",message="must preview pullRequests, branches or both"
type PreviewsSpec struct {
	// PullRequests previews the pull requests (github) or merge requests
	// (gitlab) the webhook receiver is told of, or that `ksync plan --ref`
	// asks for.
	// +optional
	PullRequests PreviewProvider `json:"pullRequests,omitempty"`

	// Branches previews every branch whose name matches one of these
	// patterns (Go path.Match syntax, such as preview/*), listed on each poll.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=255
	Branches []string `json:"branches,omitempty"`

	// MaxActive is how many previews are planned at once; later requests
	// wait (Queued) until one closes.
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	// +optional
	MaxActive int32 `json:"maxActive,omitempty"`

	// KeepAfterClose is how long a closed preview and its Revisions are kept.
	// +kubebuilder:default="1h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$')",message="must be a duration such as 30s, 5m or 1h"
	// +optional
	KeepAfterClose *metav1.Duration `json:"keepAfterClose,omitempty"`

	// Decrypt lets previews decrypt SOPS files and read Helm valuesFrom
	// Secrets and private chart credentials. Off, a preview renders without
	// them and its plan says what it left out, because a pull request may
	// come from anyone who can open one.
	// +optional
	Decrypt bool `json:"decrypt,omitempty"`

	// Forks previews pull requests whose head is in another repository.
	// Off, they are refused and status.previews says why.
	// +optional
	Forks bool `json:"forks,omitempty"`

	// SinkRef names a NotificationSink of type github or gitlab in the
	// Repository's namespace that receives each preview's commit status and
	// plan comment.
	// +optional
	SinkRef *LocalObjectReference `json:"sinkRef,omitempty"`
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
	// Previews are the previews the source-controller knows of, open ones
	// first; each one's plans are in the Revisions labelled with its name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	Previews []PreviewStatus `json:"previews,omitempty"`
}

// PreviewState is where one preview is.
// +kubebuilder:validation:Enum=Queued;Rendered;Refused;Failed;Closed
type PreviewState string

const (
	// PreviewQueued waits for one of spec.previews.maxActive to close.
	PreviewQueued PreviewState = "Queued"
	// PreviewRendered has preview Revisions for its commit (or none, when it
	// changes no Application); the sync-controller plans them.
	PreviewRendered PreviewState = "Rendered"
	// PreviewRefused is not previewed, such as a fork's pull request without
	// spec.previews.forks; Message says why.
	PreviewRefused PreviewState = "Refused"
	// PreviewFailed could not be fetched or compared; Message says why, and
	// the source-controller retries.
	PreviewFailed PreviewState = "Failed"
	// PreviewClosed is kept until ClosedAt plus spec.previews.keepAfterClose.
	PreviewClosed PreviewState = "Closed"
)

// PreviewStatus is one preview: a pull request, merge request or branch.
type PreviewStatus struct {
	// Name is pr-<n>, mr-<n> or branch-<10 hex>; the preview's Revisions
	// carry it in the sync.kuvryn.io/preview label.
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Ref is the Git ref fetched, such as refs/pull/12/head.
	// +kubebuilder:validation:MaxLength=512
	Ref string `json:"ref"`
	// +optional
	Number int32 `json:"number,omitempty"`
	// Branch is the previewed branch, or the pull request's head branch.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	Branch string `json:"branch,omitempty"`
	// Commit is the head commit previewed.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Commit string `json:"commit,omitempty"`
	// +optional
	Fork  bool         `json:"fork,omitempty"`
	State PreviewState `json:"state"`
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
	// Applications the preview rendered, by name, at most 100.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=253
	Applications []string `json:"applications,omitempty"`
	// RequestedAt is the newest request for this preview.
	RequestedAt metav1.Time `json:"requestedAt"`
	// +optional
	ClosedAt *metav1.Time `json:"closedAt,omitempty"`
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
