// Package v1alpha1 holds the Kuvryn Sync API: Repository, Application,
// Revision, ImagePolicy and NotificationSink.
// +kubebuilder:object:generate=true
// +groupName=sync.kuvryn.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the API group and version of every Kuvryn Sync kind.
	GroupVersion = schema.GroupVersion{Group: "sync.kuvryn.io", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
