// Package printers renders Kuvryn Sync objects for ksync: aligned tables,
// plans and JSON or YAML, from typed objects and without a cluster.
package printers

import (
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Options steer the tables.
type Options struct {
	// AllNamespaces adds a NAMESPACE column first.
	AllNamespaces bool
	// Wide adds the columns of -o wide.
	Wide bool
	// Color colours states; see ColorEnabled.
	Color bool
	// Now is the reference for AGE.
	Now time.Time
}

// Age is the kubectl-style age of t at now.
func Age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// Timestamp is t in RFC 3339, UTC; empty for nil.
func Timestamp(t *metav1.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// ShortCommit is the first 12 characters of a commit hash.
func ShortCommit(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// ShortDigest keeps the algorithm and the first 12 hex digits of a digest.
func ShortDigest(digest string) string {
	algo, hex, ok := strings.Cut(digest, ":")
	if !ok || len(hex) <= 12 {
		return digest
	}
	return algo + ":" + hex[:12]
}
