package manager

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// IndexRevisionsByApplication indexes the cached Revisions under
// syncv1.RevisionApplicationField by the Application each belongs to, so
// that a service lists an Application's Revisions with
// client.MatchingFields{syncv1.RevisionApplicationField: name}. Preview
// Revisions are left out: they are never an Application's history.
func IndexRevisionsByApplication(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &syncv1.Revision{}, syncv1.RevisionApplicationField, func(obj client.Object) []string {
		rev := obj.(*syncv1.Revision)
		if rev.IsPreview() {
			return nil
		}
		return []string{rev.ApplicationKey().Name}
	}); err != nil {
		return fmt.Errorf("indexing Revisions by %s: %w", syncv1.RevisionApplicationField, err)
	}
	return nil
}
