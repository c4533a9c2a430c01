package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// SinkType is how a NotificationSink delivers.
// +kubebuilder:validation:Enum=webhook;slack;github;gitlab
type SinkType string

const (
	SinkWebhook SinkType = "webhook"
	SinkSlack   SinkType = "slack"
	// SinkGitHub and SinkGitLab receive previews (a Repository's
	// spec.previews.sinkRef): a commit status and one comment per
	// Application on the pull or merge request.
	SinkGitHub SinkType = "github"
	SinkGitLab SinkType = "gitlab"
)

// NotificationSinkSpec names the delivery type and the Secret with its
// destination: `url` (https only) and, for webhook, `hmacKey`; for github
// and gitlab, `url` is the repository's web address and `token` an access
// token allowed to set commit statuses and comment.
type NotificationSinkSpec struct {
	Type      SinkType             `json:"type"`
	SecretRef LocalObjectReference `json:"secretRef"`
}

// NotificationSinkStatus is written by the notify-controller.
type NotificationSinkStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=kuvryn
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Delivered",type=string,JSONPath=`.status.conditions[?(@.type=="Delivered")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// NotificationSink is a destination for Application lifecycle notifications.
type NotificationSink struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NotificationSinkSpec   `json:"spec"`
	Status NotificationSinkStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// NotificationSinkList is a list of NotificationSinks.
type NotificationSinkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NotificationSink `json:"items"`
}
