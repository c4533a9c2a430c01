package render

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// kustomizationFields are the places of a kustomization, and of the builtin
// plugin configurations it may hold inline, that name what Kustomize loads;
// %s is where the reference goes, JSON-quoted.
var kustomizationFields = []string{
	"resources: [%s]",
	"components: [%s]",
	"crds: [%s]",
	"configurations: [%s]",
	"openapi: {path: %s}",
	"patches: [{path: %s}]",
	"patchesJson6902: [{path: %s, target: {kind: Deployment, name: a}}]",
	"replacements: [{path: %s}]",
	"bases: [%s]",
	"secretGenerator: [{name: a, envs: [%s]}]",
	// Generator file sources may be "key=path"; from here on the path after
	// the "=" is a reference as well.
	"configMapGenerator: [{name: a, files: [%s]}]",
	"secretGenerator: [{name: a, files: [%s]}]",
	"generators:\n- |\n  apiVersion: builtin\n  kind: ConfigMapGenerator\n  metadata: {name: a}\n  files: [%s]\n",
}

// firstGeneratorField is the index of the first generator file source.
const firstGeneratorField = 10

// pluginField is the index of the inline plugin configuration, whose paths
// Kustomize resolves against whichever kustomization loads it: the repository
// file system refuses those that leave the repository, not this check.
const pluginField = 12

// remoteShapes are the forms in which Kustomize fetches or clones a
// reference itself: a URL with a scheme, git's user@host:path, and the
// github.com shorthand, each with or without the "git::" prefix.
var remoteShapes = regexp.MustCompile(`^(?:git::)?(?:[a-z][a-z0-9+.-]*://|github\.com[/:]|[a-z][a-z0-9-]*@)`)

// plainPath is the shape of a reference that is a file system path.
var plainPath = regexp.MustCompile(`^[a-z0-9_./-]*$`)

// inGenerator is the path a reference in field i names: generator file
// sources drop their "key=".
func inGenerator(i int, ref string) string {
	if _, p, ok := strings.Cut(ref, "="); ok && i >= firstGeneratorField {
		return p
	}
	return ref
}

// FuzzCheckKustomization puts an arbitrary reference in every field of a
// kustomization that names something to load, and also checks arbitrary
// kustomization files. A reference in a remote shape is refused as a
// ValidationFailure naming the file, before Kustomize sees it; a plain
// path is accepted inside the repository and refused when absolute or
// climbing above it; whatever the file, a refusal is a
// ValidationFailure naming the file.
func FuzzCheckKustomization(f *testing.F) {
	for _, ref := range []string{
		"base", "../base", "https://example.com/k.yaml", "HTTPS://EXAMPLE.COM/x", "git::https://github.com/a/b//c?ref=v1",
		"github.com/org/repo/dir", "git@github.com:org/repo.git", "ssh://git@host/repo", " http://x ", "key=https://x/y",
		"git::git@host:repo", "file:///etc/passwd", "s3::https://bucket/x", "a@b", "user@host:path",
		"/etc/passwd", "../../etc", "a/../../b", "key=../../x",
	} {
		f.Add(uint8(0), ref, []byte(nil))
	}
	f.Add(uint8(255), "", []byte("resources:\n- https://evil/x\n"))
	f.Add(uint8(255), "", []byte("apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\npath: https://evil/p.yaml\n"))
	f.Add(uint8(255), "", []byte("helmCharts: [{name: x, repo: https://charts}]\n"))
	f.Add(uint8(255), "", []byte("a: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, field uint8, ref string, raw []byte) {
		const file = "apps/kustomization.yaml"
		check := func(data []byte) *Error {
			t.Helper()
			err := checkKustomizeFile(file, data)
			if err != nil && (err.Reason != syncv1.ReasonValidationFailure || err.File != file) {
				t.Fatalf("refusal %v: reason %s, file %q; want %s naming %s", err, err.Reason, err.File, syncv1.ReasonValidationFailure, file)
			}
			return err
		}
		check(raw)
		if !utf8.ValidString(ref) || strings.ContainsAny(ref, "\n\r") {
			return
		}
		quoted, _ := json.Marshal(ref)
		i := int(field) % len(kustomizationFields)
		data := strings.Replace(kustomizationFields[i], "%s", string(quoted), 1)
		err := check([]byte(data))
		s := strings.ToLower(strings.TrimSpace(ref))
		remote := remoteShapes.MatchString(s)
		if _, p, ok := strings.Cut(s, "="); ok && i >= firstGeneratorField {
			remote = remote || remoteShapes.MatchString(strings.TrimSpace(p))
		}
		switch {
		case remote && err == nil:
			t.Fatalf("remote reference %q accepted in %q", ref, data)
		case !plainPath.MatchString(s) || strings.Contains(s, "github.com"):
		case i != pluginField && leavesRepository(file, inGenerator(i, ref)) && err == nil:
			t.Fatalf("path %q outside the repository accepted in %q", ref, data)
		case !leavesRepository(file, inGenerator(i, ref)) && err != nil:
			t.Fatalf("repository path %q refused in %q: %v", ref, data, err)
		}
	})
}
