package discovery

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// FuzzParse feeds Parse a .ksync.yaml from Git at a configured path, both
// attacker-controlled. A refusal is an error and no Applications; what is
// accepted is only valid, unique, sorted Applications of the Repository's
// namespace and Repository, from a relative path inside the repository, and
// never carrying an approval or rollback annotation.
func FuzzParse(f *testing.F) {
	seeds := []struct{ path, data string }{
		{".ksync.yaml", "apiVersion: sync.kuvryn.io/v1alpha1\nkind: Application\nmetadata:\n  name: api\n  annotations:\n    sync.kuvryn.io/approved-revision: api-0123456789\n    sync.kuvryn.io/approved-by: mallory\nspec:\n  source:\n    path: apps/api\n"},
		{".ksync.yaml", "applications:\n  - metadata: {name: web}\n    spec: {source: {path: apps/web}}\n  - metadata: {name: web}\n"},
		{"apps/.ksync.yaml", "applications:\n  - metadata: {name: a, namespace: other}\n"},
		{".ksync.yaml", "metadata: {name: x}\napplications: [{metadata: {name: y}}]\n"},
		{"../.ksync.yaml", "metadata: {name: x}\n"},
		{"/etc/.ksync.yaml", "metadata: {name: x}\n"},
		{".ksync.yaml", "a: &a [*a, *a]\n"},
		{".ksync.yaml", "metadata: {name: x}\nmetadata: {name: y}\n"},
		{".ksync.yaml", "metadata: {name: UPPER}\n"},
		{".ksync.yaml", "kind: Repository\nmetadata: {name: x}\n"},
		{".ksync.yaml", "\xff\xfe"},
		{".ksync.yaml", ""},
	}
	for _, s := range seeds {
		f.Add(s.path, []byte(s.data))
	}
	// Only a person, through the API server, may approve or roll back.
	personOnly := []string{
		syncv1.ApprovedRevisionAnnotation, syncv1.ApproveDigestAnnotation, syncv1.ApprovedByAnnotation,
		syncv1.ApprovedAtAnnotation, syncv1.ApprovedDigestAnnotation,
		syncv1.RollbackRequestedAnnotation, syncv1.RollbackRequestIDAnnotation, syncv1.RollbackRequestedByAnnotation,
		syncv1.RollbackRequestedAtAnnotation, syncv1.RollbackDesiredStateAnnotation,
	}
	const namespace, repo = "team", "repo"
	f.Fuzz(func(t *testing.T, p string, data []byte) {
		paths := []string{p}
		apps, err := Parse(namespace, repo, paths, map[string][]byte{p: data})
		if err != nil {
			if apps != nil {
				t.Fatalf("Parse refused (%v) but returned %d Applications", err, len(apps))
			}
			return
		}
		if len(apps) > 0 && (strings.HasPrefix(p, "/") || slices.Contains(strings.Split(p, "/"), "..")) {
			t.Fatalf("Parse accepted Applications from %q, a path outside the repository", p)
		}
		for i, app := range apps {
			if errs := validation.IsDNS1123Subdomain(app.Name); len(errs) > 0 {
				t.Fatalf("accepted invalid name %q: %v", app.Name, errs)
			}
			if i > 0 && apps[i-1].Name >= app.Name {
				t.Fatalf("Applications not sorted and unique: %q then %q", apps[i-1].Name, app.Name)
			}
			if app.File != p || app.Annotations[syncv1.DiscoveredFromAnnotation] != p {
				t.Fatalf("Application %q: File %q, discovered-from %q, want %q", app.Name, app.File, app.Annotations[syncv1.DiscoveredFromAnnotation], p)
			}
			if app.Labels[syncv1.RepositoryLabel] != repo {
				t.Fatalf("Application %q: repository label %q, want %q", app.Name, app.Labels[syncv1.RepositoryLabel], repo)
			}
			if app.Spec.Source.RepositoryRef.Name == "" {
				t.Fatalf("Application %q has no repositoryRef", app.Name)
			}
			for _, k := range personOnly {
				if _, ok := app.Annotations[k]; ok {
					t.Fatalf("Application %q kept %s from Git", app.Name, k)
				}
			}
		}
	})
}
