package v1alpha1

import "k8s.io/apimachinery/pkg/types"

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

// BelongsTo reports whether the Revision is one of app's.
func (r *Revision) BelongsTo(app types.NamespacedName) bool {
	return r.Spec.ApplicationName != "" && r.ApplicationKey() == app
}
