package wave

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// FuzzOrder orders three objects whose hook and wave annotations (Kuvryn
// Sync's and Argo CD's) are arbitrary. Either Order refuses with an
// *OrderError and no groups, or every object that is not skipped lands
// exactly once, in the group its own annotations name: hooks in PreSync or
// PostSync, the rest in the Group of the wave sync.kuvryn.io/sync-wave (or,
// without it, argocd.argoproj.io/sync-wave) gives, waves strictly ascending.
func FuzzOrder(f *testing.F) {
	f.Add("pre-sync", "-1", "", "", "2", "", "post-sync", "", "x")
	f.Add("", " 1 ", "", "", "", "-5", "", "2147483647", "")
	f.Add("", "2147483648", "", "", "1.5", "", "", "0x10", "")
	f.Add("skip", "garbage", "", "", "+3", "", "", "", "-0")
	f.Add("", "1", "1", "", "1", "1", "", "", "")
	f.Add("bogus", "", "", "PreSync", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, hook0, wave0, argoWave0, hook1, wave1, argoWave1, hook2, wave2, argoWave2 string) {
		specs := [][3]string{{hook0, wave0, argoWave0}, {hook1, wave1, argoWave1}, {hook2, wave2, argoWave2}}
		objs := make([]*unstructured.Unstructured, len(specs))
		for i, s := range specs {
			annotations := map[string]string{}
			for key, v := range map[string]string{
				syncv1.HookAnnotation: s[0], syncv1.SyncWaveAnnotation: s[1], syncv1.ArgoSyncWaveAnnotation: s[2],
			} {
				if v != "" {
					annotations[key] = v
				}
			}
			obj := &unstructured.Unstructured{}
			obj.SetAPIVersion("v1")
			obj.SetKind("ConfigMap")
			obj.SetNamespace("team")
			obj.SetName("cm-" + strconv.Itoa(i))
			obj.SetAnnotations(annotations)
			objs[i] = obj
		}

		groups, err := Order(objs)
		if err != nil {
			var oe *OrderError
			if !errors.As(err, &oe) || len(oe.Errs) == 0 {
				t.Fatalf("refusal %v (%T) is not an *OrderError listing problems", err, err)
			}
			if groups.PreSync != nil || groups.Waves != nil || groups.PostSync != nil {
				t.Fatalf("refused (%v) but returned groups", err)
			}
			return
		}

		placed := map[*unstructured.Unstructured]string{}
		place := func(obj *unstructured.Unstructured, where string) {
			if prev, dup := placed[obj]; dup {
				t.Fatalf("%s placed twice: %s and %s", obj.GetName(), prev, where)
			}
			placed[obj] = where
		}
		for _, o := range groups.PreSync {
			place(o, "pre-sync")
		}
		for _, o := range groups.PostSync {
			place(o, "post-sync")
		}
		for i, g := range groups.Waves {
			if i > 0 && groups.Waves[i-1].Wave >= g.Wave {
				t.Fatalf("waves not strictly ascending: %d then %d", groups.Waves[i-1].Wave, g.Wave)
			}
			if len(g.Objects) == 0 {
				t.Fatalf("wave %d has no objects", g.Wave)
			}
			for _, o := range g.Objects {
				place(o, "wave "+strconv.Itoa(int(g.Wave)))
			}
		}
		for i, obj := range objs {
			s := specs[i]
			stage := strings.TrimSpace(s[0])
			want := ""
			switch {
			case s[0] == "":
				winner := s[1]
				if winner == "" {
					winner = s[2]
				}
				n := int64(0)
				if winner != "" {
					var err error
					if n, err = strconv.ParseInt(strings.TrimSpace(winner), 10, 32); err != nil {
						t.Fatalf("%s: wave %q accepted, but it is no int32", obj.GetName(), winner)
					}
				}
				want = "wave " + strconv.Itoa(int(n))
			case stage == syncv1.HookPreSync:
				want = "pre-sync"
			case stage == syncv1.HookPostSync:
				want = "post-sync"
			case stage == syncv1.HookSkip:
			default:
				t.Fatalf("%s: hook %q accepted", obj.GetName(), s[0])
			}
			if got := placed[obj]; got != want {
				t.Fatalf("%s (hook %q, waves %q/%q) placed in %q, want %q", obj.GetName(), s[0], s[1], s[2], got, want)
			}
		}
		if len(placed) > len(objs) {
			t.Fatalf("groups hold %d objects, %d given", len(placed), len(objs))
		}
	})
}
