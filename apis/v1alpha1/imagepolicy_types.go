package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ImagePolicySpec says which registry image to scan and how to pick a tag.
type ImagePolicySpec struct {
	// Image is the repository to scan, without tag or digest.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.contains('@') && !self.matches(':[^/]*$')",message="must name an image repository without tag or digest"
	Image string `json:"image"`
	// SecretRef names a dockerconfigjson Secret labelled sync.kuvryn.io/registry-credentials: "true".
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`
	// Interval between scans: a Go duration of at least 1m.
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$')",message="must be a duration such as 30s, 5m or 1h"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$') || duration(self) >= duration('1m')",message="must be at least 1m"
	// +optional
	Interval *metav1.Duration     `json:"interval,omitempty"`
	Policy   ImageSelectionPolicy `json:"policy"`
	// Webhook lets a registry or CI trigger a scan.
	// +optional
	Webhook *WebhookSpec `json:"webhook,omitempty"`
}

// ImageSelectionPolicy chooses a tag: exactly one of semver, tagPattern or digest.
// +kubebuilder:validation:XValidation:rule="[has(self.semver), has(self.tagPattern), has(self.digest)].filter(x, x).size() == 1",message="exactly one of semver, tagPattern or digest must be set"
type ImageSelectionPolicy struct {
	// +optional
	SemVer *SemVerPolicy `json:"semver,omitempty"`
	// +optional
	TagPattern *TagPatternPolicy `json:"tagPattern,omitempty"`
	// +optional
	Digest *DigestPolicy `json:"digest,omitempty"`
}

// SemVerPolicy picks the highest tag inside a SemVer range.
type SemVerPolicy struct {
	// +kubebuilder:validation:MinLength=1
	Range string `json:"range"`
}

// TagPatternPolicy picks the first tag matching a regular expression in the given order.
type TagPatternPolicy struct {
	// Regex is an RE2 regular expression a tag must match.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Regex string `json:"regex"`
	// Extract is the value tags are sorted by, built from the match like
	// Flux's filterTags.extract, such as $ts for the capture group named
	// ts. Empty sorts by the whole tag.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Extract string `json:"extract,omitempty"`
	// Sort compares the extracted values alphabetically or as numbers;
	// tags whose value is not a number are skipped by numerical.
	// +kubebuilder:validation:Enum=alphabetical;numerical
	// +kubebuilder:default=alphabetical
	// +optional
	Sort string `json:"sort,omitempty"`
	// Order desc picks the highest value, asc the lowest.
	// +kubebuilder:validation:Enum=asc;desc
	// +kubebuilder:default=desc
	// +optional
	Order string `json:"order,omitempty"`
}

// Values of TagPatternPolicy.Sort and Order.
const (
	SortAlphabetical = "alphabetical"
	SortNumerical    = "numerical"
	OrderAsc         = "asc"
	OrderDesc        = "desc"
)

// DigestPolicy follows the digest of one moving tag.
type DigestPolicy struct {
	// +kubebuilder:validation:MinLength=1
	Tag string `json:"tag"`
}

// ImagePolicyStatus is written by the image-controller.
type ImagePolicyStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// LatestImage is the selected name:tag@digest.
	// +optional
	LatestImage string `json:"latestImage,omitempty"`
	// +optional
	LastScanTime *metav1.Time `json:"lastScanTime,omitempty"`
	// +optional
	LastHandledScanAt string `json:"lastHandledScanAt,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kuvryn
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`
// +kubebuilder:printcolumn:name="Latest",type=string,JSONPath=`.status.latestImage`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ImagePolicy scans a registry and selects the image to run.
type ImagePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ImagePolicySpec   `json:"spec"`
	Status ImagePolicyStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ImagePolicyList is a list of ImagePolicies.
type ImagePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ImagePolicy `json:"items"`
}
