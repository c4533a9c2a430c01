package discovery

import (
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func TestParse(t *testing.T) {
	single := `apiVersion: sync.kuvryn.io/v1alpha1
kind: Application
metadata:
  name: api
  labels: {team: payments}
  annotations:
    sync.kuvryn.io/approved-revision: api-0123456789
    sync.kuvryn.io/approved-by: mallory
    note: kept
spec:
  source:
    path: apps/api
`
	list := `applications:
  - metadata: {name: web}
    spec:
      source: {path: apps/web, render: {type: kustomize}}
  - metadata: {name: worker}
    spec:
      source: {repositoryRef: {name: other}, path: apps/worker}
`
	cases := []struct {
		name    string
		paths   []string
		files   map[string]string
		want    []string
		wantErr string
	}{
		{name: "root file with one Application", paths: []string{".ksync.yaml"}, files: map[string]string{".ksync.yaml": single}, want: []string{"api"}},
		{name: "applications list", paths: []string{".ksync.yaml"}, files: map[string]string{".ksync.yaml": list}, want: []string{"web", "worker"}},
		{name: "monorepo paths are merged and sorted", paths: []string{"teams/b/.ksync.yaml", "teams/a/.ksync.yaml"},
			files: map[string]string{"teams/b/.ksync.yaml": list, "teams/a/.ksync.yaml": single}, want: []string{"api", "web", "worker"}},
		{name: "missing default file declares nothing", paths: []string{".ksync.yaml"}, files: map[string]string{}, want: nil},
		{name: "empty file declares nothing", paths: []string{".ksync.yaml"}, files: map[string]string{".ksync.yaml": "\n"}, want: nil},
		{name: "missing listed file", paths: []string{"a/.ksync.yaml"}, files: map[string]string{}, wantErr: "a/.ksync.yaml: file not found"},
		{name: "name declared twice across files", paths: []string{"a/.ksync.yaml", "b/.ksync.yaml"},
			files: map[string]string{"a/.ksync.yaml": single, "b/.ksync.yaml": single}, wantErr: `b/.ksync.yaml: Application "api" is already declared in a/.ksync.yaml`},
		{name: "name declared twice in one file", paths: []string{".ksync.yaml"},
			files: map[string]string{".ksync.yaml": "applications:\n- metadata: {name: a}\n- metadata: {name: a}\n"}, wantErr: `Application "a" is already declared in .ksync.yaml`},
		{name: "one file under two spellings", paths: []string{"./.ksync.yaml", ".ksync.yaml"},
			files: map[string]string{"./.ksync.yaml": single, ".ksync.yaml": single}, wantErr: `"./.ksync.yaml" and ".ksync.yaml" name the same file`},
		{name: "one file with a doubled slash", paths: []string{"a/.ksync.yaml", "a//.ksync.yaml"},
			files: map[string]string{"a/.ksync.yaml": single, "a//.ksync.yaml": single}, wantErr: `"a/.ksync.yaml" and "a//.ksync.yaml" name the same file`},
		{name: "path with ..", paths: []string{"../x/.ksync.yaml"}, wantErr: "must not contain '..'"},
		{name: "absolute path", paths: []string{"/.ksync.yaml"}, wantErr: "must be a relative path"},
		{name: "wrong file name", paths: []string{"apps/ksync.yaml"}, wantErr: "must name a file called .ksync.yaml"},
		{name: "malformed YAML", paths: []string{".ksync.yaml"}, files: map[string]string{".ksync.yaml": "applications: [\n"}, wantErr: ".ksync.yaml: "},
		{name: "unknown field", paths: []string{".ksync.yaml"}, files: map[string]string{".ksync.yaml": "metadata: {name: a}\nspecc: {}\n"}, wantErr: `unknown field "specc"`},
		{name: "other kind", paths: []string{".ksync.yaml"}, files: map[string]string{".ksync.yaml": "kind: Repository\nmetadata: {name: a}\n"}, wantErr: `kind "Repository", want Application`},
		{name: "invalid name", paths: []string{".ksync.yaml"}, files: map[string]string{".ksync.yaml": "metadata: {name: Bad_Name}\n"}, wantErr: `metadata.name "Bad_Name"`},
		{name: "other namespace", paths: []string{".ksync.yaml"}, files: map[string]string{".ksync.yaml": "metadata: {name: a, namespace: kube-system}\n"}, wantErr: `metadata.namespace "kube-system"`},
		{name: "both forms", paths: []string{".ksync.yaml"}, files: map[string]string{".ksync.yaml": "metadata: {name: a}\napplications: [{metadata: {name: b}}]\n"}, wantErr: "declares both"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string][]byte{}
			for k, v := range tc.files {
				files[k] = []byte(v)
			}
			apps, err := Parse("payments", "platform", tc.paths, files)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, a := range apps {
				names = append(names, a.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("got %v, want %v", names, tc.want)
			}
		})
	}
}

func TestParse_MetadataFromGit(t *testing.T) {
	data := []byte(`metadata:
  name: api
  labels: {team: payments, sync.kuvryn.io/repository: spoofed}
  annotations:
    note: kept
    sync.kuvryn.io/approved-revision: api-1
    sync.kuvryn.io/approve-digest: sha256:x
    sync.kuvryn.io/approved-by: mallory
    sync.kuvryn.io/approved-at: "2026-01-01T00:00:00Z"
    sync.kuvryn.io/approved-digest: sha256:y
    sync.kuvryn.io/rollback-requested: api-0
    sync.kuvryn.io/discovered-from: elsewhere
spec: {source: {path: apps/api}}
`)
	apps, err := Parse("payments", "platform", []string{"apps/.ksync.yaml"}, map[string][]byte{"apps/.ksync.yaml": data})
	if err != nil {
		t.Fatal(err)
	}
	a := apps[0]
	want := map[string]string{"note": "kept", syncv1.DiscoveredFromAnnotation: "apps/.ksync.yaml"}
	if len(a.Annotations) != len(want) {
		t.Errorf("annotations %v, want exactly %v (approvals are never carried from Git)", a.Annotations, want)
	}
	for k, v := range want {
		if a.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, a.Annotations[k], v)
		}
	}
	if a.Labels[syncv1.RepositoryLabel] != "platform" || a.Labels["team"] != "payments" {
		t.Errorf("labels %v", a.Labels)
	}
	if a.Spec.Source.RepositoryRef.Name != "platform" {
		t.Errorf("repositoryRef defaults to the discovering Repository, got %q", a.Spec.Source.RepositoryRef.Name)
	}
}
