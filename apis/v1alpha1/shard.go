package v1alpha1

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// ShardLabel puts a Repository or an Application in a shard: only the
// controllers started with --shard=<value> reconcile it, and the objects
// without it belong to the controllers started without --shard.
// Applications discovered from a Repository's .ksync.yaml carry their
// Repository's; Revisions and desired-state Secrets carry their
// Application's.
const ShardLabel = "sync.kuvryn.io/shard"

// ShardSelector selects the objects of shard: those labelled with it, or,
// for the default shard "", those without the label.
func ShardSelector(shard string) labels.Selector {
	op, values := selection.Equals, []string{shard}
	if shard == "" {
		op, values = selection.DoesNotExist, nil
	}
	req, err := labels.NewRequirement(ShardLabel, op, values)
	if err != nil {
		// An invalid shard name matches nothing; --shard is validated
		// before any selector is built.
		return labels.Nothing()
	}
	return labels.NewSelector().Add(*req)
}

// ShardOf is the shard an object's labels put it in.
func ShardOf(objLabels map[string]string) string { return objLabels[ShardLabel] }
