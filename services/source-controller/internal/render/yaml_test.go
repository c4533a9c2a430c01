package render

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

const configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
data:
  key: value
`

func cm(name string) string { return strings.ReplaceAll(configMap, "%s", name) }

func TestRender_YAML_ReadsEveryManifestBelowPathInLexicalOrder(t *testing.T) {
	root, _ := newRepo(t, map[string]string{
		"app/b.yaml": cm("b1") + "---\n" + "# only a comment\n---\n" + cm("b2") + "---\n",
		"app/a.yml":  cm("a"),
		"app/sub/c.json": `{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": {"name": "c", "namespace": "shop"}, "spec": {"replicas": 2}}`,
		"app/list.yaml": `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ServiceAccount
  metadata: {name: l1}
- apiVersion: v1
  kind: ServiceAccount
  metadata: {name: l2}
`,
		"app/README.md":          "# not a manifest: {{",
		"app/.ksync.yaml":        "applications: [not, an, object]",
		"app/.github/ci.yaml":    "on: push",
		"app/empty.yaml":         "\n---\n",
		"other/elsewhere.yaml":   cm("elsewhere"),
		"app/sub/deeper/d.yaml":  cm("d"),
		"app/sub/deeper/x.txt":   "text",
		"app/sub/deeper/e.YAML":  cm("e"),
		"app/sub/deeper/.hidden": cm("hidden"),
	}, nil)
	dec := &testDecryptor{}
	objs := mustRender(t, Request{Root: root, Path: "app", Type: syncv1.RenderYAML, Decryptor: dec})

	assertEqual(t, "objects", ids(objs), []string{
		"ConfigMap a", "ConfigMap b1", "ConfigMap b2", "ServiceAccount l1", "ServiceAccount l2",
		"Deployment shop/c", "ConfigMap d", "ConfigMap e",
	})
	if r, _, _ := unstructuredInt(objs[5].Object, "spec", "replicas"); r != int64(2) {
		t.Errorf("replicas = %v, want int64 2", r)
	}
	assertEqual(t, "files given to the Decryptor", dec.seenPaths(), []string{
		"app/a.yml", "app/b.yaml", "app/empty.yaml", "app/list.yaml", "app/sub/c.json",
		"app/sub/deeper/d.yaml", "app/sub/deeper/e.YAML",
	})
}

func unstructuredInt(obj map[string]any, fields ...string) (any, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, errors.New("not a map")
		}
		cur = m[f]
	}
	return cur, true, nil
}

func TestRender_YAML_EmptyPathIsTheRepositoryTop(t *testing.T) {
	root, _ := newRepo(t, map[string]string{"a.yaml": cm("a"), "dir/b.yaml": cm("b")}, nil)
	objs := mustRender(t, Request{Root: root, Decryptor: &testDecryptor{}})
	assertEqual(t, "objects", ids(objs), []string{"ConfigMap a", "ConfigMap b"})
}

func TestRender_YAML_DecryptsEncryptedFilesInMemoryAsItReadsThem(t *testing.T) {
	const password = "correct-horse-battery-staple"
	secret := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: " + password + "\n"
	root, _ := newRepo(t, map[string]string{
		"app/secret.yaml": encrypt(secret),
		"app/cm.yaml":     cm("plain"),
	}, nil)
	dec := &testDecryptor{}
	objs := mustRender(t, Request{Root: root, Path: "app", Decryptor: dec})

	s := find(t, objs, "Secret", "db")
	if got, _, _ := unstructuredInt(s.Object, "stringData", "password"); got != password {
		t.Errorf("password = %v, want the decrypted value", got)
	}
	assertEqual(t, "decrypted files", dec.decrypted, []string{"app/secret.yaml"})
	assertNoPlaintextOnDisk(t, filepath.Dir(root), password)
}

func TestRender_YAML_FilesOutsidePathAreNeverGivenToTheDecryptor(t *testing.T) {
	// Another team's encrypted file, for which this Application has no keys.
	root, _ := newRepo(t, map[string]string{
		"team-a/app.yaml":    cm("a"),
		"team-b/secret.yaml": encrypt("apiVersion: v1\nkind: Secret\nmetadata: {name: b}\n"),
	}, nil)
	dec := &testDecryptor{refuse: true}
	objs := mustRender(t, Request{Root: root, Path: "team-a", Decryptor: dec})
	assertEqual(t, "objects", ids(objs), []string{"ConfigMap a"})
	assertEqual(t, "files given to the Decryptor", dec.seenPaths(), []string{"team-a/app.yaml"})
}

func TestRender_YAML_SymlinksInsideTheRepositoryAreFollowed(t *testing.T) {
	root, _ := newRepo(t, map[string]string{
		"shared/common.yaml": cm("common"),
		"shared/dir/x.yaml":  cm("x"),
		"app/common.yaml":    symlinkPrefix + "../shared/common.yaml",
		"app/linked":         symlinkPrefix + "../shared/dir",
	}, nil)
	objs := mustRender(t, Request{Root: root, Path: "app", Decryptor: &testDecryptor{}})
	assertEqual(t, "objects", ids(objs), []string{"ConfigMap common", "ConfigMap x"})
}

func TestRender_YAML_RefusesHostileInput(t *testing.T) {
	outside := map[string]string{
		"outside/secret.yaml":     cm("stolen"),
		"outside/dir/secret.yaml": cm("stolen-dir"),
	}
	tests := []struct {
		name   string
		files  map[string]string
		path   string
		reason string
		wants  []string
	}{
		{
			name: "absolute source path", path: "/etc", reason: syncv1.ReasonValidationFailure,
			wants: []string{"/etc: source path must be a relative path"},
		},
		{
			name: "source path with ..", path: "app/../../outside", reason: syncv1.ReasonValidationFailure,
			wants: []string{"must not contain '..'"},
		},
		{
			name:   "symlink to a file outside the repository",
			files:  map[string]string{"app/ok.yaml": cm("ok"), "app/leak.yaml": symlinkPrefix + "../../outside/secret.yaml"},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"app/leak.yaml: symlink leads outside the repository"},
		},
		{
			name:   "absolute symlink outside the repository",
			files:  map[string]string{"app/leak": symlinkPrefix + "/"},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"app/leak: symlink leads outside the repository"},
		},
		{
			name:   "symlink to a directory outside the repository",
			files:  map[string]string{"app/leak": symlinkPrefix + "../../outside/dir"},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"app/leak: symlink leads outside the repository"},
		},
		{
			name:   "dangling symlink climbing out of the repository",
			files:  map[string]string{"app/ok.yaml": cm("ok"), "app/leak.yaml": symlinkPrefix + "../../../does/not/exist.yaml"},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"app/leak.yaml: symlink leads outside the repository"},
		},
		{
			name:   "dangling symlink through a directory link out of the repository",
			files:  map[string]string{"app/ok.yaml": cm("ok"), "app/up": symlinkPrefix + "..", "app/leak.yaml": symlinkPrefix + "up/../../missing.yaml"},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"app/leak.yaml: symlink leads outside the repository"},
		},
		{
			name:   "dangling symlink inside the repository",
			files:  map[string]string{"app/ok.yaml": cm("ok"), "app/gone.yaml": symlinkPrefix + "missing.yaml"},
			reason: syncv1.ReasonRenderFailed,
			wants:  []string{"app/gone.yaml: symlink points to nothing"},
		},
		{
			name:   "source path is a symlink leaving the repository",
			files:  map[string]string{"app": symlinkPrefix + "../outside"},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"app: symlink leads outside the repository"},
		},
		{
			name:   "symlink cycle",
			files:  map[string]string{"app/a.yaml": cm("a"), "app/loop": symlinkPrefix + "."},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"app/loop: symlink forms a directory cycle"},
		},
		{
			name:   "malformed YAML names file and document",
			files:  map[string]string{"app/bad.yaml": cm("fine") + "---\nkind: [unclosed\n"},
			reason: syncv1.ReasonRenderFailed,
			wants:  []string{"app/bad.yaml: document 2 is not valid YAML"},
		},
		{
			name:   "duplicate key",
			files:  map[string]string{"app/dup.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nkind: Secret\n"},
			reason: syncv1.ReasonRenderFailed,
			wants:  []string{"app/dup.yaml: document 1 is not valid YAML", "kind"},
		},
		{
			name:   "document that is not an object",
			files:  map[string]string{"app/list.yaml": "- a\n- b\n"},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"app/list.yaml: document 1 is a list, not a Kubernetes object"},
		},
		{
			name:   "object without apiVersion",
			files:  map[string]string{"app/x.yaml": "kind: ConfigMap\nmetadata: {name: a}\n"},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"app/x.yaml: document 1 (a ConfigMap) has no apiVersion"},
		},
		{
			name:   "object without kind",
			files:  map[string]string{"app/x.yaml": cm("ok") + "---\napiVersion: v1\nmetadata: {name: a}\n"},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"app/x.yaml: document 2 has no kind"},
		},
		{
			name:   "object without name",
			files:  map[string]string{"app/x.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: a-}\n"},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"app/x.yaml: document 1 (a ConfigMap) has no metadata.name"},
		},
		{
			name:   "List item without name",
			files:  map[string]string{"app/x.yaml": "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {}}\n"},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"app/x.yaml: document 1, item 1 (a ConfigMap) has no metadata.name"},
		},
		{
			name: "duplicate object across files",
			files: map[string]string{
				"app/a.yaml": cm("other") + "---\n" + cm("same"),
				"app/b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\n",
			},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"app/b.yaml: document 1 defines ConfigMap same, already defined by app/a.yaml (document 2)"},
		},
		{
			name: "duplicate object in another API version of the same group",
			files: map[string]string{
				"app/a.yaml": "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata: {name: h, namespace: ns}\n",
				"app/b.yaml": "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h, namespace: ns}\n",
			},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"defines HorizontalPodAutoscaler.autoscaling ns/h, already defined by app/a.yaml (document 1)"},
		},
		{
			name:   "source path missing",
			files:  map[string]string{"other/a.yaml": cm("a")},
			reason: syncv1.ReasonRenderFailed,
			wants:  []string{"app: path does not exist in the repository"},
		},
		{
			name:   "source path is a file",
			files:  map[string]string{"app": cm("a")},
			reason: syncv1.ReasonRenderFailed,
			wants:  []string{"app: path is not a directory"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, parent := newRepo(t, tt.files, outside)
			p := tt.path
			if p == "" {
				p = "app"
			}
			e := renderErr(t, Request{Root: root, Path: p, Decryptor: &testDecryptor{}}, tt.reason, tt.wants...)
			if strings.Contains(e.Error(), parent) {
				t.Errorf("error %q names the local checkout directory", e)
			}
		})
	}
}

func TestRender_YAML_EncryptedFileWithoutKeysFailsDecryption(t *testing.T) {
	root, _ := newRepo(t, map[string]string{
		"app/cm.yaml":     cm("a"),
		"app/secret.yaml": encrypt("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"),
	}, nil)
	e := renderErr(t, Request{Root: root, Path: "app", Decryptor: &testDecryptor{refuse: true}},
		syncv1.ReasonDecryptionFailed, "app/secret.yaml: file is encrypted and the Application has no decryption keys")
	if e.File != "app/secret.yaml" {
		t.Errorf("File = %q, want app/secret.yaml", e.File)
	}
	if !errors.Is(e, errNoKeys) {
		t.Error("the Decryptor's error is not wrapped")
	}
}

func TestRender_YAML_MalformedDecryptedFileWithholdsParserDetails(t *testing.T) {
	const password = "hunter2-but-longer"
	root, _ := newRepo(t, map[string]string{
		"app/secret.yaml": encrypt("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {password: " + password + "\n"),
	}, nil)
	e := renderErr(t, Request{Root: root, Path: "app", Decryptor: &testDecryptor{}},
		syncv1.ReasonRenderFailed, "app/secret.yaml: document 1 is not valid YAML", "details withheld because the file was decrypted")
	if strings.Contains(e.Error(), password) {
		t.Errorf("error %q repeats decrypted data", e)
	}
}

func TestRender_RefusesRequestsItCannotServe(t *testing.T) {
	root, _ := newRepo(t, map[string]string{"a.yaml": cm("a")}, nil)
	tests := []struct {
		name   string
		req    Request
		reason string
		want   string
	}{
		{name: "no Decryptor", req: Request{Root: root}, reason: syncv1.ReasonRenderFailed, want: "no Decryptor"},
		{name: "relative root", req: Request{Root: "repo", Decryptor: &testDecryptor{}}, reason: syncv1.ReasonRenderFailed, want: "not an absolute path"},
		{name: "unknown type", req: Request{Root: root, Type: "jsonnet", Decryptor: &testDecryptor{}}, reason: syncv1.ReasonValidationFailure, want: `unknown render type "jsonnet"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			renderErr(t, tt.req, tt.reason, tt.want)
		})
	}
}

func TestRender_CanceledContextStopsTheRender(t *testing.T) {
	root, _ := newRepo(t, map[string]string{"a.yaml": cm("a")}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Render(ctx, Request{Root: root, Decryptor: &testDecryptor{}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Render error = %v, want context.Canceled", err)
	}
}

func TestRender_RefusesInputPastTheByteBudget(t *testing.T) {
	big := strings.Repeat("#", MaxInputBytes/2+1)
	root, _ := newRepo(t, map[string]string{"app/a.yaml": big, "app/b.yaml": big}, nil)
	renderErr(t, Request{Root: root, Path: "app", Decryptor: &testDecryptor{}},
		syncv1.ReasonRenderFailed, "app/b.yaml: reading it takes the render past 67108864 bytes of input")
}
