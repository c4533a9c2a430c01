package hook

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/validation"
)

func job(annotations map[string]string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("batch/v1")
	obj.SetKind("Job")
	obj.SetNamespace("payments")
	obj.SetName("migrate")
	obj.SetAnnotations(annotations)
	return obj
}

func TestClassify_ReturnsStageOfEachHonouredValue(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        Stage
	}{
		{"object without annotations is ordinary", nil, Sync},
		{"unrelated annotations leave an ordinary object", map[string]string{"example.com/owner": "team"}, Sync},

		{"kuvryn pre-sync", map[string]string{syncv1.HookAnnotation: "pre-sync"}, PreSync},
		{"kuvryn post-sync", map[string]string{syncv1.HookAnnotation: "post-sync"}, PostSync},
		{"kuvryn skip", map[string]string{syncv1.HookAnnotation: "skip"}, Skip},
		{"kuvryn value with surrounding spaces", map[string]string{syncv1.HookAnnotation: " pre-sync "}, PreSync},

		{"helm pre-install", map[string]string{syncv1.HelmHookAnnotation: "pre-install"}, PreSync},
		{"helm pre-upgrade", map[string]string{syncv1.HelmHookAnnotation: "pre-upgrade"}, PreSync},
		{"helm post-install", map[string]string{syncv1.HelmHookAnnotation: "post-install"}, PostSync},
		{"helm post-upgrade", map[string]string{syncv1.HelmHookAnnotation: "post-upgrade"}, PostSync},
		{"helm test", map[string]string{syncv1.HelmHookAnnotation: "test"}, Skip},
		{"helm test-success", map[string]string{syncv1.HelmHookAnnotation: "test-success"}, Skip},
		{"helm test-failure", map[string]string{syncv1.HelmHookAnnotation: "test-failure"}, Skip},
		{"helm pre-delete", map[string]string{syncv1.HelmHookAnnotation: "pre-delete"}, Skip},
		{"helm post-delete", map[string]string{syncv1.HelmHookAnnotation: "post-delete"}, Skip},
		{"helm pre-rollback", map[string]string{syncv1.HelmHookAnnotation: "pre-rollback"}, Skip},
		{"helm post-rollback", map[string]string{syncv1.HelmHookAnnotation: "post-rollback"}, Skip},
		{"helm list of one stage", map[string]string{syncv1.HelmHookAnnotation: "pre-install,pre-upgrade"}, PreSync},
		{"helm list with spaces and upper case, as helm accepts", map[string]string{syncv1.HelmHookAnnotation: " Post-Install , post-upgrade"}, PostSync},
		{"helm skip value wins over a stage in the list", map[string]string{syncv1.HelmHookAnnotation: "pre-install,pre-delete"}, Skip},
		{"helm skip value wins even between two stages", map[string]string{syncv1.HelmHookAnnotation: "pre-install,test,post-install"}, Skip},

		{"argo PreSync", map[string]string{syncv1.ArgoHookAnnotation: "PreSync"}, PreSync},
		{"argo Sync is ordinary", map[string]string{syncv1.ArgoHookAnnotation: "Sync"}, Sync},
		{"argo PostSync", map[string]string{syncv1.ArgoHookAnnotation: "PostSync"}, PostSync},
		{"argo Skip", map[string]string{syncv1.ArgoHookAnnotation: "Skip"}, Skip},
		{"argo SyncFail", map[string]string{syncv1.ArgoHookAnnotation: "SyncFail"}, Skip},
		{"argo PreDelete", map[string]string{syncv1.ArgoHookAnnotation: "PreDelete"}, Skip},
		{"argo PostDelete", map[string]string{syncv1.ArgoHookAnnotation: "PostDelete"}, Skip},
		{"argo list with a skip value", map[string]string{syncv1.ArgoHookAnnotation: "PostSync, SyncFail"}, Skip},

		{"agreeing annotations", map[string]string{
			syncv1.HookAnnotation:     "pre-sync",
			syncv1.HelmHookAnnotation: "pre-install",
			syncv1.ArgoHookAnnotation: "PreSync",
		}, PreSync},
		{"skip on one annotation wins over a stage on another", map[string]string{
			syncv1.HookAnnotation:     "skip",
			syncv1.ArgoHookAnnotation: "PostSync",
		}, Skip},
		{"helm test wins over argo PreSync", map[string]string{
			syncv1.HelmHookAnnotation: "test",
			syncv1.ArgoHookAnnotation: "PreSync",
		}, Skip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Classify(job(tt.annotations))
			if err != nil {
				t.Fatalf("Classify() error = %v", err)
			}
			if got != tt.want {
				t.Errorf("Classify() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClassify_UnknownValueFailsValidation(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		annotation  string
		mention     string
	}{
		{"kuvryn typo", map[string]string{syncv1.HookAnnotation: "pre-synk"}, syncv1.HookAnnotation, `"pre-synk"`},
		{"kuvryn sync is not a value", map[string]string{syncv1.HookAnnotation: "sync"}, syncv1.HookAnnotation, `"sync"`},
		{"kuvryn empty value", map[string]string{syncv1.HookAnnotation: ""}, syncv1.HookAnnotation, `""`},
		{"kuvryn list is not accepted", map[string]string{syncv1.HookAnnotation: "pre-sync,skip"}, syncv1.HookAnnotation, `"pre-sync,skip"`},
		{"kuvryn value in argo spelling", map[string]string{syncv1.HookAnnotation: "PreSync"}, syncv1.HookAnnotation, `"PreSync"`},
		{"helm unknown value", map[string]string{syncv1.HelmHookAnnotation: "pre-instal"}, syncv1.HelmHookAnnotation, `"pre-instal"`},
		{"helm unknown value beside a skip value", map[string]string{syncv1.HelmHookAnnotation: "test,crd-install"}, syncv1.HelmHookAnnotation, `"crd-install"`},
		{"helm empty list item", map[string]string{syncv1.HelmHookAnnotation: "pre-install,"}, syncv1.HelmHookAnnotation, `""`},
		{"argo unknown value", map[string]string{syncv1.ArgoHookAnnotation: "PreSynk"}, syncv1.ArgoHookAnnotation, `"PreSynk"`},
		{"argo values are case-sensitive", map[string]string{syncv1.ArgoHookAnnotation: "presync"}, syncv1.ArgoHookAnnotation, `"presync"`},
		{"argo unknown value beside Skip", map[string]string{syncv1.ArgoHookAnnotation: "Skip,Later"}, syncv1.ArgoHookAnnotation, `"Later"`},
		{"unknown value on one annotation while another skips", map[string]string{
			syncv1.HookAnnotation:     "skip",
			syncv1.ArgoHookAnnotation: "Bogus",
		}, syncv1.ArgoHookAnnotation, `"Bogus"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Classify(job(tt.annotations))
			assertValidationError(t, err, tt.annotation, "unknown value "+tt.mention)
		})
	}
}

func TestClassify_ConflictingStagesFailValidation(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		annotation  string
		mention     string
	}{
		{"kuvryn pre-sync and argo PostSync", map[string]string{
			syncv1.HookAnnotation:     "pre-sync",
			syncv1.ArgoHookAnnotation: "PostSync",
		}, syncv1.ArgoHookAnnotation, "stage post-sync conflicts with stage pre-sync from annotation " + syncv1.HookAnnotation},
		{"kuvryn post-sync and helm pre-install", map[string]string{
			syncv1.HookAnnotation:     "post-sync",
			syncv1.HelmHookAnnotation: "pre-install",
		}, syncv1.HelmHookAnnotation, "stage pre-sync conflicts with stage post-sync"},
		{"helm pre-upgrade and argo Sync", map[string]string{
			syncv1.HelmHookAnnotation: "pre-upgrade",
			syncv1.ArgoHookAnnotation: "Sync",
		}, syncv1.ArgoHookAnnotation, "stage sync conflicts with stage pre-sync"},
		{"helm list naming two stages", map[string]string{
			syncv1.HelmHookAnnotation: "pre-install,post-install",
		}, syncv1.HelmHookAnnotation, "names two stages, pre-sync and post-sync"},
		{"argo list naming two stages", map[string]string{
			syncv1.ArgoHookAnnotation: "PreSync,PostSync",
		}, syncv1.ArgoHookAnnotation, "names two stages, pre-sync and post-sync"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Classify(job(tt.annotations))
			assertValidationError(t, err, tt.annotation, tt.mention)
		})
	}
}

func TestClassify_ErrorNamesObjectAnnotationAndValue(t *testing.T) {
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want string
	}{
		{
			name: "namespaced object",
			obj:  job(map[string]string{syncv1.HookAnnotation: "later"}),
			want: `Job payments/migrate: annotation sync.kuvryn.io/hook="later": unknown value "later"; want pre-sync, post-sync or skip`,
		},
		{
			name: "cluster-scoped object",
			obj: func() *unstructured.Unstructured {
				obj := job(map[string]string{syncv1.ArgoHookAnnotation: "Later"})
				obj.SetKind("ClusterRole")
				obj.SetNamespace("")
				obj.SetName("reader")
				return obj
			}(),
			want: `ClusterRole reader: annotation argocd.argoproj.io/hook="Later": unknown value "Later"; ` +
				`want PreSync, Sync, PostSync, Skip, SyncFail, PreDelete or PostDelete`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Classify(tt.obj)
			if err == nil || err.Error() != tt.want {
				t.Errorf("Classify() error = %v, want %s", err, tt.want)
			}
		})
	}
}

func TestClassify_LongValueIsBoundedInMessage(t *testing.T) {
	long := strings.Repeat("é", 500)
	_, err := Classify(job(map[string]string{syncv1.HookAnnotation: long}))
	if err == nil {
		t.Fatal("Classify() error = nil, want a *validation.Error")
	}
	if n := len(err.Error()); n > 300 {
		t.Errorf("message is %d bytes, want a bounded message: %s", n, err)
	}
	if !strings.Contains(err.Error(), "...") {
		t.Errorf("message %q does not say the value was cut", err)
	}
}

func TestIsHook_TrueOnlyForPreAndPostSync(t *testing.T) {
	tests := []struct {
		stage Stage
		want  bool
	}{
		{PreSync, true},
		{PostSync, true},
		{Sync, false},
		{Skip, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.stage), func(t *testing.T) {
			if got := IsHook(tt.stage); got != tt.want {
				t.Errorf("IsHook(%q) = %v, want %v", tt.stage, got, tt.want)
			}
		})
	}
}

func TestStage_ValuesMatchHookStatusStages(t *testing.T) {
	// HookStatus.Stage and PlanEntry.Hook carry string(stage) verbatim.
	if string(PreSync) != syncv1.HookPreSync || string(PostSync) != syncv1.HookPostSync {
		t.Errorf("stages %q/%q differ from the API's %q/%q", PreSync, PostSync, syncv1.HookPreSync, syncv1.HookPostSync)
	}
}

func assertValidationError(t *testing.T, err error, annotation, mention string) {
	t.Helper()
	var verr *validation.Error
	if !errors.As(err, &verr) {
		t.Fatalf("Classify() error = %v, want a *validation.Error", err)
	}
	if verr.Reason() != syncv1.ReasonValidationFailure {
		t.Errorf("Reason() = %q, want %q", verr.Reason(), syncv1.ReasonValidationFailure)
	}
	if verr.Object != "Job payments/migrate" {
		t.Errorf("Object = %q, want %q", verr.Object, "Job payments/migrate")
	}
	if verr.Annotation != annotation {
		t.Errorf("Annotation = %q, want %q", verr.Annotation, annotation)
	}
	if !strings.Contains(err.Error(), mention) {
		t.Errorf("error %q does not mention %q", err, mention)
	}
}
