package wave

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/validation"
)

func object(apiVersion, kind, namespace, name string, annotations map[string]string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	obj.SetNamespace(namespace)
	obj.SetName(name)
	obj.SetAnnotations(annotations)
	return obj
}

func names(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, obj := range objs {
		out = append(out, validation.Describe(obj))
	}
	return out
}

func TestWave_ReadsKuvrynThenArgoAnnotation(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        int32
	}{
		{"no annotation is wave 0", nil, 0},
		{"kuvryn wave", map[string]string{syncv1.SyncWaveAnnotation: "5"}, 5},
		{"negative wave", map[string]string{syncv1.SyncWaveAnnotation: "-3"}, -3},
		{"explicit plus sign", map[string]string{syncv1.SyncWaveAnnotation: "+2"}, 2},
		{"surrounding spaces are ignored", map[string]string{syncv1.SyncWaveAnnotation: " 4 "}, 4},
		{"argo wave", map[string]string{syncv1.ArgoSyncWaveAnnotation: "2"}, 2},
		{"kuvryn wins over argo", map[string]string{
			syncv1.SyncWaveAnnotation:     "1",
			syncv1.ArgoSyncWaveAnnotation: "9",
		}, 1},
		{"argo is not read when kuvryn wins", map[string]string{
			syncv1.SyncWaveAnnotation:     "-1",
			syncv1.ArgoSyncWaveAnnotation: "not-a-number",
		}, -1},
		{"helm hook weight on a helm hook", map[string]string{
			syncv1.HelmHookAnnotation: "pre-install", syncv1.HelmHookWeightAnnotation: "-20",
		}, -20},
		{"a helm hook weight that does not parse is 0, as in Helm", map[string]string{
			syncv1.HelmHookAnnotation: "pre-install", syncv1.HelmHookWeightAnnotation: "heavy",
		}, 0},
		{"helm hook weight without helm.sh/hook is not read", map[string]string{syncv1.HelmHookWeightAnnotation: "7"}, 0},
		{"argo wave wins over helm hook weight", map[string]string{
			syncv1.HelmHookAnnotation: "pre-install", syncv1.HelmHookWeightAnnotation: "-20", syncv1.ArgoSyncWaveAnnotation: "3",
		}, 3},
		{"largest int32", map[string]string{syncv1.SyncWaveAnnotation: "2147483647"}, 2147483647},
		{"smallest int32", map[string]string{syncv1.SyncWaveAnnotation: "-2147483648"}, -2147483648},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Wave(object("v1", "ConfigMap", "payments", "settings", tt.annotations))
			if err != nil {
				t.Fatalf("Wave() error = %v", err)
			}
			if got != tt.want {
				t.Errorf("Wave() = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestWave_NonIntegerFailsValidation(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        string
	}{
		{"word", map[string]string{syncv1.SyncWaveAnnotation: "one"},
			`ConfigMap payments/settings: annotation sync.kuvryn.io/sync-wave="one": not an integer`},
		{"fraction", map[string]string{syncv1.SyncWaveAnnotation: "1.5"},
			`ConfigMap payments/settings: annotation sync.kuvryn.io/sync-wave="1.5": not an integer`},
		{"empty", map[string]string{syncv1.SyncWaveAnnotation: ""},
			`ConfigMap payments/settings: annotation sync.kuvryn.io/sync-wave="": not an integer`},
		{"beyond int32", map[string]string{syncv1.SyncWaveAnnotation: "2147483648"},
			`ConfigMap payments/settings: annotation sync.kuvryn.io/sync-wave="2147483648": out of the int32 range`},
		{"invalid kuvryn wave is not hidden by a valid argo wave", map[string]string{
			syncv1.SyncWaveAnnotation:     "x",
			syncv1.ArgoSyncWaveAnnotation: "1",
		}, `ConfigMap payments/settings: annotation sync.kuvryn.io/sync-wave="x": not an integer`},
		{"argo word", map[string]string{syncv1.ArgoSyncWaveAnnotation: "early"},
			`ConfigMap payments/settings: annotation argocd.argoproj.io/sync-wave="early": not an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Wave(object("v1", "ConfigMap", "payments", "settings", tt.annotations))
			var verr *validation.Error
			if !errors.As(err, &verr) {
				t.Fatalf("Wave() error = %v, want a *validation.Error", err)
			}
			if verr.Reason() != syncv1.ReasonValidationFailure {
				t.Errorf("Reason() = %q, want %q", verr.Reason(), syncv1.ReasonValidationFailure)
			}
			if err.Error() != tt.want {
				t.Errorf("Wave() error = %q, want %q", err, tt.want)
			}
		})
	}
}

func TestKindOrder_FollowsApplyOrder(t *testing.T) {
	// Each row must apply strictly before the next.
	ordered := []schema.GroupVersionKind{
		{Version: "v1", Kind: "Namespace"},
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
		{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"},
		{Version: "v1", Kind: "ResourceQuota"},
		{Version: "v1", Kind: "LimitRange"},
		{Group: "policy", Version: "v1beta1", Kind: "PodSecurityPolicy"},
		{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
		{Version: "v1", Kind: "ServiceAccount"},
		{Version: "v1", Kind: "Secret"},
		{Version: "v1", Kind: "SecretList"},
		{Version: "v1", Kind: "ConfigMap"},
		{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass"},
		{Version: "v1", Kind: "PersistentVolume"},
		{Version: "v1", Kind: "PersistentVolumeClaim"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleList"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBindingList"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleList"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBindingList"},
		{Version: "v1", Kind: "Service"},
		{Group: "apps", Version: "v1", Kind: "DaemonSet"},
		{Version: "v1", Kind: "Pod"},
		{Version: "v1", Kind: "ReplicationController"},
		{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
		{Group: "apps", Version: "v1", Kind: "Deployment"},
		{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"},
		{Group: "apps", Version: "v1", Kind: "StatefulSet"},
		{Group: "batch", Version: "v1", Kind: "Job"},
		{Group: "batch", Version: "v1", Kind: "CronJob"},
		{Group: "networking.k8s.io", Version: "v1", Kind: "IngressClass"},
		{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
		{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"},
		{Group: "example.com", Version: "v1", Kind: "Widget"},
	}
	for i := 1; i < len(ordered); i++ {
		before, after := ordered[i-1], ordered[i]
		if KindOrder(before) >= KindOrder(after) {
			t.Errorf("KindOrder(%s)=%d, want it before KindOrder(%s)=%d", before, KindOrder(before), after, KindOrder(after))
		}
	}
}

func TestKindOrder_MatchesGroupAndIgnoresVersion(t *testing.T) {
	last := KindOrder(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"})
	tests := []struct {
		name string
		gvk  schema.GroupVersionKind
		same schema.GroupVersionKind
	}{
		{"legacy extensions Deployment ranks as apps Deployment",
			schema.GroupVersionKind{Group: "extensions", Version: "v1beta1", Kind: "Deployment"},
			schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}},
		{"legacy extensions Ingress ranks as networking Ingress",
			schema.GroupVersionKind{Group: "extensions", Version: "v1beta1", Kind: "Ingress"},
			schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}},
		{"older CronJob version ranks the same",
			schema.GroupVersionKind{Group: "batch", Version: "v1beta1", Kind: "CronJob"},
			schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "CronJob"}},
		{"custom resource named Service is a custom resource",
			schema.GroupVersionKind{Group: "serving.knative.dev", Version: "v1", Kind: "Service"},
			schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}},
		{"custom resource named Namespace does not precede CRDs",
			schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Namespace"},
			schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}},
		{"gateway routes are custom resources, applied last",
			schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"},
			schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := KindOrder(tt.gvk), KindOrder(tt.same); got != want {
				t.Errorf("KindOrder(%s) = %d, want %d", tt.gvk, got, want)
			}
		})
	}
	if got := KindOrder(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Namespace"}); got != last {
		t.Errorf("custom Namespace kind order = %d, want the last position %d", got, last)
	}
}

// rollout is a desired state touching every rule Order applies.
func rollout() []*unstructured.Unstructured {
	pre := map[string]string{syncv1.HookAnnotation: "pre-sync"}
	return []*unstructured.Unstructured{
		object("apps/v1", "Deployment", "payments", "api", nil),
		object("v1", "Service", "payments", "api", nil),
		object("example.com/v1", "Widget", "payments", "w", nil),
		object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com", nil),
		object("v1", "Namespace", "", "payments", nil),
		object("v1", "ConfigMap", "payments", "b", nil),
		object("v1", "ConfigMap", "payments", "a", nil),
		object("v1", "ConfigMap", "billing", "z", nil),
		object("rbac.authorization.k8s.io/v1", "Role", "payments", "reader", nil),
		object("example.com/v1", "Gadget", "payments", "g", nil),
		object("networking.k8s.io/v1", "Ingress", "payments", "api", map[string]string{syncv1.SyncWaveAnnotation: "2"}),
		object("apps/v1", "Deployment", "payments", "worker", map[string]string{syncv1.ArgoSyncWaveAnnotation: "-1"}),
		object("batch/v1", "Job", "payments", "migrate", pre),
		object("v1", "ServiceAccount", "payments", "migrate", pre),
		object("batch/v1", "Job", "payments", "seed", map[string]string{syncv1.HookAnnotation: "pre-sync", syncv1.SyncWaveAnnotation: "-5"}),
		object("batch/v1", "Job", "payments", "smoke", map[string]string{syncv1.HelmHookAnnotation: "post-install"}),
		object("v1", "Pod", "payments", "check", map[string]string{syncv1.ArgoHookAnnotation: "PostSync"}),
		object("v1", "Pod", "payments", "helm-test", map[string]string{syncv1.HelmHookAnnotation: "test"}),
		object("batch/v1", "Job", "payments", "cleanup", map[string]string{syncv1.ArgoHookAnnotation: "PostDelete"}),
		object("v1", "ConfigMap", "payments", "ignored", map[string]string{syncv1.HookAnnotation: "skip"}),
		object("v1", "Secret", "payments", "argo-sync", map[string]string{syncv1.ArgoHookAnnotation: "Sync"}),
	}
}

func TestOrder_OrdersHooksWavesAndKinds(t *testing.T) {
	groups, err := Order(rollout())
	if err != nil {
		t.Fatalf("Order() error = %v", err)
	}
	type wave struct {
		Wave    int32
		Objects []string
	}
	var waves []wave
	for _, g := range groups.Waves {
		waves = append(waves, wave{Wave: g.Wave, Objects: names(g.Objects)})
	}
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"pre-sync hooks by wave, then kind order", names(groups.PreSync), []string{
			"Job payments/seed",
			"ServiceAccount payments/migrate",
			"Job payments/migrate",
		}},
		{"waves ascending, each in kind order then kind, namespace and name", waves, []wave{
			{Wave: -1, Objects: []string{"Deployment payments/worker"}},
			{Wave: 0, Objects: []string{
				"Namespace payments",
				"CustomResourceDefinition widgets.example.com",
				"Secret payments/argo-sync",
				"ConfigMap billing/z",
				"ConfigMap payments/a",
				"ConfigMap payments/b",
				"Role payments/reader",
				"Service payments/api",
				"Deployment payments/api",
				"Gadget payments/g",
				"Widget payments/w",
			}},
			{Wave: 2, Objects: []string{"Ingress payments/api"}},
		}},
		{"post-sync hooks in kind order, skipped objects dropped", names(groups.PostSync), []string{
			"Pod payments/check",
			"Job payments/smoke",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got  %v\nwant %v", tt.got, tt.want)
			}
		})
	}
}

func TestOrder_OutputDoesNotDependOnInputOrder(t *testing.T) {
	want, err := Order(rollout())
	if err != nil {
		t.Fatalf("Order() error = %v", err)
	}
	for seed := int64(1); seed <= 50; seed++ {
		objs := rollout()
		rand.New(rand.NewSource(seed)).Shuffle(len(objs), func(i, j int) { objs[i], objs[j] = objs[j], objs[i] })
		got, err := Order(objs)
		if err != nil {
			t.Fatalf("seed %d: Order() error = %v", seed, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: Order() = %v, want %v", seed, got, want)
		}
	}
}

func TestOrder_GroupBreaksTiesBetweenObjectsOfOneKindAndName(t *testing.T) {
	objs := []*unstructured.Unstructured{
		object("b.example.com/v1", "Widget", "payments", "w", nil),
		object("a.example.com/v1", "Widget", "payments", "w", nil),
	}
	groups, err := Order(objs)
	if err != nil {
		t.Fatalf("Order() error = %v", err)
	}
	got := groups.Waves[0].Objects
	if got[0].GetAPIVersion() != "a.example.com/v1" || got[1].GetAPIVersion() != "b.example.com/v1" {
		t.Errorf("Order() order = %s, %s; want a.example.com before b.example.com", got[0].GetAPIVersion(), got[1].GetAPIVersion())
	}
}

func TestOrder_EmptyDesiredStateHasNoGroups(t *testing.T) {
	groups, err := Order(nil)
	if err != nil {
		t.Fatalf("Order() error = %v", err)
	}
	if !reflect.DeepEqual(groups, Groups{}) {
		t.Errorf("Order(nil) = %v, want no groups", groups)
	}
}

func TestOrder_ReportsEveryInvalidObject(t *testing.T) {
	objs := append(rollout(),
		object("batch/v1", "Job", "payments", "typo", map[string]string{syncv1.HookAnnotation: "pre-synk"}),
		object("v1", "ConfigMap", "payments", "bad-wave", map[string]string{syncv1.SyncWaveAnnotation: "first"}),
		object("batch/v1", "Job", "payments", "torn", map[string]string{syncv1.HookAnnotation: "pre-sync", syncv1.ArgoHookAnnotation: "PostSync"}),
		object("apps/v1", "Deployment", "payments", "api", nil),
		object("autoscaling/v1", "HorizontalPodAutoscaler", "payments", "api", nil),
		object("autoscaling/v2", "HorizontalPodAutoscaler", "payments", "api", nil),
		object("v1", "Pod", "payments", "skipped-bad-wave", map[string]string{syncv1.HookAnnotation: "skip", syncv1.SyncWaveAnnotation: "x"}),
	)
	_, err := Order(objs)
	var perr *OrderError
	if !errors.As(err, &perr) {
		t.Fatalf("Order() error = %v, want a *OrderError", err)
	}
	if perr.Reason() != syncv1.ReasonValidationFailure {
		t.Errorf("Reason() = %q, want %q", perr.Reason(), syncv1.ReasonValidationFailure)
	}
	var herr *validation.Error
	if !errors.As(err, &herr) {
		t.Errorf("errors.As() does not reach the hook errors inside %v", err)
	}
	tests := []struct {
		name   string
		target any
		object string
	}{
		{"unknown hook value", new(*validation.Error), "Job payments/typo"},
		{"non-integer wave", new(*validation.Error), "ConfigMap payments/bad-wave"},
		{"conflicting hook stages", new(*validation.Error), "Job payments/torn"},
		{"duplicate object", new(*validation.Error), "Deployment payments/api"},
		{"duplicate object served from another version", new(*validation.Error), "HorizontalPodAutoscaler payments/api"},
	}
	if len(perr.Errs) != len(tests) {
		t.Errorf("Order() reported %d errors, want %d: %v", len(perr.Errs), len(tests), perr.Errs)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			found := false
			for _, e := range perr.Errs {
				if errors.As(e, tt.target) && strings.HasPrefix(e.Error(), tt.object+":") {
					found = true
				}
			}
			if !found {
				t.Errorf("no %T for %s among %v", tt.target, tt.object, perr.Errs)
			}
		})
	}
	if !strings.Contains(err.Error(), "appears more than once in the desired state") {
		t.Errorf("message %q does not explain the duplicate", err)
	}
}

func TestOrderError_MessageIsBounded(t *testing.T) {
	tests := []struct {
		name    string
		objects int
		nameLen int
		mention string
	}{
		{"few errors are all listed", 3, 10, "3 invalid object(s): "},
		{"many errors are counted", 100, 10, "; and 95 more"},
		{"long names are cut", 8, 250, "..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs []*unstructured.Unstructured
			for i := 0; i < tt.objects; i++ {
				name := fmt.Sprintf("%0*d", tt.nameLen, i)
				objs = append(objs, object("v1", "ConfigMap", "payments", name, map[string]string{syncv1.SyncWaveAnnotation: "x"}))
			}
			_, err := Order(objs)
			if err == nil {
				t.Fatal("Order() error = nil")
			}
			if n := len(err.Error()); n > syncv1.MaxMessageBytes {
				t.Errorf("message is %d bytes, want at most %d", n, syncv1.MaxMessageBytes)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("message %q does not contain %q", err, tt.mention)
			}
		})
	}
}
