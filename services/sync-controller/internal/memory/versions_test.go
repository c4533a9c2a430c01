package memory

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestVersions_AtLeastOrdersVersionsAsTheAPIServerDoes: versions compare as
// numbers, not strings, and one that is not well formed is as new only as
// itself.
func TestVersions_AtLeastOrdersVersionsAsTheAPIServerDoes(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{a: "10", b: "9", want: true},
		{a: "9", b: "10", want: false},
		{a: "42", b: "42", want: true},
		{a: "x1", b: "x1", want: true},
		{a: "x2", b: "x1", want: false},
		{a: "", b: "1", want: false},
	} {
		if got := AtLeast(tc.a, tc.b); got != tc.want {
			t.Errorf("AtLeast(%q, %q) = %t, want %t", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestVersions_KeepsTheLastVersionSeenOfEachObject: Applications and
// Revisions of one name are apart, and Forget drops one.
func TestVersions_KeepsTheLastVersionSeenOfEachObject(t *testing.T) {
	name := types.NamespacedName{Namespace: "team", Name: "shop"}
	app, rev := Key{Name: name}, Key{Revision: true, Name: name}
	var v Versions
	v.Saw(app, "5")
	v.Saw(app, "7")
	v.Saw(rev, "6")
	for _, tc := range []struct {
		key    Key
		want   string
		wantOK bool
	}{
		{key: app, want: "7", wantOK: true},
		{key: rev, want: "6", wantOK: true},
		{key: Key{Name: types.NamespacedName{Namespace: "team", Name: "cart"}}},
	} {
		if got, ok := v.Seen(tc.key); got != tc.want || ok != tc.wantOK {
			t.Errorf("Seen(%+v) = %q, %t; want %q, %t", tc.key, got, ok, tc.want, tc.wantOK)
		}
	}
	v.Forget(app)
	if _, ok := v.Seen(app); ok {
		t.Error("Seen after Forget: still known")
	}
}
