package render

import (
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

const inputsConfigMap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {color: blue}\n"

func TestInputs_ACommitChangesARenderOnlyThroughWhatItRead(t *testing.T) {
	yamlApps := map[string]string{
		"apps/web/settings.yaml": inputsConfigMap,
		"apps/web/README.md":     "not a manifest, still in a listed directory\n",
		"apps/api/settings.yaml": inputsConfigMap,
		"README.md":              "docs\n",
	}
	linked := map[string]string{
		"shared/web/settings.yaml": inputsConfigMap,
		"apps/web":                 symlinkPrefix + "../shared/web",
	}
	tests := []struct {
		name    string
		files   map[string]string
		typ     syncv1.RenderType
		path    string
		helm    HelmOptions
		changed []string
		want    bool
	}{
		{name: "nothing changed", files: yamlApps, path: "apps/web", want: false},
		{name: "a file of the app", files: yamlApps, path: "apps/web", changed: []string{"apps/web/settings.yaml"}, want: true},
		{name: "a file the app adds", files: yamlApps, path: "apps/web", changed: []string{"apps/web/more.yaml"}, want: true},
		{name: "a file in a new directory of the app", files: yamlApps, path: "apps/web", changed: []string{"apps/web/db/cm.yaml"}, want: true},
		{name: "another app's file", files: yamlApps, path: "apps/api", changed: []string{"apps/web/settings.yaml", "README.md"}, want: false},
		{name: "a file at the top", files: yamlApps, path: "apps/web", changed: []string{"README.md"}, want: false},
		{name: "a path the app is under, replaced by a file", files: yamlApps, path: "apps/web", changed: []string{"apps"}, want: true},
		{name: "an app at the top sees every file", files: map[string]string{"settings.yaml": inputsConfigMap}, path: "", changed: []string{"docs/README.md"}, want: true},
		{name: "a Kustomize base outside the app's path", files: kustomizeRepo(), typ: syncv1.RenderKustomize, path: "overlays/prod",
			changed: []string{"base/deployment.yaml"}, want: true},
		{name: "a file the base's generator reads", files: kustomizeRepo(), typ: syncv1.RenderKustomize, path: "overlays/prod",
			changed: []string{"base/app.env"}, want: true},
		{name: "a file beside the base that Kustomize never reads", files: kustomizeRepo(), typ: syncv1.RenderKustomize, path: "overlays/prod",
			changed: []string{"base/unused.yaml", "other-team/secret.yaml"}, want: false},
		{name: "a second kustomization file where Kustomize looked for one", files: kustomizeRepo(), typ: syncv1.RenderKustomize, path: "overlays/prod",
			changed: []string{"overlays/prod/Kustomization"}, want: true},
		{name: "the target of a symlinked app directory", files: linked, path: "apps/web", changed: []string{"shared/web/settings.yaml"}, want: true},
		{name: "the symlink itself", files: linked, path: "apps/web", changed: []string{"apps/web"}, want: true},
		{name: "a Helm values file named by the Application", files: merge(under("deploy/web", webChart(t)), map[string]string{
			"deploy/web/values-prod.yaml": "replicaCount: 2\n", "deploy/web-values/dev.yaml": "replicaCount: 1\n",
		}), typ: syncv1.RenderHelm, path: "deploy/web", helm: HelmOptions{Namespace: "prod", ValuesFiles: []string{"values-prod.yaml"}},
			changed: []string{"deploy/web/values-prod.yaml"}, want: true},
		{name: "a Helm chart's template", files: under("deploy/web", webChart(t)), typ: syncv1.RenderHelm, path: "deploy/web",
			helm: HelmOptions{Namespace: "prod"}, changed: []string{"deploy/web/templates/configmap.yaml"}, want: true},
		{name: "a file beside a Helm chart", files: merge(under("deploy/web", webChart(t)), map[string]string{"deploy/other/values.yaml": "a: 1\n"}),
			typ: syncv1.RenderHelm, path: "deploy/web", helm: HelmOptions{Namespace: "prod"}, changed: []string{"deploy/other/values.yaml"}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, _ := newRepo(t, tt.files, nil)
			in := &Inputs{}
			mustRender(t, Request{Root: root, Path: tt.path, Type: tt.typ, Application: "web", Decryptor: &testDecryptor{}, Helm: tt.helm, Inputs: in})
			if got := in.ChangedBy(tt.changed); got != tt.want {
				named, listed := in.Paths()
				t.Fatalf("ChangedBy(%v) = %v, want %v; the render named %v and listed %v", tt.changed, got, tt.want, named, listed)
			}
		})
	}
}

func TestInputs_ChangedBy(t *testing.T) {
	tests := []struct {
		name          string
		named, listed []string
		changed       []string
		want          bool
	}{
		{name: "no change", named: []string{"a/b.yaml"}, want: false},
		{name: "the named file", named: []string{"a/b.yaml"}, changed: []string{"a/b.yaml"}, want: true},
		{name: "a file above the named one", named: []string{"a/b/c.yaml"}, changed: []string{"a/b"}, want: true},
		{name: "a sibling of a named file", named: []string{"a/b.yaml"}, changed: []string{"a/c.yaml"}, want: false},
		{name: "a file below a named, unlisted directory", named: []string{"a"}, changed: []string{"a/c.yaml"}, want: false},
		{name: "a file below a listed directory", listed: []string{"a"}, changed: []string{"a/x/y.yaml"}, want: true},
		{name: "a directory sharing a listed one's prefix", listed: []string{"a"}, changed: []string{"ab/c.yaml", "a.yaml"}, want: false},
		{name: "anything, below a listed top", listed: []string{"."}, changed: []string{"z"}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &Inputs{}
			for _, p := range tt.named {
				in.name(p)
			}
			for _, p := range tt.listed {
				in.list(p)
			}
			if got := in.ChangedBy(tt.changed); got != tt.want {
				t.Fatalf("ChangedBy(%v) = %v, want %v", tt.changed, got, tt.want)
			}
		})
	}
}
