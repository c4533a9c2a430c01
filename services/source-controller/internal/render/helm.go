package render

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/ignore"

	pulledchart "github.com/kuvryn/kuvryn-sync/services/source-controller/internal/chart"
)

// HelmOptions configure the helm renderer.
type HelmOptions struct {
	// ReleaseName is .Release.Name; empty uses Request.Application.
	ReleaseName string
	// Namespace is .Release.Namespace: the Application's destination namespace.
	Namespace string
	// ValuesFiles are files relative to Request.Path, in Git, merged in
	// order after the chart's defaults. They are decrypted as they are read.
	ValuesFiles []string
	// ValuesFrom are the Application's valuesFrom entries, already read from
	// their Secrets and ConfigMaps, merged in order after ValuesFiles.
	ValuesFrom []map[string]any
	// Values are merged last.
	Values map[string]any
	// Chart is a chart pulled from a chart repository. When nil the chart is
	// loaded from Request.Path, with its dependencies vendored under charts/.
	// Render never modifies it, so a cached chart can be shared.
	Chart *chart.Chart
	// KubeVersion is .Capabilities.KubeVersion; empty is v1.37.0, the
	// Kubernetes version of the client libraries the project is pinned to.
	KubeVersion string
	// Timeout bounds the execution of the chart's templates; 0 means
	// DefaultHelmTimeout.
	Timeout time.Duration
	// MaxOutputBytes bounds what the templates render; 0 means
	// DefaultHelmMaxOutputBytes, the most a desired state can hold.
	MaxOutputBytes int64
	// MaxMemoryBytes bounds the memory of the process the templates run
	// in; 0 means DefaultHelmMaxMemoryBytes.
	MaxMemoryBytes int64
}

var utf8BOM = []byte("\xEF\xBB\xBF")

// renderHelm renders a chart the way `helm install` would, without a
// cluster: `lookup` returns nothing, DNS functions are off, and the chart's
// kubeVersion constraint is not checked, as the destination cluster's
// version is not known here. Templates execute in a child process under
// the options' limits (helmchild.go).
func renderHelm(ctx context.Context, repo *repoFS, req Request, dir string) ([]object, error) {
	opts := req.Helm
	release := opts.ReleaseName
	if release == "" {
		release = req.Application
	}
	if err := chartutil.ValidateReleaseName(release); err != nil {
		return nil, validationFailure("", "helm release name %q: %w", release, err)
	}

	files, label, err := loadChartFiles(repo, opts.Chart, dir)
	if err != nil {
		return nil, err
	}
	fromGit := opts.Chart == nil

	values, err := helmValues(repo, req, dir)
	if err != nil {
		return nil, err
	}
	caps, err := capabilities(opts.KubeVersion)
	if err != nil {
		return nil, validationFailure("", "kubeVersion %q: %w", opts.KubeVersion, err)
	}
	rel := ReleaseInfo{Name: release, Namespace: opts.Namespace}
	job, err := encodeJob(templateJob{Files: files, Values: values, Release: rel, KubeVersion: opts.KubeVersion, MaxMemoryBytes: opts.maxMemoryBytes()})
	if err != nil {
		return nil, renderFailed(label, "encoding the chart and values for rendering: %w", err)
	}
	chrt, top, err := prepareTemplates(files, values, rel, caps)
	if err != nil {
		return nil, renderFailed(label, "%w", err)
	}
	merged, err := top.Table("Values")
	if err != nil {
		return nil, renderFailed(label, "computing values: %w", err)
	}
	if err := validateSchemas(chrt, merged); err != nil {
		return nil, validationFailure(chartFile(chrt, fromGit, dir, "values.schema.json"), "validating values against the chart's schema: %w", err)
	}

	rendered, err := executeTemplates(ctx, label, job, opts)
	if err != nil {
		return nil, err
	}

	var out []object
	for _, crd := range chrt.CRDObjects() {
		objs, err := decodeObjects(chartFile(chrt, fromGit, dir, crd.Filename), crd.File.Data, false)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	names := make([]string, 0, len(rendered))
	for name := range rendered {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		// NOTES.txt is text for humans, and partials (_*.tpl) render to
		// nothing of their own; helm install skips both.
		if strings.HasSuffix(name, "NOTES.txt") || strings.HasPrefix(path.Base(name), "_") {
			continue
		}
		objs, err := decodeObjects(chartFile(chrt, fromGit, dir, name), []byte(rendered[name]), false)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// chartFile names a chart file in messages: its path in the repository for
// charts from Git, chart-name/file for charts from a chart repository.
// name is as Helm names rendered templates ("<chart>/templates/x.yaml") or
// chart-relative with the chart name prefixed (CRDs).
func chartFile(chrt *chart.Chart, fromGit bool, dir, name string) string {
	if !fromGit {
		if name == "" {
			return "chart " + chrt.Name()
		}
		if strings.HasPrefix(name, chrt.Name()+"/") {
			return name
		}
		return chrt.Name() + "/" + name
	}
	return path.Join(dir, strings.TrimPrefix(name, chrt.Name()+"/"))
}

// loadChartFiles returns the chart's files, with vendored subchart
// archives unpacked, and the chart's name for messages: read from Git
// through the repository's file system, or copied from a chart pulled from
// a chart repository, so the caller's chart is never modified.
func loadChartFiles(repo *repoFS, pulled *chart.Chart, dir string) ([]*loader.BufferedFile, string, error) {
	var (
		files []*loader.BufferedFile
		label string
		err   error
	)
	if pulled != nil {
		label = "chart " + pulled.Name()
		if len(pulled.Raw) == 0 {
			return nil, label, renderFailed(label, "chart carries no files; load it with Helm's chart loader")
		}
		var size int64
		for _, f := range pulled.Raw {
			files = append(files, &loader.BufferedFile{Name: f.Name, Data: f.Data})
			size += int64(len(f.Data))
		}
		if err := repo.spend(label, size); err != nil {
			return nil, label, err
		}
	} else {
		label = dir
		if err := requireDir(repo, dir); err != nil {
			return nil, label, err
		}
		if files, err = readChartFiles(repo, dir); err != nil {
			return nil, label, err
		}
	}
	if files, err = unpackSubcharts(repo, label, files); err != nil {
		return nil, label, err
	}
	return files, label, nil
}

// readChartFiles reads the chart in dir as helm's directory loader does,
// .helmignore included, but through the repository's file system. Values
// files of the chart and its vendored subcharts are decrypted; templates are
// not SOPS files and are read as they are.
func readChartFiles(repo *repoFS, dir string) ([]*loader.BufferedFile, error) {
	prefix := ""
	if dir != "." {
		prefix = dir + "/"
	}
	rules := ignore.Empty()
	ignoreFile := path.Join(dir, ignore.HelmIgnore)
	data, _, err := repo.readRaw(ignoreFile)
	switch {
	case err == nil:
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, renderFailed(ignoreFile, "%w", err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	rules.AddDefaults()

	var files []*loader.BufferedFile
	skip := func(rel string, fi fs.FileInfo) bool {
		// A chart at the top of a checkout sits beside .git, which is
		// repository metadata, never chart content.
		return path.Base(rel) == ".git" || rules.Ignore(strings.TrimPrefix(rel, prefix), fi)
	}
	err = repo.walkFiles(dir, skip, func(rel string) error {
		name := strings.TrimPrefix(rel, prefix)
		var data []byte
		var err error
		if isChartValuesFile(name) {
			data, _, _, err = repo.readFile(rel)
		} else {
			data, _, err = repo.readRaw(rel)
		}
		if err != nil {
			return err
		}
		files = append(files, &loader.BufferedFile{Name: name, Data: bytes.TrimPrefix(data, utf8BOM)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

// isChartValuesFile reports whether name (chart-relative) is the
// values.yaml of the chart or of a subchart vendored under charts/.
func isChartValuesFile(name string) bool {
	parts := strings.Split(name, "/")
	if len(parts)%2 == 0 || parts[len(parts)-1] != "values.yaml" {
		return false
	}
	for i := 0; i < len(parts)-1; i += 2 {
		if parts[i] != "charts" {
			return false
		}
	}
	return true
}

// subchartArchive matches a vendored subchart archive at any depth. Helm
// skips subcharts whose name starts with '_' or '.', so they are not unpacked.
var subchartArchive = regexp.MustCompile(`^(charts/[^/]+/)*charts/[^/_.][^/]*\.tgz$`)

// unpackSubcharts replaces every vendored subchart archive by its files, as
// if the subchart were vendored as a directory, counting the unpacked bytes
// against the render's budget. Helm would unpack them itself, against a far
// larger limit of its own.
func unpackSubcharts(repo *repoFS, label string, files []*loader.BufferedFile) ([]*loader.BufferedFile, error) {
	for {
		var out []*loader.BufferedFile
		dirs := map[string]bool{}
		for _, f := range files {
			dirs[path.Dir(f.Name)] = true
		}
		unpacked := false
		for _, f := range files {
			if !subchartArchive.MatchString(f.Name) {
				out = append(out, f)
				continue
			}
			unpacked = true
			file := label + ": " + f.Name
			subdir := strings.TrimSuffix(f.Name, ".tgz")
			if dirs[subdir] {
				return nil, renderFailed(label, "%s and %s/ both vendor a subchart", f.Name, subdir)
			}
			zr, err := gzip.NewReader(bytes.NewReader(f.Data))
			if err != nil {
				return nil, renderFailed(file, "subchart archive is not gzip: %w", err)
			}
			tarData, err := repo.consume(file, zr)
			if err != nil {
				return nil, err
			}
			if err := pulledchart.CheckEntries(bytes.NewReader(tarData)); err != nil {
				return nil, validationFailure(file, "%w", err)
			}
			// Helm's archive loader wants gzip and validates every entry's
			// path; stored (uncompressed) gzip costs a copy, not a compression.
			var stored bytes.Buffer
			zw, err := gzip.NewWriterLevel(&stored, gzip.NoCompression)
			if err != nil {
				return nil, renderFailed(file, "%w", err)
			}
			if _, err := zw.Write(tarData); err != nil {
				return nil, renderFailed(file, "%w", err)
			}
			if err := zw.Close(); err != nil {
				return nil, renderFailed(file, "%w", err)
			}
			inner, err := loader.LoadArchiveFiles(&stored)
			if err != nil {
				return nil, renderFailed(file, "unpacking subchart: %w", err)
			}
			for _, g := range inner {
				out = append(out, &loader.BufferedFile{Name: subdir + "/" + g.Name, Data: g.Data})
			}
		}
		files = out
		if !unpacked {
			return files, nil
		}
	}
}

// helmValues merges the user's values, later winning: valuesFiles in
// order, valuesFrom in order, then values. Nulls are kept so that a null
// removes a chart default when Helm coalesces these with the chart's values.
func helmValues(repo *repoFS, req Request, dir string) (map[string]any, error) {
	var layers []map[string]any
	for _, vf := range req.Helm.ValuesFiles {
		rel, err := cleanRelative(vf)
		if err != nil {
			return nil, validationFailure(vf, "valuesFiles entry %w", err)
		}
		data, file, decrypted, err := repo.readFile(path.Join(dir, rel))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, renderFailed(path.Join(dir, rel), "values file does not exist")
			}
			return nil, err
		}
		vals, err := chartutil.ReadValues(data)
		if err != nil {
			return nil, renderFailed(file, "values file is not valid YAML: %s", parserDetail(err, decrypted))
		}
		layers = append(layers, vals)
	}
	for _, vals := range req.Helm.ValuesFrom {
		// valuesFrom may come from Secrets: never repeat them in errors.
		repo.secrets.addValue(map[string]any(vals))
		layers = append(layers, vals)
	}
	layers = append(layers, req.Helm.Values)

	merged := map[string]any{}
	for i := len(layers) - 1; i >= 0; i-- {
		// MergeTables keeps its first argument's values and links in maps of
		// the second: copy, so the caller's maps stay untouched.
		merged = chartutil.MergeTables(merged, deepCopyMap(layers[i]))
	}
	return merged, nil
}

func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return deepCopyMap(t)
	case chartutil.Values:
		return deepCopyMap(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopyValue(e)
		}
		return out
	default:
		return v
	}
}

// defaultKubeVersion is the Kubernetes version of the client libraries the
// project is pinned to (k8s.io/* v0.37): templates that test
// .Capabilities.KubeVersion pick the APIs of a current cluster, not those of
// Helm's built-in default (v1.20).
const defaultKubeVersion = "v1.37.0"

// capabilities is what templates see as .Capabilities.
func capabilities(kubeVersion string) (*chartutil.Capabilities, error) {
	if kubeVersion == "" {
		kubeVersion = defaultKubeVersion
	}
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		return nil, err
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kv
	return caps, nil
}

// schemaURL is where each chart's values.schema.json is registered with
// the compiler; nothing is ever loaded from it.
const schemaURL = "file:///values.schema.json"

// validateSchemas checks values against the values.schema.json of the
// chart and of every enabled subchart, as Helm does, but resolves no
// external $ref: a chart must not make the controller fetch URLs or read
// the controller's files.
func validateSchemas(chrt *chart.Chart, values map[string]any) error {
	var problems []string
	if len(chrt.Schema) > 0 {
		if err := validateSchema(chrt.Schema, values); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %s", chrt.Name(), strings.TrimSpace(err.Error())))
		}
	}
	for _, sub := range chrt.Dependencies() {
		raw, ok := values[sub.Name()]
		if !ok || raw == nil {
			continue
		}
		subValues, ok := raw.(map[string]any)
		if !ok {
			if v, isValues := raw.(chartutil.Values); isValues {
				subValues = v
			} else {
				problems = append(problems, fmt.Sprintf("%s: values are a %T, not a map", sub.Name(), raw))
				continue
			}
		}
		if err := validateSchemas(sub, subValues); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

func validateSchema(schemaJSON []byte, values map[string]any) (err error) {
	defer func() {
		// The validator panics on some malformed schemas; Helm recovers too.
		if r := recover(); r != nil {
			err = fmt.Errorf("unable to validate schema: %v", r)
		}
	}()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return fmt.Errorf("values.schema.json is not valid JSON: %w", err)
	}
	compiler := jsonschema.NewCompiler()
	// No loaders at all: only the schema itself and the built-in
	// metaschemas resolve.
	compiler.UseLoader(jsonschema.SchemeURLLoader{})
	if err := compiler.AddResource(schemaURL, doc); err != nil {
		return fmt.Errorf("values.schema.json cannot be used: %w", err)
	}
	schema, err := compiler.Compile(schemaURL)
	if err != nil {
		return fmt.Errorf("values.schema.json cannot be used (documents outside it are never loaded): %w", err)
	}
	if err := schema.Validate(values); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "jsonschema validation failed with '"+schemaURL+"#'\n"))
	}
	return nil
}
