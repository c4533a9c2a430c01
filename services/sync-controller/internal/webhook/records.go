package webhook

import (
	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// guarded is an annotation a person sets and the annotations the webhook
// records for it. A record never outlives the annotation it records.
type guarded struct {
	annotation string
	records    []string
}

var (
	approval = guarded{
		annotation: syncv1.ApprovedRevisionAnnotation,
		records:    []string{syncv1.ApprovedByAnnotation, syncv1.ApprovedAtAnnotation, syncv1.ApprovedDigestAnnotation},
	}
	rollback = guarded{
		annotation: syncv1.RollbackRequestedAnnotation,
		records:    []string{syncv1.RollbackRequestedByAnnotation, syncv1.RollbackRequestedAtAnnotation, syncv1.RollbackDesiredStateAnnotation},
	}
)

// keep gives the records in annotations the values they had in old, removing
// those old did not have, so only the webhook ever changes them.
func (g guarded) keep(annotations, old map[string]string) {
	for _, k := range g.records {
		if v, ok := old[k]; ok {
			annotations[k] = v
		} else {
			delete(annotations, k)
		}
	}
}

// clear removes the records.
func (g guarded) clear(annotations map[string]string) {
	for _, k := range g.records {
		delete(annotations, k)
	}
}

// set writes the records, in the order of g.records.
func (g guarded) set(annotations map[string]string, values ...string) {
	for i, k := range g.records {
		annotations[k] = values[i]
	}
}

// requested reports whether annotations ask anew: the guarded annotation is
// set and differs from old, or old did not have it.
func (g guarded) requested(annotations, old map[string]string) bool {
	v, ok := annotations[g.annotation]
	if !ok {
		return false
	}
	prev, had := old[g.annotation]
	return !had || prev != v
}
