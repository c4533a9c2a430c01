package render

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// kustomizeMu serialises builds: Kustomize keeps its OpenAPI schema in
// package state, and concurrent builds race on it.
var kustomizeMu sync.Mutex

// renderKustomize builds the kustomization in dir (repository-relative) on
// the repository's file system, with files loaded only from below each
// kustomization's own directory and only builtin plugins.
func renderKustomize(repo *repoFS, dir string) ([]object, error) {
	if err := requireDir(repo, dir); err != nil {
		return nil, err
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsRootOnly
	opts.PluginConfig = types.DisabledPluginConfig()

	kustomizeMu.Lock()
	resMap, err := krusty.MakeKustomizer(opts).Run(repo, filepath.Join(repo.root, filepath.FromSlash(dir)))
	kustomizeMu.Unlock()
	if repo.refusal != nil {
		return nil, repo.refusal
	}
	if err != nil {
		return nil, renderFailed(dir, "kustomize build: %w", err)
	}

	resources := resMap.Resources()
	out := make([]object, 0, len(resources))
	for i, res := range resources {
		where := fmt.Sprintf("kustomize output object %d", i+1)
		j, err := res.MarshalJSON()
		if err != nil {
			return nil, renderFailed(dir, "%s: %w", where, err)
		}
		var m map[string]any
		if err := utiljson.Unmarshal(j, &m); err != nil {
			return nil, renderFailed(dir, "%s: %w", where, err)
		}
		objs, err := expandList(dir, where, m)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// checkKustomizeFile refuses references that would make Kustomize reach
// past the repository: Kustomize fetches http(s) URLs itself and clones git
// URLs by running git, before any file system is involved. It runs on every
// file as Kustomize reads it, so a kustomization is checked before Kustomize
// acts on any of its entries, and so is every builtin plugin configuration
// (generators, transformers) wherever it lives.
func checkKustomizeFile(file string, data []byte) *Error {
	if isKustomizationFile(file) {
		return checkKustomization(file, data)
	}
	switch strings.ToLower(path.Ext(file)) {
	case ".yaml", ".yml", ".json":
		return checkPluginConfigs(file, "", data)
	}
	return nil
}

func isKustomizationFile(file string) bool {
	base := path.Base(file)
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if base == name {
			return true
		}
	}
	return false
}

// checkKustomization checks every field of a kustomization that names a
// file, a directory or a repository.
func checkKustomization(file string, data []byte) *Error {
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		// Kustomize parses it the same way and reports the error itself.
		return nil
	}
	if len(k.HelmCharts) > 0 || len(k.HelmChartInflationGenerator) > 0 || k.HelmGlobals != nil {
		return validationFailure(file, "helmCharts are not supported in kustomizations; render the chart with render type helm")
	}
	k.FixKustomization()

	type ref struct{ field, value string }
	var refs []ref
	add := func(field string, values ...string) {
		for _, v := range values {
			refs = append(refs, ref{field, v})
		}
	}
	add("resources", k.Resources...)
	add("components", k.Components...)
	add("crds", k.Crds...)
	add("configurations", k.Configurations...)
	add("openapi.path", k.OpenAPI["path"])
	//lint:ignore SA1019 kustomizations in Git may still use it; its paths must be checked
	for _, p := range k.PatchesStrategicMerge {
		if !strings.Contains(string(p), "\n") {
			// Not an inline patch.
			add("patchesStrategicMerge", string(p))
		}
	}
	for _, p := range k.Patches {
		add("patches.path", p.Path)
	}
	//lint:ignore SA1019 kustomizations in Git may still use it; its paths must be checked
	for _, p := range k.PatchesJson6902 {
		add("patchesJson6902.path", p.Path)
	}
	for _, r := range k.Replacements {
		add("replacements.path", r.Path)
	}
	for _, g := range k.ConfigMapGenerator {
		add("configMapGenerator.files", sourcePaths(g.FileSources)...)
		add("configMapGenerator.envs", g.EnvSources...)
	}
	for _, g := range k.SecretGenerator {
		add("secretGenerator.files", sourcePaths(g.FileSources)...)
		add("secretGenerator.envs", g.EnvSources...)
	}
	plugins := []struct {
		field   string
		entries []string
	}{{"generators", k.Generators}, {"transformers", k.Transformers}, {"validators", k.Validators}}
	for _, p := range plugins {
		field := p.field
		for _, e := range p.entries {
			if strings.Contains(e, "\n") {
				// An inline plugin configuration.
				if err := checkPluginConfigs(file, field, []byte(e)); err != nil {
					return err
				}
				continue
			}
			add(field, e)
		}
	}
	for _, r := range refs {
		if isRemote(r.value) {
			return validationFailure(file, "%s entry %q is a remote reference; only files in the repository are rendered", r.field, r.value)
		}
	}
	// Refused here rather than when Kustomize opens the path, so the message
	// names the kustomization and the entry as written.
	for _, r := range refs {
		if leavesRepository(file, r.value) {
			return validationFailure(file, "%s entry %q: path is outside the repository", r.field, r.value)
		}
	}
	return nil
}

// leavesRepository says whether ref, a path in the kustomization file, is
// absolute or climbs above the repository.
func leavesRepository(file, ref string) bool {
	if path.IsAbs(ref) {
		return true
	}
	p := path.Join(path.Dir(file), ref)
	return p == ".." || strings.HasPrefix(p, "../")
}

// sourcePaths drops the optional "key=" of generator file sources.
func sourcePaths(sources []string) []string {
	out := make([]string, 0, len(sources))
	for _, s := range sources {
		out = append(out, s)
		if _, p, ok := strings.Cut(s, "="); ok {
			out = append(out, p)
		}
	}
	return out
}

var (
	builtinPluginKinds = sync.OnceValue(func() map[string]bool {
		kinds := map[string]bool{}
		for _, name := range krusty.GetBuiltinPluginNames() {
			kinds[name] = true
		}
		return kinds
	})
	// pluginPathFields are the fields of builtin plugin configurations that
	// Kustomize loads files (or URLs) from.
	pluginPathFields = map[string]bool{
		"path": true, "paths": true, "targetFilePath": true, "files": true, "envs": true, "env": true,
		"valuesFile": true, "additionalValuesFiles": true, "repo": true, "chartHome": true,
	}
)

// checkPluginConfigs checks the builtin plugin configurations among the
// YAML documents in data. Files that are not YAML are not plugin
// configurations and pass.
func checkPluginConfigs(file, field string, data []byte) *Error {
	docs, err := splitDocuments(data)
	if err != nil {
		return nil
	}
	for _, doc := range docs {
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			continue
		}
		kind, _ := m["kind"].(string)
		if !builtinPluginKinds()[kind] {
			continue
		}
		if kind == "HelmChartInflationGenerator" {
			return validationFailure(file, "HelmChartInflationGenerator is not supported; render the chart with render type helm")
		}
		if remote, ok := findRemote(m, false); ok {
			where := kind
			if field != "" {
				where = field + " " + kind
			}
			return validationFailure(file, "%s refers to %q, a remote reference; only files in the repository are rendered", where, remote)
		}
	}
	return nil
}

// findRemote returns the first remote reference among the path fields of v.
func findRemote(v any, pathField bool) (string, bool) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if r, ok := findRemote(t[k], pluginPathFields[k]); ok {
				return r, true
			}
		}
	case []any:
		for _, e := range t {
			if r, ok := findRemote(e, pathField); ok {
				return r, true
			}
		}
	case string:
		if !pathField {
			return "", false
		}
		for _, s := range sourcePaths([]string{t}) {
			if isRemote(s) {
				return t, true
			}
		}
	}
	return "", false
}

// scpUser matches the "user@host:" form git accepts for SSH URLs.
var scpUser = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*@`)

// isRemote reports whether Kustomize would fetch ref over the network or
// clone it with git rather than read it from the repository: URLs with a
// scheme, SCP-style user@host:path, and github.com shorthands, with or
// without Kustomize's "git::" prefix.
func isRemote(ref string) bool {
	s := strings.TrimSpace(ref)
	if s == "" {
		return false
	}
	lower := strings.TrimPrefix(strings.ToLower(s), "git::")
	if strings.Contains(lower, "://") ||
		strings.HasPrefix(lower, "github.com/") || strings.HasPrefix(lower, "github.com:") ||
		scpUser.MatchString(lower) {
		return true
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https")
}
