// Package discovery reads the Applications a Repository declares in
// .ksync.yaml files. It is pure: the controller passes the files' bytes in
// and applies what comes out.
package discovery

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// DefaultPath is read when a Repository lists no applicationConfigPaths.
const DefaultPath = ".ksync.yaml"

// Application is one declared Application and the file that declared it.
type Application struct {
	Name        string
	Labels      map[string]string
	Annotations map[string]string
	Spec        syncv1.ApplicationSpec
	File        string
}

// entry is the form of one Application in a file: an Application manifest
// (apiVersion and kind may be left out) or its metadata and spec alone.
type entry struct {
	APIVersion string                 `json:"apiVersion,omitempty"`
	Kind       string                 `json:"kind,omitempty"`
	Metadata   metav1.ObjectMeta      `json:"metadata"`
	Spec       syncv1.ApplicationSpec `json:"spec"`
}

// file is a .ksync.yaml: one Application, or an applications: list.
type file struct {
	entry        `json:",inline"`
	Applications []entry `json:"applications,omitempty"`
}

// Paths returns the configured paths, or the root .ksync.yaml when none are.
func Paths(repo *syncv1.Repository) []string {
	if len(repo.Spec.ApplicationConfigPaths) == 0 {
		return []string{DefaultPath}
	}
	return repo.Spec.ApplicationConfigPaths
}

// Parse reads the files (path -> content, in the order of paths) of the
// Repository repo in namespace and returns the Applications, sorted by name.
// Approval and rollback annotations are dropped: Git never carries approvals.
// A missing default file declares nothing; a missing listed file is an error.
func Parse(namespace, repo string, paths []string, files map[string][]byte) ([]Application, error) {
	var apps []Application
	seen := map[string]string{}
	listed := map[string]string{}
	for _, p := range paths {
		if err := checkPath(p); err != nil {
			return nil, err
		}
		// The API server refuses unclean paths now; a Repository stored
		// before may still list one file twice under two spellings.
		if other, dup := listed[path.Clean(p)]; dup {
			return nil, fmt.Errorf("spec.applicationConfigPaths: %q and %q name the same file", other, p)
		}
		listed[path.Clean(p)] = p
		data, ok := files[p]
		if !ok {
			if p == DefaultPath && len(paths) == 1 {
				return nil, nil
			}
			return nil, fmt.Errorf("%s: file not found in the repository", p)
		}
		entries, err := parseFile(p, data)
		if err != nil {
			return nil, err
		}
		for i, e := range entries {
			app, err := toApplication(namespace, repo, p, i, e)
			if err != nil {
				return nil, err
			}
			if other, dup := seen[app.Name]; dup {
				return nil, fmt.Errorf("%s: Application %q is already declared in %s; names must be unique across files", p, app.Name, other)
			}
			seen[app.Name] = p
			apps = append(apps, app)
		}
	}
	slices.SortFunc(apps, func(a, b Application) int { return strings.Compare(a.Name, b.Name) })
	return apps, nil
}

func checkPath(p string) error {
	switch {
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("spec.applicationConfigPaths: %q must be a relative path", p)
	case slices.Contains(strings.Split(p, "/"), ".."):
		return fmt.Errorf("spec.applicationConfigPaths: %q must not contain '..'", p)
	case path.Base(p) != DefaultPath:
		return fmt.Errorf("spec.applicationConfigPaths: %q must name a file called .ksync.yaml", p)
	}
	return nil
}

func parseFile(p string, data []byte) ([]entry, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var f file
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	single := f.Metadata.Name != "" || f.APIVersion != "" || f.Kind != ""
	if single && len(f.Applications) > 0 {
		return nil, fmt.Errorf("%s: declares both an Application and an applications: list; use one", p)
	}
	if single {
		return []entry{f.entry}, nil
	}
	return f.Applications, nil
}

func toApplication(namespace, repo, p string, i int, e entry) (Application, error) {
	where := fmt.Sprintf("%s: applications[%d]", p, i)
	if e.Metadata.Name != "" {
		where = fmt.Sprintf("%s: Application %q", p, e.Metadata.Name)
	}
	if e.APIVersion != "" && e.APIVersion != syncv1.GroupVersion.String() {
		return Application{}, fmt.Errorf("%s: apiVersion %q, want %s", where, e.APIVersion, syncv1.GroupVersion)
	}
	if e.Kind != "" && e.Kind != "Application" {
		return Application{}, fmt.Errorf("%s: kind %q, want Application", where, e.Kind)
	}
	if errs := validation.IsDNS1123Subdomain(e.Metadata.Name); len(errs) > 0 {
		return Application{}, fmt.Errorf("%s: metadata.name %q: %s", where, e.Metadata.Name, strings.Join(errs, "; "))
	}
	if e.Metadata.Namespace != "" && e.Metadata.Namespace != namespace {
		return Application{}, fmt.Errorf("%s: metadata.namespace %q: discovered Applications live in the Repository's namespace %q", where, e.Metadata.Namespace, namespace)
	}
	if e.Spec.Source.RepositoryRef.Name == "" {
		e.Spec.Source.RepositoryRef.Name = repo
	}
	labels := map[string]string{}
	for k, v := range e.Metadata.Labels {
		labels[k] = v
	}
	labels[syncv1.RepositoryLabel] = repo
	annotations := map[string]string{}
	for k, v := range e.Metadata.Annotations {
		if !fromGitForbidden(k) {
			annotations[k] = v
		}
	}
	annotations[syncv1.DiscoveredFromAnnotation] = p
	return Application{Name: e.Metadata.Name, Labels: labels, Annotations: annotations, Spec: e.Spec, File: p}, nil
}

// fromGitForbidden names the annotations a file in Git may not set: approval
// and rollback requests and records, which only a person may make through the
// API server, and the discovery bookkeeping itself.
func fromGitForbidden(key string) bool {
	switch key {
	case syncv1.ApprovedRevisionAnnotation, syncv1.ApproveDigestAnnotation, syncv1.ApprovedByAnnotation,
		syncv1.ApprovedAtAnnotation, syncv1.ApprovedDigestAnnotation,
		syncv1.RollbackRequestedAnnotation, syncv1.RollbackRequestIDAnnotation, syncv1.RollbackRequestedByAnnotation,
		syncv1.RollbackRequestedAtAnnotation, syncv1.RollbackDesiredStateAnnotation,
		syncv1.DiscoveredFromAnnotation:
		return true
	}
	return false
}
