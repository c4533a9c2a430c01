package wave

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestOrder_HelmHookWeightOrdersHooksWithinAStage is the chart:
// three pre-install hooks weighted -20, -5 and 10, in another file order,
// run lightest first, as Helm runs them; a weight never moves a hook out of
// its stage, and an Argo CD wave on a hook orders it the same way.
func TestOrder_HelmHookWeightOrdersHooksWithinAStage(t *testing.T) {
	helmHook := func(name, weight string) *unstructured.Unstructured {
		return object("batch/v1", "Job", "payments", name, map[string]string{
			syncv1.HelmHookAnnotation: "pre-install", syncv1.HelmHookWeightAnnotation: weight,
		})
	}
	tests := []struct {
		name      string
		objs      []*unstructured.Unstructured
		wantPre   []string
		wantPost  []string
		wantWaves int
	}{
		{
			name:    "helm hook weights",
			objs:    []*unstructured.Unstructured{helmHook("c-plus-ten", "10"), helmHook("a-minus-twenty", "-20"), helmHook("b-minus-five", "-5")},
			wantPre: []string{"Job payments/a-minus-twenty", "Job payments/b-minus-five", "Job payments/c-plus-ten"},
		},
		{
			name: "argo waves on hooks",
			objs: []*unstructured.Unstructured{
				object("batch/v1", "Job", "payments", "late", map[string]string{syncv1.ArgoHookAnnotation: "PreSync", syncv1.ArgoSyncWaveAnnotation: "5"}),
				object("batch/v1", "Job", "payments", "early", map[string]string{syncv1.ArgoHookAnnotation: "PreSync", syncv1.ArgoSyncWaveAnnotation: "-5"}),
			},
			wantPre: []string{"Job payments/early", "Job payments/late"},
		},
		{
			name: "a weight stays in its stage",
			objs: []*unstructured.Unstructured{
				object("batch/v1", "Job", "payments", "smoke", map[string]string{syncv1.HelmHookAnnotation: "post-install", syncv1.HelmHookWeightAnnotation: "-100"}),
				helmHook("migrate", "100"),
				object("v1", "ConfigMap", "payments", "settings", nil),
			},
			wantPre:   []string{"Job payments/migrate"},
			wantPost:  []string{"Job payments/smoke"},
			wantWaves: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			groups, err := Order(tt.objs)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(groups.PreSync); !reflect.DeepEqual(got, tt.wantPre) {
				t.Errorf("pre-sync hooks %v, want %v", got, tt.wantPre)
			}
			if got := names(groups.PostSync); len(got)+len(tt.wantPost) > 0 && !reflect.DeepEqual(got, tt.wantPost) {
				t.Errorf("post-sync hooks %v, want %v", got, tt.wantPost)
			}
			if len(groups.Waves) != tt.wantWaves {
				t.Errorf("%d sync waves, want %d", len(groups.Waves), tt.wantWaves)
			}
		})
	}
}
