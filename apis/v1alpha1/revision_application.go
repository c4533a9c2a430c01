package v1alpha1

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
)

// RevisionApplicationField is the field that names a Revision's
// Application; the services index their Revision caches under this name.
const RevisionApplicationField = "spec.applicationName"

// ApplicationKey is the Application the Revision belongs to:
// spec.applicationName in the Revision's namespace. The spec is the only
// record of it: the schema requires it and it never changes, while the
// ApplicationLabel exists for label selectors and can be edited by anyone
// who may update the Revision, so it is never read as a fallback.
func (r *Revision) ApplicationKey() types.NamespacedName {
	return types.NamespacedName{Namespace: r.Namespace, Name: r.Spec.ApplicationName}
}

// BelongsTo reports whether the Revision is one of app's desired states.
// A preview Revision belongs to its preview: it is never approved, rolled
// back to or kept as history.
func (r *Revision) BelongsTo(app types.NamespacedName) bool {
	return r.Spec.ApplicationName != "" && !r.IsPreview() && r.ApplicationKey() == app
}

// DesiredRevisionSelector selects app's desired Revisions by label, leaving
// out its preview Revisions, for readers that list with label selectors.
func DesiredRevisionSelector(app string) labels.Selector {
	is, _ := labels.NewRequirement(ApplicationLabel, selection.Equals, []string{app})
	notPreview, _ := labels.NewRequirement(PreviewLabel, selection.DoesNotExist, nil)
	return labels.NewSelector().Add(*is, *notPreview)
}
