package diagnosis

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/graph"
)

// Run reads, as r's account (the Application's service account), the live
// objects of rev's inventory and hooks in namespace, and diagnoses them. A
// nil Diagnosis means nothing was found wrong.
func Run(ctx context.Context, r graph.Reader, namespace string, rev *syncv1.Revision) (*syncv1.Diagnosis, error) {
	snap, err := graph.Collect(ctx, r, namespace, graph.RootsOf(rev))
	if err != nil {
		return nil, fmt.Errorf("diagnosing Revision %s/%s: %w", rev.Namespace, rev.Name, err)
	}
	d := Diagnose(snap)
	if len(d.Causes) == 0 {
		return nil, nil
	}
	return &d, nil
}

// Changed says whether the set of causes differs between two diagnoses: the
// Diagnosed Event fires only then.
func Changed(before, after *syncv1.Diagnosis) bool {
	var b, a []syncv1.Cause
	if before != nil {
		b = before.Causes
	}
	if after != nil {
		a = after.Causes
	}
	return !equality.Semantic.DeepEqual(b, a)
}

// EventMessage is the note of the Diagnosed Event: the first root cause.
func EventMessage(rev string, d *syncv1.Diagnosis) string {
	if d == nil || len(d.Causes) == 0 {
		return ""
	}
	c := d.Causes[0]
	msg := fmt.Sprintf("Revision %s: root cause %s", rev, RootCause(c))
	if len(c.Chain) > 1 {
		msg += fmt.Sprintf(" (via %s)", idOf(c.Chain[0].ObjectRef))
	}
	if n := len(d.Causes); n > 1 {
		msg += fmt.Sprintf("; %d causes in all, see ksync diagnose", n)
	}
	return msg
}
