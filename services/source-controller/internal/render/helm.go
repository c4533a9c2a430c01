package render

// The Helm renderer: options, the render itself and how chart files are
// named in messages. Loading the chart, merging values and checking the
// values schema live beside it; templates execute in helmchild.go.

import (
	"context"
	"path"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
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
