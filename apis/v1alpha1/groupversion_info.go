// Package v1alpha1 holds the Kuvryn Sync API: Repository, Application,
// Revision, ImagePolicy and NotificationSink.
// +kubebuilder:object:generate=true
// +groupName=sync.kuvryn.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of every Kuvryn Sync kind.
	GroupVersion = schema.GroupVersion{Group: "sync.kuvryn.io", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the kinds to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&Repository{}, &RepositoryList{},
		&Application{}, &ApplicationList{},
		&Revision{}, &RevisionList{},
		&ImagePolicy{}, &ImagePolicyList{},
		&NotificationSink{}, &NotificationSinkList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
