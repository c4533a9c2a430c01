package policy

import (
	"errors"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func TestNew_NamesTheFieldToFix(t *testing.T) {
	pattern := func(p syncv1.TagPatternPolicy) syncv1.ImageSelectionPolicy {
		return syncv1.ImageSelectionPolicy{TagPattern: &p}
	}
	for _, tc := range []struct {
		policy syncv1.ImageSelectionPolicy
		field  string
	}{
		{syncv1.ImageSelectionPolicy{SemVer: &syncv1.SemVerPolicy{Range: "bananas"}}, "spec.policy.semver.range"},
		{pattern(syncv1.TagPatternPolicy{Regex: "(unclosed"}), "spec.policy.tagPattern.regex"},
		{pattern(syncv1.TagPatternPolicy{Regex: `^(?P<ts>\d+)$`, Extract: "$build"}), "spec.policy.tagPattern.extract"},
		{pattern(syncv1.TagPatternPolicy{Regex: `^(?P<ts>\d+)$`, Extract: "${ts}-$2"}), "spec.policy.tagPattern.extract"},
		{pattern(syncv1.TagPatternPolicy{Regex: ".", Sort: "random"}), "spec.policy.tagPattern.sort"},
		{pattern(syncv1.TagPatternPolicy{Regex: ".", Order: "up"}), "spec.policy.tagPattern.order"},
		{syncv1.ImageSelectionPolicy{Digest: &syncv1.DigestPolicy{Tag: "main"}}, "spec.policy"},
	} {
		_, err := New(tc.policy)
		var invalid *InvalidError
		if !errors.As(err, &invalid) || invalid.Field != tc.field {
			t.Errorf("New(%+v) = %v, want an InvalidError on %s", tc.policy, err, tc.field)
		}
	}
	for _, ok := range []syncv1.TagPatternPolicy{
		{Regex: `^(?P<ts>\d+)-(\w+)$`, Extract: "${ts}$2 $$"},
		{Regex: `^v\d+$`},
	} {
		if _, err := New(pattern(ok)); err != nil {
			t.Errorf("New(%+v): %v", ok, err)
		}
	}
}
