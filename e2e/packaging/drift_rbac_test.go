package packaging_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestGuideDriftBinding_LetsTheControllerManagerWatchCertificates applies
// the guide's "Drift detection for other kinds" ClusterRole and
// ClusterRoleBinding (testdata/guide-drift-certificates.yaml, copied from
// the guide verbatim) and asks the API server, with a SubjectAccessReview,
// whether the ServiceAccount the controller manager runs as may list and
// watch certificates. For a Helm install the guide's comment says to bind
// <release>-kuvryn-sync in the release's namespace instead; that is checked
// the same way. Before the binding, neither may.
func TestGuideDriftBinding_LetsTheControllerManagerWatchCertificates(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join("testdata", "guide-drift-certificates.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		// objs is the install whose controller-manager Deployment must run
		// as the ServiceAccount the binding names.
		objs []*unstructured.Unstructured
		yaml string
		sa   string
	}{
		{"raw manifests, the guide verbatim", deployDefault(t), string(guide), "kuvryn-sync-controller-manager"},
		{"Helm release " + releaseName + ", the subject the guide's comment names", mustRenderChart(t, ""),
			strings.Replace(string(guide), "name: kuvryn-sync-controller-manager", "name: "+chartPrefix, 1), chartPrefix},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := deployment(t, tc.objs, "sync-controller")
			if sa, _, _ := unstructured.NestedString(d.Object, "spec", "template", "spec", "serviceAccountName"); sa != tc.sa || d.GetNamespace() != systemNamespace {
				t.Fatalf("%s runs as ServiceAccount %s/%s, the binding names %s/%s", idOf(d), d.GetNamespace(), sa, systemNamespace, tc.sa)
			}
			if find(tc.objs, "ServiceAccount", tc.sa) == nil {
				t.Fatalf("the install has no ServiceAccount %s", tc.sa)
			}
			for _, verb := range []string{"list", "watch"} {
				if allowed(t, tc.sa, verb) {
					t.Fatalf("%s may %s certificates before the guide's binding: the check proves nothing", tc.sa, verb)
				}
			}
			objs, err := parseYAML([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				if err := k8s.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(o),
					client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
					t.Fatalf("applying the guide's %s: %v", idOf(o), err)
				}
				t.Cleanup(func() { _ = k8s.Delete(context.Background(), o) })
			}
			// The authorizer sees a new binding once its informer has it.
			for _, verb := range []string{"list", "watch"} {
				deadline := time.Now().Add(15 * time.Second)
				for !allowed(t, tc.sa, verb) {
					if time.Now().After(deadline) {
						t.Errorf("15s after the guide's binding, %s may still not %s certificates.cert-manager.io", tc.sa, verb)
						break
					}
					time.Sleep(200 * time.Millisecond)
				}
			}
		})
	}
}

// allowed asks the API server whether ServiceAccount sa of systemNamespace
// may verb certificates.cert-manager.io in every namespace.
func allowed(t *testing.T, sa, verb string) bool {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   "system:serviceaccount:" + systemNamespace + ":" + sa,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + systemNamespace, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: "cert-manager.io", Resource: "certificates", Verb: verb,
		},
	}}
	if err := k8s.Create(t.Context(), sar); err != nil {
		t.Fatalf("SubjectAccessReview for %s: %v", sa, err)
	}
	return sar.Status.Allowed
}
