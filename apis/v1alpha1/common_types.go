package v1alpha1

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must be a Kubernetes object name: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	Name string `json:"name"`
}

// Bounds on lists written into status. Every capped list carries a
// `truncated` flag that says entries were left out.
const (
	MaxPlanEntries    = 200
	MaxDiffBytes      = 2048
	MaxHookEntries    = 50
	MaxHistoryLimit   = 100
	MaxHistoryEntries = MaxHistoryLimit
	MaxMessageBytes   = 1024
)

// ObjectRef identifies one Kubernetes object.
type ObjectRef struct {
	// +optional
	Group string `json:"group,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	Kind    string `json:"kind"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}
