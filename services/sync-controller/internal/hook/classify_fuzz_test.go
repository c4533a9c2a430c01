package hook

import (
	"errors"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/validation"
)

// FuzzClassify gives an object arbitrary values of the three hook
// annotations (present or not, per bit of mask). The stage of the object is
// consistent with what each annotation says alone: a hook stage only when
// every annotation present names it, Skip only when one of them skips. A
// refusal is a *validation.Error and no stage, and its message is bounded
// whatever the value's size. Classify never changes the object.
func FuzzClassify(f *testing.F) {
	f.Add("pre-sync", "pre-install,pre-upgrade", "PreSync", uint8(7))
	f.Add("post-sync", "post-install", "PostSync", uint8(7))
	f.Add("pre-sync", "post-install", "", uint8(3))
	f.Add("skip", "bogus", "", uint8(3))
	f.Add("", " PRE-INSTALL , test ", "Sync,PreSync", uint8(6))
	f.Add(" pre-sync ", "", "SyncFail", uint8(5))
	f.Add("Pre-Sync", "", "", uint8(1))
	f.Add("", "", "PreSync,,PostSync", uint8(4))
	f.Add("", "", "", uint8(0))
	keys := []string{syncv1.HookAnnotation, syncv1.HelmHookAnnotation, syncv1.ArgoHookAnnotation}
	object := func(annotations map[string]string) *unstructured.Unstructured {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion("batch/v1")
		obj.SetKind("Job")
		obj.SetNamespace("team")
		obj.SetName("migrate")
		obj.SetAnnotations(annotations)
		return obj
	}
	f.Fuzz(func(t *testing.T, kuvryn, helm, argo string, mask uint8) {
		values := []string{kuvryn, helm, argo}
		all := map[string]string{}
		for i, k := range keys {
			if mask&(1<<i) != 0 {
				all[k] = values[i]
			}
		}
		obj := object(all)
		before := obj.DeepCopy()
		stage, err := Classify(obj)
		if !reflect.DeepEqual(obj, before) {
			t.Fatal("Classify changed the object")
		}
		if err != nil {
			var ve *validation.Error
			if !errors.As(err, &ve) || stage != "" {
				t.Fatalf("refusal %v (%T) with stage %q, want a *validation.Error and no stage", err, err, stage)
			}
			if limit := 8*validation.MaxValueBytes + 300; len(err.Error()) > limit {
				t.Fatalf("error message of %d bytes, more than %d", len(err.Error()), limit)
			}
		}
		switch stage {
		case "", PreSync, PostSync, Sync, Skip:
		default:
			t.Fatalf("unknown stage %q", stage)
		}
		if len(all) == 0 && (stage != Sync || err != nil) {
			t.Fatalf("no hook annotations: stage %q, err %v; want sync", stage, err)
		}

		alone := map[string]Stage{}
		aloneSkips, aloneFails := false, false
		for k, v := range all {
			s, err := Classify(object(map[string]string{k: v}))
			if err != nil {
				aloneFails = true
				continue
			}
			alone[k] = s
			aloneSkips = aloneSkips || s == Skip
		}
		switch {
		case stage == Skip && !aloneSkips:
			t.Fatalf("Skip, but no annotation alone skips: %v", alone)
		case err == nil && stage != Skip:
			if aloneFails {
				t.Fatalf("accepted %q although an annotation alone is refused", stage)
			}
			for k, s := range alone {
				if s != stage {
					t.Fatalf("stage %q, but %s alone says %q", stage, k, s)
				}
			}
		case err != nil && !aloneFails && !aloneSkips:
			agree := true
			for _, s := range alone {
				for _, o := range alone {
					agree = agree && s == o
				}
			}
			if agree {
				t.Fatalf("refused (%v) although every annotation alone names the same stage %v", err, alone)
			}
		}
	})
}
