package v1alpha1

// Annotations, labels, condition types, reasons and other names shared by
// every service and the CLI. They are spelled exactly as the operations guide
// spells them; nothing else in the project writes these strings.

// Annotations on Repositories and ImagePolicies.
const (
	// ReconcileRequestedAtAnnotation asks the source-controller to fetch a
	// Repository now. The push webhook receiver stamps it.
	ReconcileRequestedAtAnnotation = "sync.kuvryn.io/reconcile-requested-at"
	// ScanRequestedAtAnnotation asks the image-controller to scan an ImagePolicy now.
	ScanRequestedAtAnnotation = "sync.kuvryn.io/scan-requested-at"
)

// Approval annotations on Applications. The user sets ApprovedRevision and,
// optionally, ApproveDigest; the admission webhook records the rest.
const (
	ApprovedRevisionAnnotation = "sync.kuvryn.io/approved-revision"
	ApproveDigestAnnotation    = "sync.kuvryn.io/approve-digest"
	ApprovedByAnnotation       = "sync.kuvryn.io/approved-by"
	ApprovedAtAnnotation       = "sync.kuvryn.io/approved-at"
	ApprovedDigestAnnotation   = "sync.kuvryn.io/approved-digest"
)

// Rollback annotations on Applications. `ksync rollback` sets
// RollbackRequested to the target Revision and RollbackRequestID to a new
// id; the admission webhook records who asked, when, and the desired-state
// digest the target had at that moment, anew whenever either changes, so a
// second rollback to the same target is a new request. The sync-controller
// copies the id into the status.approval of the rollout that acts on it.
const (
	RollbackRequestedAnnotation    = "sync.kuvryn.io/rollback-requested"
	RollbackRequestIDAnnotation    = "sync.kuvryn.io/rollback-request-id"
	RollbackRequestedByAnnotation  = "sync.kuvryn.io/rollback-requested-by"
	RollbackRequestedAtAnnotation  = "sync.kuvryn.io/rollback-requested-at"
	RollbackDesiredStateAnnotation = "sync.kuvryn.io/rollback-desired-state"
)

// Annotations on rendered objects that steer the rollout.
const (
	HookAnnotation     = "sync.kuvryn.io/hook"
	SyncWaveAnnotation = "sync.kuvryn.io/sync-wave"
	// ForceAnnotation "true" applies the object with force: fields another
	// field manager owns are taken over instead of failing with ApplyConflict.
	ForceAnnotation = "sync.kuvryn.io/force"

	HelmHookAnnotation = "helm.sh/hook"
	// HelmHookWeightAnnotation orders Helm hooks within their stage, as a
	// sync wave does, when neither sync-wave annotation is set.
	HelmHookWeightAnnotation = "helm.sh/hook-weight"
	ArgoHookAnnotation       = "argocd.argoproj.io/hook"
	ArgoSyncWaveAnnotation   = "argocd.argoproj.io/sync-wave"
)

// OwnedByAnnotation is set on every object an Application applies, to
// "<namespace>/<name>" of that Application. An object another Application
// owns is never applied or pruned: the rollout fails with ApplyConflict
// naming the owner, since both apply as the same field manager and would
// otherwise overwrite each other silently.
const OwnedByAnnotation = "sync.kuvryn.io/owned-by"

// Values of HookAnnotation.
const (
	HookPreSync  = "pre-sync"
	HookPostSync = "post-sync"
	HookSkip     = "skip"
)

// Labels and annotations of discovered Applications. The discovering file is
// an annotation because a repository path is not a valid label value.
const (
	RepositoryLabel          = "sync.kuvryn.io/repository"
	DiscoveredFromAnnotation = "sync.kuvryn.io/discovered-from"
)

// Labels a Secret must carry before a controller reads it.
const (
	GitCredentialsLabel      = "sync.kuvryn.io/git-credentials"
	DecryptionKeyLabel       = "sync.kuvryn.io/decryption-key"
	RegistryCredentialsLabel = "sync.kuvryn.io/registry-credentials"
)

// Labels on objects Kuvryn Sync creates.
const (
	// ApplicationLabel names the Application a Revision or desired-state Secret belongs to.
	ApplicationLabel = "sync.kuvryn.io/application"
	// PreviewLabel names the preview (status.previews[].name of the
	// Repository in RepositoryLabel) a preview Revision and its
	// desired-state Secret belong to. Desired Revisions never carry it.
	PreviewLabel = "sync.kuvryn.io/preview"
)

// Markers that replace Secret values in plan diffs: the sync-controller
// writes them, and ksync keeps exactly these as values already redacted.
const (
	// RedactedMarker replaces a value that has nothing to be compared with.
	RedactedMarker = "***"
	// RedactedUnchangedMarker replaces a value that is the same on both sides.
	RedactedUnchangedMarker = "*** (unchanged)"
	// RedactedOldMarker replaces the live side of a value that changes.
	RedactedOldMarker = "*** (old value)"
	// RedactedNewMarker replaces the desired side of a value that changes.
	RedactedNewMarker = "*** (new value)"
)

// HookFinalizer keeps a hook object until the rollout has read how it
// ended. Without it, ttlSecondsAfterFinished: 0 can delete a finished Job
// before the sync-controller sees it finish, and a succeeded hook would look
// deleted while running.
const HookFinalizer = "sync.kuvryn.io/hook-finalizer"

// DesiredStateSecretType is the type of the Secret holding a Revision's
// rendered objects (gzip'd), owned by the Revision.
const DesiredStateSecretType = "sync.kuvryn.io/desired-state"

// Field managers: every controller writes with Server-Side Apply under its own.
const (
	FieldManagerSource = "kuvryn-source"
	FieldManagerSync   = "kuvryn-sync"
	FieldManagerImage  = "kuvryn-image"
	FieldManagerNotify = "kuvryn-notify"
	// FieldManagerNotifyDelivery writes a NotificationSink's Delivered
	// condition, apart from the Ready its sink controller applies.
	FieldManagerNotifyDelivery = "kuvryn-notify-delivery"
	FieldManagerWeb            = "kuvryn-web"
)

// Condition types.
const (
	ConditionReady                  = "Ready"
	ConditionFetched                = "Fetched"
	ConditionApplicationsDiscovered = "ApplicationsDiscovered"
	ConditionImagesUpdated          = "ImagesUpdated"
	ConditionRendered               = "Rendered"
	ConditionPlanned                = "Planned"
	ConditionAwaitingApproval       = "AwaitingApproval"
	ConditionApproved               = "Approved"
	ConditionRolloutComplete        = "RolloutComplete"
	ConditionHealthy                = "Healthy"
	ConditionSynced                 = "Synced"
	ConditionNotificationsReady     = "NotificationsReady"
	ConditionDelivered              = "Delivered"
)

// Condition and Event reasons: one list for every service.
const (
	ReasonSucceeded            = "Succeeded"
	ReasonProgressing          = "Progressing"
	ReasonFetchFailed          = "FetchFailed"
	ReasonCredentialsRefused   = "CredentialsRefused"
	ReasonRenderFailed         = "RenderFailed"
	ReasonValidationFailure    = "ValidationFailure"
	ReasonDecryptionFailed     = "DecryptionFailed"
	ReasonDiscoveryFailed      = "DiscoveryFailed"
	ReasonPlanFailed           = "PlanFailed"
	ReasonAwaitingApproval     = "AwaitingApproval"
	ReasonApproved             = "Approved"
	ReasonApprovalStale        = "ApprovalStale"
	ReasonApplyConflict        = "ApplyConflict"
	ReasonApplyFailed          = "ApplyFailed"
	ReasonHookFailed           = "HookFailed"
	ReasonHealthFailure        = "HealthFailure"
	ReasonPruneSkipped         = "PruneSkipped"
	ReasonPruned               = "Pruned"
	ReasonRolledBack           = "RolledBack"
	ReasonSuperseded           = "Superseded"
	ReasonDriftCorrected       = "DriftCorrected"
	ReasonHeld                 = "Held"
	ReasonDiagnosed            = "Diagnosed"
	ReasonDisabled             = "Disabled"
	ReasonServiceAccountMissed = "ServiceAccountMissing"
	ReasonNotificationFailed   = "NotificationFailed"
	ReasonSinkNotReady         = "SinkNotReady"
	ReasonScanFailed           = "ScanFailed"
	ReasonNoMatchingTag        = "NoMatchingTag"
	ReasonRefused              = "Refused"
	ReasonPushFailed           = "PushFailed"
)
