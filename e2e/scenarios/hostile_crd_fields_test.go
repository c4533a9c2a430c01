package scenarios_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

// crdFieldCase is one hostile value of one field of a Repository or an
// Application, and the refusal it must get.
type crdFieldCase struct {
	name string
	// repo and app change the valid Repository "platform" and Application
	// "web" before they are created; a nil app creates no Application.
	repo func(r *syncv1.Repository)
	app  func(a *syncv1.Application)
	// pollInterval, when set, is written into the Repository as it is,
	// past what a typed client can express.
	pollInterval string
	// tree is added to the Git repository, beside crdFieldTree.
	tree []testgit.Change
	// objects are created in the entry's namespace before the Repository.
	objects func(ns string) []client.Object
	// refusal is the API server's answer to storing the object, naming the
	// field; kind, condition, reason and wants are then unused.
	refusal string
	// kind (Repository, Application or ImagePolicy) and condition say
	// where the controllers refuse: the condition is False with reason and
	// a message naming each of wants.
	kind, condition, reason string
	wants                   []string
	// destination is where the source would have applied, when it is not
	// the entry's own namespace; tenant creates it as another tenant's,
	// with its own deployer the entry's deployer may not act as.
	destination string
	tenant      bool
	// applied marks an entry that must be applied, the controls, with
	// the color its ConfigMap settings must hold.
	applied bool
	color   string
	// after checks more than that nothing was applied.
	after func(t *testing.T, ns string)
}

// crdFieldTree is the Git repository of every entry: a directory of
// manifests and a chart from Git, each rendering the ConfigMap settings,
// so that "nothing applied" is "no ConfigMap settings anywhere".
var crdFieldTree = []testgit.Change{
	testgit.File("apps/settings.yaml", settingsYAML("blue")),
	testgit.File("chart/Chart.yaml", "apiVersion: v2\nname: settings\nversion: 1.0.0\n"),
	testgit.File("chart/templates/settings.yaml",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {color: {{ .Values.color | default \"blue\" | quote }}}\n"),
}

func crdFieldRepository(ns, url string) *syncv1.Repository {
	return &syncv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Name: "platform", Namespace: ns},
		Spec: syncv1.RepositorySpec{
			Git:          syncv1.GitSource{URL: url, Revision: testgit.DefaultBranch},
			PollInterval: &metav1.Duration{Duration: 5 * time.Second},
		},
	}
}

func crdFieldApplication(ns string) *syncv1.Application {
	return &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: syncv1.ApplicationSpec{
			Source:             syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "platform"}, Path: "apps"},
			ServiceAccountName: "deployer",
			Sync:               syncv1.SyncPolicy{Automatic: true},
		},
	}
}

// helmFromGit renders the chart of crdFieldTree.
func helmFromGit(a *syncv1.Application) {
	a.Spec.Source.Path = "chart"
	a.Spec.Source.Render = syncv1.Render{Type: syncv1.RenderHelm, Helm: &syncv1.HelmRender{}}
}

// nestedValues is Helm values nested depth maps deep.
func nestedValues(depth int) []byte {
	return []byte(strings.Repeat(`{"a":`, depth) + `"deep"` + strings.Repeat("}", depth))
}

// TestE2E_HostileCRDField_IsRefusedByNameAndNothingIsApplied gives the
// real services hostile values of Repository and Application fields that
// reach the controllers, or that only admission stops (the rules
// e2e/apivalidation proves are not repeated; symlinks and traversal inside
// Git trees are TestHostileGitTree_* in the source-controller). Each entry
// has its own namespace. Every refused entry must be refused by name, and
// nothing of it applied: no ConfigMap in the namespace it would have
// reached, no deployed Revision, no Application discovered. The control,
// created last, proves the same check sees an applied object; once it is
// Healthy every other entry has had as long to go wrong.
func TestE2E_HostileCRDField_IsRefusedByNameAndNothingIsApplied(t *testing.T) {
	t.Parallel()
	// The source-controller runs in this test's working directory, where a
	// ProxyCommand given to an ssh binary would create the marker.
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	marker := ".kuvryn-proxycommand-ran"
	// outside holds a .ksync.yaml outside every repository, which a symlink
	// in the tree points to.
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, ".ksync.yaml"), []byte(`metadata: {name: stolen}
spec:
  source: {path: apps}
  serviceAccountName: deployer
  sync: {automatic: true}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	urlRefusal := "spec.git.url: Invalid value"
	urlRule := "must be an https://, http:// or ssh:// URL"
	cases := []crdFieldCase{
		{name: "git URL with file://", repo: func(r *syncv1.Repository) { r.Spec.Git.URL = "file:///etc/kuvryn" },
			refusal: urlRefusal + `: "file:///etc/kuvryn": ` + urlRule},
		{name: "git URL with the ext:: transport", repo: func(r *syncv1.Repository) { r.Spec.Git.URL = "ext::sh -c touch% /tmp/kuvryn-ext" },
			refusal: urlRefusal + `: "ext::sh -c touch% /tmp/kuvryn-ext": ` + urlRule},
		{name: "git URL that is an --upload-pack option", repo: func(r *syncv1.Repository) { r.Spec.Git.URL = "--upload-pack=touch /tmp/kuvryn-upload-pack" },
			refusal: urlRefusal + `: "--upload-pack=touch /tmp/kuvryn-upload-pack": ` + urlRule},
		{name: "imageUpdate.path climbing out", repo: func(r *syncv1.Repository) {
			r.Spec.ImageUpdate = &syncv1.ImageUpdateSpec{SecretRef: syncv1.LocalObjectReference{Name: "push"}, Path: "apps/../../outside"}
		}, refusal: `spec.imageUpdate.path: Invalid value: "apps/../../outside": must not contain '..'`},
		{name: "absolute imageUpdate.path", repo: func(r *syncv1.Repository) {
			r.Spec.ImageUpdate = &syncv1.ImageUpdateSpec{SecretRef: syncv1.LocalObjectReference{Name: "push"}, Path: "/etc"}
		}, refusal: `spec.imageUpdate.path: Invalid value: "/etc": must be a relative path`},
		{name: "pollInterval past the largest Go duration", pollInterval: "2562048h",
			refusal: "spec.pollInterval: Invalid value: \"string\": type conversion error from 'string' to 'google.protobuf.Duration' evaluating rule"},

		// The credentials get the fetch past its first check, to the URL.
		{name: "ssh URL whose host is a ProxyCommand option", objects: sshCredentials(t), repo: func(r *syncv1.Repository) {
			r.Spec.Git.URL = "ssh://-oProxyCommand=touch$IFS" + marker + "/platform.git"
			r.Spec.Git.SecretRef = &syncv1.LocalObjectReference{Name: "git-ssh"}
		}, kind: "Repository", condition: syncv1.ConditionReady, reason: syncv1.ReasonFetchFailed,
			wants: []string{"-oProxyCommand=touch$IFS" + marker},
			after: func(t *testing.T, ns string) {
				if _, err := os.Stat(filepath.Join(cwd, marker)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the ProxyCommand of the URL ran: %s exists (%v)", marker, err)
				}
			}},
		{name: "git revision climbing out of refs/heads", repo: func(r *syncv1.Repository) { r.Spec.Git.Revision = "../../config" },
			kind: "Repository", condition: syncv1.ConditionReady, reason: syncv1.ReasonFetchFailed,
			wants: []string{`revision "../../config"`}},
		{name: "applicationConfigPaths entry through a directory symlink out of the tree", repo: func(r *syncv1.Repository) {
			r.Spec.ApplicationConfigPaths = []string{"teams/.ksync.yaml"}
		}, tree: []testgit.Change{testgit.Symlink("teams", outside)},
			kind: "Repository", condition: syncv1.ConditionReady, reason: syncv1.ReasonDiscoveryFailed,
			wants: []string{"teams/.ksync.yaml"}},
		// A reference that is a path, not a name, would be refused by
		// client-go before reading, which the controllers took for a
		// transient error and retried forever; admission refuses it.
		{name: "decryption secretRef that is a path", app: func(a *syncv1.Application) {
			a.Spec.Decryption = &syncv1.Decryption{Provider: "sops", SecretRef: syncv1.LocalObjectReference{Name: "../sops-age"}}
		}, refusal: `spec.decryption.secretRef.name: Invalid value: "../sops-age": must be a Kubernetes object name`},
		{name: "helm valuesFrom naming a Secret by a path", app: func(a *syncv1.Application) {
			helmFromGit(a)
			a.Spec.Source.Render.Helm.ValuesFrom = []syncv1.ValuesReference{{Kind: "Secret", Name: "../values"}}
		}, refusal: `spec.source.render.helm.valuesFrom[0].name: Invalid value: "../values": must be a Kubernetes object name`},
		{name: "service account that is a path", app: func(a *syncv1.Application) { a.Spec.ServiceAccountName = "../deployer" },
			refusal: `spec.serviceAccountName: Invalid value: "../deployer": must be a Kubernetes object name`},
		{name: "destination namespace that is a path", destination: "../kube-system",
			app:     func(a *syncv1.Application) { a.Spec.Destination.Namespace = "../kube-system" },
			refusal: `spec.destination.namespace: Invalid value: "../kube-system": must be a namespace name`},
		{name: "git secretRef that is a path into another namespace", repo: func(r *syncv1.Repository) {
			r.Spec.Git.SecretRef = &syncv1.LocalObjectReference{Name: "../../kube-system/git-credentials"}
		}, refusal: `spec.git.secretRef.name: Invalid value: "../../kube-system/git-credentials": must be a Kubernetes object name`},
		{name: "notification sink secretRef that is a path", objects: func(ns string) []client.Object {
			return []client.Object{&syncv1.NotificationSink{
				ObjectMeta: metav1.ObjectMeta{Name: "audit", Namespace: ns},
				Spec:       syncv1.NotificationSinkSpec{Type: syncv1.SinkWebhook, SecretRef: syncv1.LocalObjectReference{Name: "../audit-webhook"}},
			}}
		}, refusal: `spec.secretRef.name: Invalid value: "../audit-webhook": must be a Kubernetes object name`},
		{name: "source path holding a NUL byte", app: func(a *syncv1.Application) { a.Spec.Source.Path = "apps\x00" },
			refusal: `spec.source.path: Invalid value: "apps\x00": must not contain control characters`},
		{name: "destination namespace of another tenant", destination: "e2e-crdfield-tenant-b", tenant: true,
			app:  func(a *syncv1.Application) { a.Spec.Destination.Namespace = "e2e-crdfield-tenant-b" },
			kind: "Application", condition: syncv1.ConditionReady, reason: syncv1.ReasonPlanFailed,
			wants: []string{"ConfigMap e2e-crdfield-tenant-b/settings", "forbidden", "system:serviceaccount:{ns}:deployer", "spec.destination.namespace is e2e-crdfield-tenant-b"}},
		{name: "destination namespace that does not exist", destination: "e2e-crdfield-nowhere",
			app:  func(a *syncv1.Application) { a.Spec.Destination.Namespace = "e2e-crdfield-nowhere" },
			kind: "Application", condition: syncv1.ConditionReady, reason: syncv1.ReasonPlanFailed,
			wants: []string{"ConfigMap e2e-crdfield-nowhere/settings", "forbidden", "system:serviceaccount:{ns}:deployer", "spec.destination.namespace is e2e-crdfield-nowhere"}},
		{name: "image policy secretRef that is a path", objects: func(ns string) []client.Object {
			return []client.Object{&syncv1.ImagePolicy{
				ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
				Spec: syncv1.ImagePolicySpec{
					Image: "127.0.0.1:1/acme/api", SecretRef: &syncv1.LocalObjectReference{Name: "../pull"},
					Policy: syncv1.ImageSelectionPolicy{SemVer: &syncv1.SemVerPolicy{Range: ">=1.0.0"}},
				},
			}}
		}, refusal: `spec.secretRef.name: Invalid value: "../pull": must be a Kubernetes object name`},
		// Allowed: values nested deep, or a megabyte of them, that the
		// chart ignores render like any other.
		{name: "allowed: helm values nested 5000 deep", applied: true, color: "blue", app: func(a *syncv1.Application) {
			helmFromGit(a)
			a.Spec.Source.Render.Helm.Values = &apiextensionsv1.JSON{Raw: nestedValues(5000)}
		}},
		{name: "allowed: a megabyte of helm values", applied: true, color: "green", app: func(a *syncv1.Application) {
			helmFromGit(a)
			raw, err := json.Marshal(map[string]any{"color": "green", "padding": strings.Repeat("x", 1<<20)})
			if err != nil {
				t.Fatal(err)
			}
			a.Spec.Source.Render.Helm.Values = &apiextensionsv1.JSON{Raw: raw}
		}},
		// The control: the same tree and Application, nothing hostile.
		{name: "control", applied: true, color: "blue", app: func(*syncv1.Application) {}},
	}

	// Every entry is created before any is checked, so they settle together.
	spaces := make([]string, len(cases))
	for i, tc := range cases {
		spaces[i] = namespace(t, fmt.Sprintf("e2e-crdfield-%02d", i))
		if tc.tenant {
			namespace(t, tc.destination)
		}
		createCRDFieldCase(t, spaces[i], tc)
	}

	var refused, applied int
	settled := make([]bool, len(cases))
	for i, tc := range cases {
		ns := spaces[i]
		settled[i] = t.Run(tc.name, func(t *testing.T) {
			// An admission refusal was checked as the entry was created.
			if tc.kind != "" {
				checkCRDFieldRefused(t, ns, tc)
			}
			if tc.applied {
				waitHealthy(t, ns, "web", "")
			}
		})
	}
	// The control was created last and rolled out: whatever the entries
	// before it were going to apply, they had as long to apply it.
	for i, tc := range cases {
		ns := spaces[i]
		outcome := "nothing applied"
		if tc.applied {
			outcome = "applied"
		}
		t.Run(tc.name+"/"+outcome, func(t *testing.T) {
			// A destination that is no namespace name is looked for where
			// it would lead.
			places := []string{ns}
			switch {
			case strings.Contains(tc.destination, "/"):
				places = append(places, path.Base(tc.destination))
			case tc.destination != "":
				places = append(places, tc.destination)
			}
			if tc.applied {
				// The same check that finds nothing for the refused entries.
				if got := appliedIn(t, places[len(places)-1]); !slices.Equal(got, []string{"settings"}) {
					t.Fatalf("applied ConfigMaps %v in %s, want [settings]", got, places[len(places)-1])
				}
				cm := get(t, &corev1.ConfigMap{}, places[len(places)-1], "settings")
				if cm.Data["color"] != tc.color {
					t.Errorf("ConfigMap settings holds color %q, want %q", cm.Data["color"], tc.color)
				}
				if settled[i] && !t.Failed() {
					applied++
				}
				return
			}
			for _, p := range places {
				if got := appliedIn(t, p); len(got) != 0 {
					t.Errorf("ConfigMaps %v applied to %s", got, p)
				}
			}
			var apps syncv1.ApplicationList
			if err := env.Client.List(t.Context(), &apps, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			for _, a := range apps.Items {
				if tc.app == nil {
					t.Errorf("Application %s discovered for a refused Repository", a.Name)
				}
				if a.Status.DeployedRevision != "" || a.Status.LastKnownGoodRevision != "" {
					t.Errorf("Application %s deployed Revision %q (last known good %q)", a.Name, a.Status.DeployedRevision, a.Status.LastKnownGoodRevision)
				}
			}
			if tc.after != nil {
				tc.after(t, ns)
			}
			if settled[i] && !t.Failed() {
				refused++
			}
		})
	}
	t.Logf("hostile CRD fields: %d entries, %d refused with nothing applied, %d applied as they must be", len(cases), refused, applied)
}

// createCRDFieldCase serves the entry's tree and creates its Repository
// and Application, checking the API server's refusal where one is due.
func createCRDFieldCase(t *testing.T, ns string, tc crdFieldCase) {
	t.Helper()
	gitRepo, err := env.Git.CreateRepo(ns + "-platform")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gitRepo.Apply(testgit.DefaultBranch, "tree", append(append([]testgit.Change{}, crdFieldTree...), tc.tree...)...); err != nil {
		t.Fatal(err)
	}
	if tc.objects != nil {
		for _, o := range tc.objects(ns) {
			if err := env.Client.Create(t.Context(), o); err != nil {
				// An object the entry is about may be the one refused.
				checkAdmission(t, tc, fmt.Sprintf("%T", o), err)
				return
			}
		}
	}
	repo := crdFieldRepository(ns, gitRepo.URL())
	if tc.repo != nil {
		tc.repo(repo)
	}
	var obj client.Object = repo
	if tc.pollInterval != "" {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(repo)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetGroupVersionKind(syncv1.GroupVersion.WithKind("Repository"))
		if err := unstructured.SetNestedField(u.Object, tc.pollInterval, "spec", "pollInterval"); err != nil {
			t.Fatal(err)
		}
		obj = u
	}
	err = env.Client.Create(t.Context(), obj)
	if tc.app == nil || err != nil {
		checkAdmission(t, tc, "Repository", err)
		return
	}
	app := crdFieldApplication(ns)
	tc.app(app)
	checkAdmission(t, tc, "Application", env.Client.Create(t.Context(), app))
}

// checkAdmission fails unless err is the refusal tc expects, or nil when
// it expects none.
func checkAdmission(t *testing.T, tc crdFieldCase, kind string, err error) {
	t.Helper()
	switch {
	case tc.refusal == "" && err != nil:
		t.Fatalf("%s: creating the %s: %v", tc.name, kind, err)
	case tc.refusal != "" && err == nil:
		t.Fatalf("%s: the API server stored the %s; want the refusal %q", tc.name, kind, tc.refusal)
	case tc.refusal != "" && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.refusal)):
		t.Fatalf("%s: creating the %s: %v\nwant the refusal %q", tc.name, kind, err, tc.refusal)
	case tc.refusal != "":
		t.Logf("%s: the API server refused the %s: %v", tc.name, kind, err)
	}
}

// checkCRDFieldRefused waits for the entry's condition to settle on a
// reason other than Progressing, and checks it is the refusal expected.
func checkCRDFieldRefused(t *testing.T, ns string, tc crdFieldCase) {
	t.Helper()
	var obj client.Object
	var conditions *[]metav1.Condition
	switch tc.kind {
	case "Repository":
		r := &syncv1.Repository{}
		obj, conditions = r, &r.Status.Conditions
	case "Application":
		a := &syncv1.Application{}
		obj, conditions = a, &a.Status.Conditions
	case "ImagePolicy":
		p := &syncv1.ImagePolicy{}
		obj, conditions = p, &p.Status.Conditions
	default:
		t.Fatalf("entry %q names no kind", tc.name)
	}
	name := map[string]string{"Repository": "platform", "Application": "web", "ImagePolicy": "api"}[tc.kind]
	var cond *metav1.Condition
	eventually(t, 3*time.Minute, fmt.Sprintf("%s %s/%s %s=False", tc.kind, ns, name, tc.condition), func() bool {
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			t.Fatal(err)
		}
		cond = meta.FindStatusCondition(*conditions, tc.condition)
		return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason != syncv1.ReasonProgressing
	})
	wants := make([]string, len(tc.wants))
	for i, w := range tc.wants {
		wants[i] = strings.ReplaceAll(w, "{ns}", ns)
	}
	if cond.Reason != tc.reason || !containsAll(cond.Message, wants...) {
		t.Errorf("%s %s: %s: %s\nwant reason %s and a message naming %q", tc.kind, tc.condition, cond.Reason, cond.Message, tc.reason, wants)
	}
	t.Logf("%s %s/%s %s=False %s: %s", tc.kind, ns, name, tc.condition, cond.Reason, cond.Message)
	if len(cond.Message) > syncv1.MaxMessageBytes {
		t.Errorf("%s %s message is %d bytes, over the %d byte bound", tc.kind, tc.condition, len(cond.Message), syncv1.MaxMessageBytes)
	}
}

// appliedIn lists the ConfigMaps of ns that an Application applied: the
// settings the tree renders, or any carrying Kuvryn Sync's owned-by
// annotation.
func appliedIn(t *testing.T, ns string) []string {
	t.Helper()
	var list corev1.ConfigMapList
	if err := env.Client.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cm := range list.Items {
		if _, owned := cm.Annotations[syncv1.OwnedByAnnotation]; owned || cm.Name == "settings" {
			names = append(names, cm.Name)
		}
	}
	return names
}

// sshCredentials makes a Git credentials Secret git-ssh with a fresh
// ed25519 identity and a pinned host key, so that a fetch gets as far as
// the URL.
func sshCredentials(t *testing.T) func(ns string) []client.Object {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	identity := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	// The SSH wire form of an ed25519 public key: two length-prefixed strings.
	var wire []byte
	for _, part := range [][]byte{[]byte("ssh-ed25519"), pub} {
		wire = binary.BigEndian.AppendUint32(wire, uint32(len(part)))
		wire = append(wire, part...)
	}
	knownHosts := "git.example.invalid ssh-ed25519 " + base64.StdEncoding.EncodeToString(wire) + "\n"
	return func(ns string) []client.Object {
		return []client.Object{&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "git-ssh", Namespace: ns, Labels: map[string]string{syncv1.GitCredentialsLabel: "true"}},
			Data:       map[string][]byte{"identity": identity, "known_hosts": []byte(knownHosts)},
		}}
	}
}
