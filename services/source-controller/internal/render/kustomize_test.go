package render

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func kustomizeRepo() map[string]string {
	return map[string]string{
		"base/kustomization.yaml": `resources:
- deployment.yaml
- secret.yaml
secretGenerator:
- name: env
  envs: [app.env]
`,
		"base/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: api
        image: example.com/api:1
`,
		"base/secret.yaml": encrypt("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: kustomize-secret-value\n"),
		"base/app.env":     encrypt("TOKEN=env-secret-value\n"),
		"base/unused.yaml": encrypt("apiVersion: v1\nkind: Secret\nmetadata: {name: unused}\n"),
		"overlays/prod/kustomization.yaml": `namespace: shop
namePrefix: prod-
resources:
- ../../base
patches:
- path: replicas.yaml
`,
		"overlays/prod/replicas.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 3
`,
		"other-team/secret.yaml": encrypt("apiVersion: v1\nkind: Secret\nmetadata: {name: theirs}\n"),
	}
}

func TestRender_Kustomize_BuildsOverlayDecryptingEveryFileAsItIsRead(t *testing.T) {
	root, parent := newRepo(t, kustomizeRepo(), nil)
	dec := &testDecryptor{}
	objs := mustRender(t, Request{Root: root, Path: "overlays/prod", Type: syncv1.RenderKustomize, Decryptor: dec})

	deploy := find(t, objs, "Deployment", "prod-api")
	if deploy.GetNamespace() != "shop" {
		t.Errorf("namespace = %q, want shop", deploy.GetNamespace())
	}
	if r, _, _ := unstructuredInt(deploy.Object, "spec", "replicas"); r != int64(3) {
		t.Errorf("replicas = %#v, want int64(3) from the overlay's patch", r)
	}
	// Decrypted before Kustomize transforms anything: the Secret is renamed
	// by the overlay and keeps its decrypted value.
	db := find(t, objs, "Secret", "prod-db")
	if v, _, _ := unstructuredInt(db.Object, "stringData", "password"); v != "kustomize-secret-value" {
		t.Errorf("password = %v, want the decrypted value", v)
	}
	var env map[string]any
	for _, o := range objs {
		if o.GetKind() == "Secret" && strings.HasPrefix(o.GetName(), "prod-env-") {
			env = o.Object
		}
	}
	if env == nil {
		t.Fatalf("no generated Secret prod-env-* among %v", ids(objs))
	}
	token, _, _ := unstructuredInt(env, "data", "TOKEN")
	if token != base64.StdEncoding.EncodeToString([]byte("env-secret-value")) {
		t.Errorf("generated TOKEN = %v, want the decrypted env value", token)
	}

	assertEqual(t, "files given to the Decryptor", dec.seenPaths(), []string{
		"base/app.env", "base/deployment.yaml", "base/kustomization.yaml", "base/secret.yaml",
		"overlays/prod/kustomization.yaml", "overlays/prod/replicas.yaml",
	})
	assertEqual(t, "decrypted files", sortedCopy(dec.decrypted), []string{"base/app.env", "base/secret.yaml"})
	assertNoPlaintextOnDisk(t, parent, "kustomize-secret-value")
	assertNoPlaintextOnDisk(t, parent, "env-secret-value")
}

func sortedCopy(in []string) []string {
	out := append([]string(nil), in...)
	sort.Strings(out)
	return out
}

func TestRender_Kustomize_EncryptedFileWithoutKeysFailsDecryption(t *testing.T) {
	root, _ := newRepo(t, kustomizeRepo(), nil)
	renderErr(t, Request{Root: root, Path: "overlays/prod", Type: syncv1.RenderKustomize, Decryptor: &testDecryptor{refuse: true}},
		syncv1.ReasonDecryptionFailed, "base/", "file is encrypted and the Application has no decryption keys")
}

func TestRender_Kustomize_RefusesRemoteResourcesWithoutFetchingThem(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(cm("fetched")))
	}))
	defer srv.Close()
	remote := srv.URL + "/cm.yaml"

	tests := []struct {
		name  string
		files map[string]string
		wants []string
	}{
		{
			name:  "http resource",
			files: map[string]string{"app/kustomization.yaml": "resources:\n- " + remote + "\n"},
			wants: []string{"app/kustomization.yaml: resources entry \"" + remote + "\" is a remote reference"},
		},
		{
			name:  "git resource over https",
			files: map[string]string{"app/kustomization.yaml": "resources:\n- https://example.com/org/repo//base?ref=v1\n"},
			wants: []string{"resources entry", "is a remote reference"},
		},
		{
			name:  "github shorthand base",
			files: map[string]string{"app/kustomization.yaml": "bases:\n- github.com/org/repo/base\n"},
			wants: []string{"resources entry \"github.com/org/repo/base\""},
		},
		{
			name:  "scp-style git component",
			files: map[string]string{"app/kustomization.yaml": "components:\n- git@example.com:org/repo.git\n"},
			wants: []string{"components entry \"git@example.com:org/repo.git\""},
		},
		{
			name:  "remote patch",
			files: map[string]string{"app/kustomization.yaml": "resources: [cm.yaml]\npatches:\n- path: " + remote + "\n", "app/cm.yaml": cm("a")},
			wants: []string{"patches.path entry"},
		},
		{
			name: "remote reference in a nested kustomization",
			files: map[string]string{
				"app/kustomization.yaml":  "resources: [../base]\n",
				"base/kustomization.yaml": "resources:\n- " + remote + "\n",
			},
			wants: []string{"base/kustomization.yaml: resources entry"},
		},
		{
			name: "remote path in an inline transformer",
			files: map[string]string{"app/kustomization.yaml": `resources: [cm.yaml]
transformers:
- |
  apiVersion: builtin
  kind: PatchTransformer
  metadata: {name: p}
  path: ` + remote + `
`, "app/cm.yaml": cm("a")},
			wants: []string{"transformers PatchTransformer refers to \"" + remote + "\""},
		},
		{
			name: "remote path in a transformer file",
			files: map[string]string{
				"app/kustomization.yaml": "resources: [cm.yaml]\ntransformers: [patch.yaml]\n",
				"app/cm.yaml":            cm("a"),
				"app/patch.yaml":         "apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\npath: " + remote + "\n",
			},
			wants: []string{"app/patch.yaml: PatchTransformer refers to"},
		},
		{
			name: "remote env file in a generator",
			files: map[string]string{
				"app/kustomization.yaml": "configMapGenerator:\n- name: c\n  files:\n  - key=" + remote + "\n",
			},
			wants: []string{"configMapGenerator.files entry"},
		},
		{
			name:  "helm charts",
			files: map[string]string{"app/kustomization.yaml": "helmCharts:\n- name: x\n  repo: " + remote + "\n"},
			wants: []string{"helmCharts are not supported in kustomizations"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, _ := newRepo(t, tt.files, nil)
			renderErr(t, Request{Root: root, Path: "app", Type: syncv1.RenderKustomize, Decryptor: &testDecryptor{}},
				syncv1.ReasonValidationFailure, tt.wants...)
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the remote server was asked %d times", n)
	}
}

func TestRender_Kustomize_RefusesFilesOutsideTheRepository(t *testing.T) {
	outside := map[string]string{
		"outside/cm.yaml":                 cm("stolen"),
		"outside/base/kustomization.yaml": "resources: [cm.yaml]\n",
		"outside/base/cm.yaml":            cm("stolen-base"),
	}
	tests := []struct {
		name   string
		path   string
		files  func(parent string) map[string]string
		reason string
		wants  []string
	}{
		{
			name: "resource symlink leaving the repository",
			path: "app",
			files: func(string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml": "resources: [cm.yaml]\n",
					"app/cm.yaml":            symlinkPrefix + "../../outside/cm.yaml",
				}
			},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"app/cm.yaml: symlink leads outside the repository"},
		},
		{
			name: "base directory symlink leaving the repository",
			path: "app",
			files: func(string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml": "resources: [base]\n",
					"app/base":               symlinkPrefix + "../../outside/base",
				}
			},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"app/base: symlink leads outside the repository"},
		},
		{
			name: "base above the repository",
			files: func(string) map[string]string {
				return map[string]string{"kustomization.yaml": "resources: [../outside/base]\n"}
			},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"path is outside the repository"},
		},
		{
			name: "absolute resource path",
			files: func(parent string) map[string]string {
				return map[string]string{"kustomization.yaml": "resources: [" + filepath.Join(parent, "outside", "cm.yaml") + "]\n"}
			},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"path is outside the repository"},
		},
		{
			name: "kustomization symlink leaving the repository",
			path: "app",
			files: func(string) map[string]string {
				return map[string]string{"app/kustomization.yaml": symlinkPrefix + "../../outside/base/kustomization.yaml"}
			},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"app/kustomization.yaml: symlink leads outside the repository"},
		},
		{
			// The root-only load restrictor: files of a base are read
			// through that base, never straight from an overlay.
			name: "file from a sibling directory",
			path: "app",
			files: func(string) map[string]string {
				return map[string]string{
					"app/kustomization.yaml": "resources: [../shared/cm.yaml]\n",
					"shared/cm.yaml":         cm("shared"),
				}
			},
			reason: syncv1.ReasonRenderFailed,
			wants:  []string{"kustomize build", "is not in or below"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			root := filepath.Join(parent, "repo")
			writeTree(t, parent, outside)
			writeTree(t, root, tt.files(parent))
			e := renderErr(t, Request{Root: root, Path: tt.path, Type: syncv1.RenderKustomize, Decryptor: &testDecryptor{}}, tt.reason, tt.wants...)
			if strings.Contains(e.Error(), "stolen") {
				t.Errorf("error %q shows content from outside the repository", e)
			}
			if strings.Contains(e.Error(), root) {
				t.Errorf("error %q names the local checkout directory", e)
			}
		})
	}
}

func TestRender_Kustomize_ErrorsDoNotRepeatDecryptedValues(t *testing.T) {
	const value = "decrypted-value-kustomize-quotes"
	root, _ := newRepo(t, map[string]string{
		"app/kustomization.yaml": "resources: [secret.yaml]\nlabels:\n- pairs: {team: shop}\n",
		// Decrypted, labels is a string; Kustomize quotes the node it chokes on.
		"app/secret.yaml": encrypt("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  labels: " + value + "\n"),
	}, nil)
	e := renderErr(t, Request{Root: root, Path: "app", Type: syncv1.RenderKustomize, Decryptor: &testDecryptor{}},
		syncv1.ReasonRenderFailed, "app: kustomize build", "Secret.v1.[noGrp]/s", "[redacted]")
	if strings.Contains(e.Error(), value) {
		t.Errorf("error %q repeats decrypted data", e)
	}
}

func TestRepoFS_RefusesWrites(t *testing.T) {
	root, _ := newRepo(t, map[string]string{"a.yaml": cm("a")}, nil)
	repo, err := openRepo(root, &testDecryptor{}, newRedactor(root))
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	target := filepath.Join(repo.root, "new.yaml")
	writes := map[string]func() error{
		"WriteFile": func() error { return repo.WriteFile(target, []byte("x")) },
		"Create":    func() error { _, err := repo.Create(target); return err },
		"Mkdir":     func() error { return repo.Mkdir(target) },
		"MkdirAll":  func() error { return repo.MkdirAll(target) },
		"RemoveAll": func() error { return repo.RemoveAll(filepath.Join(repo.root, "a.yaml")) },
		"File.Write": func() error {
			f, err := repo.Open(filepath.Join(repo.root, "a.yaml"))
			if err != nil {
				return nil
			}
			_, err = f.Write([]byte("x"))
			return err
		},
	}
	for name, write := range writes {
		if err := write(); err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("%s: error = %v, want a read-only refusal", name, err)
		}
	}
	if !repo.Exists(filepath.Join(repo.root, "a.yaml")) || repo.Exists(target) {
		t.Error("the repository changed")
	}
}
