package plan

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func TestAction_ComparesNormalisedObjects(t *testing.T) {
	live := asServed(configMap(map[string]any{"mode": "fast"}))
	tests := []struct {
		name         string
		live, dryRun *unstructured.Unstructured
		want         syncv1.PlanAction
	}{
		{"no live object is a create", nil, configMap(map[string]any{"mode": "fast"}), syncv1.ActionCreate},
		{"no dry-run is a delete", live, nil, syncv1.ActionDelete},
		{"only server-owned fields differ", live, configMap(map[string]any{"mode": "fast"}), syncv1.ActionUnchanged},
		{"content differs", live, configMap(map[string]any{"mode": "slow"}), syncv1.ActionUpdate},
		{"a label differs", live, func() *unstructured.Unstructured {
			obj := configMap(map[string]any{"mode": "fast"})
			obj.SetLabels(map[string]string{"tier": "gold"})
			return obj
		}(), syncv1.ActionUpdate},
		{"a Secret value differs", secret(map[string]string{"password": password}, nil),
			secret(map[string]string{"password": token}, nil), syncv1.ActionUpdate},
		{"neither object", nil, nil, syncv1.ActionUnchanged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Action(tt.live, tt.dryRun); got != tt.want {
				t.Errorf("Action() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNewEntry_RecordsIdentityActionHashesAndDiff(t *testing.T) {
	live := asServed(configMap(map[string]any{"mode": "fast"}))
	ref := syncv1.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "payments", Name: "settings"}
	hash := func(obj *unstructured.Unstructured) string {
		h, err := Hash(obj)
		if err != nil {
			t.Fatalf("Hash() error = %v", err)
		}
		return h
	}
	tests := []struct {
		name         string
		live, dryRun *unstructured.Unstructured
		want         syncv1.PlanAction
		wantDiff     bool
	}{
		{"create", nil, configMap(map[string]any{"mode": "fast"}), syncv1.ActionCreate, true},
		{"update", live, configMap(map[string]any{"mode": "slow"}), syncv1.ActionUpdate, true},
		{"unchanged has no diff", live, configMap(map[string]any{"mode": "fast"}), syncv1.ActionUnchanged, false},
		{"delete", live, nil, syncv1.ActionDelete, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NewEntry(tt.live, tt.dryRun)
			if err != nil {
				t.Fatalf("NewEntry() error = %v", err)
			}
			if got.Ref != ref || got.Action != tt.want {
				t.Errorf("NewEntry() = %v %q, want %v %q", got.Ref, got.Action, ref, tt.want)
			}
			if got.LiveHash != hash(tt.live) || got.DesiredHash != hash(tt.dryRun) {
				t.Errorf("NewEntry() hashes = %q, %q; want Hash of live and dry-run", got.LiveHash, got.DesiredHash)
			}
			if (got.Diff != "") != tt.wantDiff {
				t.Errorf("NewEntry() diff = %q, want a diff: %v", got.Diff, tt.wantDiff)
			}
		})
	}
}

func TestNewEntry_TakesIdentityFromDryRun(t *testing.T) {
	live := configMap(map[string]any{"mode": "fast"})
	live.SetAPIVersion("example.com/v1beta1")
	dryRun := configMap(map[string]any{"mode": "fast"})
	dryRun.SetAPIVersion("example.com/v1")
	got, err := NewEntry(live, dryRun)
	if err != nil {
		t.Fatalf("NewEntry() error = %v", err)
	}
	if got.Ref.Version != "v1" {
		t.Errorf("NewEntry() version = %q, want the dry-run's v1", got.Ref.Version)
	}
}

func TestNewEntry_Fails(t *testing.T) {
	tests := []struct {
		name         string
		live, dryRun *unstructured.Unstructured
		mention      string
	}{
		{"without any object", nil, nil, "needs a live or a dry-run object"},
		{"on an unencodable object, naming it", nil, configMap(map[string]any{"ratio": math.NaN()}), "ConfigMap payments/settings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewEntry(tt.live, tt.dryRun)
			if err == nil || !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("NewEntry() error = %v, want one mentioning %q", err, tt.mention)
			}
		})
	}
}

// digestEntries are the fixture the pinned digest is computed from.
func digestEntries() []Entry {
	return []Entry{
		{Ref: syncv1.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "payments", Name: "api"},
			Action: syncv1.ActionUpdate, LiveHash: "1111", DesiredHash: "2222", Wave: 1, Diff: "--- live\n"},
		{Ref: syncv1.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "payments", Name: "settings"},
			Action: syncv1.ActionCreate, DesiredHash: "3333"},
		{Ref: syncv1.ObjectRef{Version: "v1", Kind: "Namespace", Name: "payments"},
			Action: syncv1.ActionUnchanged, LiveHash: "4444", DesiredHash: "4444"},
	}
}

func TestDigest_IsPinned(t *testing.T) {
	// The canonical input is
	//   kuvryn-plan-digest/v1
	//   "" "v1" "ConfigMap" "payments" "settings" "create" "" "3333"
	//   "" "v1" "Namespace" "" "payments" "unchanged" "4444" "4444"
	//   "apps" "v1" "Deployment" "payments" "api" "update" "1111" "2222"
	// each line ending in a newline. Changing it invalidates every recorded
	// approval, so it must be deliberate.
	tests := []struct {
		name    string
		entries []Entry
		want    string
	}{
		{"three entries", digestEntries(), "sha256:ad48ac63c59f77e170ca07a474997c11d6607b9d44f9d3d5b319d682072b487c"},
		{"no entries", nil, "sha256:a6541a95f3164cff973830e8dd263017e8c8a1585fd251e2d7e096a84345e536"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Digest(tt.entries); got != tt.want {
				t.Errorf("Digest() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestDigest_DoesNotDependOnOrder(t *testing.T) {
	want := Digest(digestEntries())
	for seed := int64(1); seed <= 20; seed++ {
		entries := digestEntries()
		rand.New(rand.NewSource(seed)).Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
		if got := Digest(entries); got != want {
			t.Fatalf("seed %d: Digest() = %s, want %s", seed, got, want)
		}
	}
}

func TestDigest_CoversIdentityActionAndHashesOnly(t *testing.T) {
	base := Digest(digestEntries())
	tests := []struct {
		name    string
		change  func(*Entry)
		changes bool
	}{
		{"group", func(e *Entry) { e.Ref.Group = "extensions" }, true},
		{"version", func(e *Entry) { e.Ref.Version = "v2" }, true},
		{"kind", func(e *Entry) { e.Ref.Kind = "StatefulSet" }, true},
		{"namespace", func(e *Entry) { e.Ref.Namespace = "billing" }, true},
		{"name", func(e *Entry) { e.Ref.Name = "web" }, true},
		{"action", func(e *Entry) { e.Action = syncv1.ActionDelete }, true},
		{"live hash", func(e *Entry) { e.LiveHash = "9999" }, true},
		{"desired hash", func(e *Entry) { e.DesiredHash = "9999" }, true},
		{"wave, which the desired hash already covers", func(e *Entry) { e.Wave = 7 }, false},
		{"hook, which the desired hash already covers", func(e *Entry) { e.Hook = "pre-sync" }, false},
		{"force, which the desired hash already covers", func(e *Entry) { e.Force = true }, false},
		{"diff, which is derived from the hashed objects", func(e *Entry) { e.Diff, e.DiffTruncated = "other", true }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries := digestEntries()
			tt.change(&entries[0])
			if changed := Digest(entries) != base; changed != tt.changes {
				t.Errorf("changing the %s changes the digest: %v, want %v", tt.name, changed, tt.changes)
			}
		})
	}
}

func TestDigest_FieldBoundariesAreUnambiguous(t *testing.T) {
	tests := []struct {
		name string
		a, b []Entry
	}{
		{"a space moved between namespace and name",
			[]Entry{{Ref: syncv1.ObjectRef{Kind: "ConfigMap", Namespace: "a b", Name: "c"}}},
			[]Entry{{Ref: syncv1.ObjectRef{Kind: "ConfigMap", Namespace: "a", Name: "b c"}}}},
		{"a quote inside a name",
			[]Entry{{Ref: syncv1.ObjectRef{Kind: "ConfigMap", Namespace: `a" "b`, Name: "c"}}},
			[]Entry{{Ref: syncv1.ObjectRef{Kind: "ConfigMap", Namespace: "a", Name: `b" "c`}}}},
		{"a newline inside a name",
			[]Entry{{Ref: syncv1.ObjectRef{Kind: "A", Name: "x"}}, {Ref: syncv1.ObjectRef{Kind: "B", Name: "y"}}},
			[]Entry{{Ref: syncv1.ObjectRef{Kind: "A", Name: "x\" \"\" \"\" \"\"\n\"\" \"\" \"B\" \"\" \"y"}}}},
		{"one entry twice is not one entry",
			[]Entry{{Ref: syncv1.ObjectRef{Kind: "A", Name: "x"}}},
			[]Entry{{Ref: syncv1.ObjectRef{Kind: "A", Name: "x"}}, {Ref: syncv1.ObjectRef{Kind: "A", Name: "x"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if Digest(tt.a) == Digest(tt.b) {
				t.Errorf("Digest() of %v and %v collide", tt.a, tt.b)
			}
		})
	}
}

func TestBuild_SummarisesEveryEntryAndBoundsTheList(t *testing.T) {
	actions := []syncv1.PlanAction{syncv1.ActionUnchanged, syncv1.ActionCreate, syncv1.ActionUpdate, syncv1.ActionDelete}
	var entries []Entry
	for i := 0; i < 250; i++ {
		entries = append(entries, Entry{
			Ref:    syncv1.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "payments", Name: fmt.Sprintf("cm-%03d", i)},
			Action: actions[i%len(actions)],
		})
	}
	got := Build(entries)
	want := syncv1.PlanSummary{Create: 63, Update: 62, Delete: 62, Unchanged: 63}
	if got.Summary != want {
		t.Errorf("Summary = %+v, want %+v", got.Summary, want)
	}
	if len(got.Entries) != syncv1.MaxPlanEntries || !got.Truncated {
		t.Errorf("Build() kept %d entries, truncated %v; want %d, true", len(got.Entries), got.Truncated, syncv1.MaxPlanEntries)
	}
	if got.Digest != Digest(entries) {
		t.Errorf("Digest = %s, want the digest of all %d entries", got.Digest, len(entries))
	}
	changes := 0
	for i, e := range got.Entries {
		if e.Action != syncv1.ActionUnchanged {
			changes++
			if i >= 187 {
				t.Errorf("change %s at position %d, after unchanged entries", e.Name, i)
			}
		}
	}
	if changes != 187 {
		t.Errorf("Build() kept %d changes, want all 187", changes)
	}
}

func TestBuild_OrdersChangesFirstThenByIdentity(t *testing.T) {
	entries := []Entry{
		{Ref: syncv1.ObjectRef{Version: "v1", Kind: "Namespace", Name: "payments"}, Action: syncv1.ActionUnchanged},
		{Ref: syncv1.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "payments", Name: "api"},
			Action: syncv1.ActionUpdate, Wave: 2, Diff: "--- live\n+++ desired\n"},
		{Ref: syncv1.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "payments", Name: "b"}, Action: syncv1.ActionDelete},
		{Ref: syncv1.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "payments", Name: "a"}, Action: syncv1.ActionUnchanged},
		{Ref: syncv1.ObjectRef{Group: "batch", Version: "v1", Kind: "Job", Namespace: "payments", Name: "migrate"},
			Action: syncv1.ActionCreate, Hook: "pre-sync"},
	}
	got := Build(entries)
	want := []syncv1.PlanEntry{
		{ObjectRef: entries[2].Ref, Action: syncv1.ActionDelete},
		{ObjectRef: entries[1].Ref, Action: syncv1.ActionUpdate, Wave: 2, Diff: "--- live\n+++ desired\n"},
		{ObjectRef: entries[4].Ref, Action: syncv1.ActionCreate, Hook: "pre-sync"},
		{ObjectRef: entries[3].Ref, Action: syncv1.ActionUnchanged},
		{ObjectRef: entries[0].Ref, Action: syncv1.ActionUnchanged},
	}
	if !reflect.DeepEqual(got.Entries, want) {
		t.Errorf("Entries =\n%+v\nwant\n%+v", got.Entries, want)
	}
	if got.Truncated {
		t.Errorf("Truncated = true for %d entries", len(entries))
	}
	if got.Summary != (syncv1.PlanSummary{Create: 1, Update: 1, Delete: 1, Unchanged: 2}) {
		t.Errorf("Summary = %+v", got.Summary)
	}
}

func TestBuild_CutsOverlongDiffs(t *testing.T) {
	long := strings.Repeat("+ a line of forty bytes, give or take...\n", 100)
	tests := []struct {
		name          string
		entry         Entry
		wantTruncated bool
	}{
		{"overlong diff is cut", Entry{Action: syncv1.ActionUpdate, Diff: long}, true},
		{"diff already cut stays marked", Entry{Action: syncv1.ActionUpdate, Diff: "+x\n", DiffTruncated: true}, true},
		{"short diff is kept", Entry{Action: syncv1.ActionUpdate, Diff: "+x\n"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Build([]Entry{tt.entry}).Entries[0]
			if len(got.Diff) > syncv1.MaxDiffBytes || !strings.HasPrefix(tt.entry.Diff, got.Diff) || !strings.HasSuffix(got.Diff, "\n") {
				t.Errorf("Diff is %d bytes, want a whole-line prefix of at most %d", len(got.Diff), syncv1.MaxDiffBytes)
			}
			if got.DiffTruncated != tt.wantTruncated {
				t.Errorf("DiffTruncated = %v, want %v", got.DiffTruncated, tt.wantTruncated)
			}
		})
	}
}

func TestBuild_WithoutEntries(t *testing.T) {
	got := Build(nil)
	want := syncv1.Plan{Digest: Digest(nil)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Build(nil) = %+v, want %+v", got, want)
	}
}

func TestBuild_EndToEndFromObjects(t *testing.T) {
	live := asServed(secret(map[string]string{"password": password}, nil))
	entry, err := NewEntry(live, secret(map[string]string{"password": token}, nil))
	if err != nil {
		t.Fatalf("NewEntry() error = %v", err)
	}
	plan := Build([]Entry{entry})
	if plan.Summary.Update != 1 || len(plan.Entries) != 1 {
		t.Fatalf("Build() = %+v, want one update", plan)
	}
	for _, s := range []string{password, b64(password), token, b64(token)} {
		if strings.Contains(plan.Entries[0].Diff, s) || strings.Contains(plan.Digest, s) {
			t.Errorf("plan shows secret %q", s)
		}
	}
}
