package scan

import (
	"fmt"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testregistry "github.com/kuvryn/kuvryn-sync/pkg/testkit/registry"
)

func TestScan_BoundsTheTagList(t *testing.T) {
	reg := testregistry.Start(t, testregistry.Options{})
	var tags []string
	for i := range 30 {
		tags = append(tags, fmt.Sprintf("1.0.%d", i))
	}
	reg.Push(t, "acme/many", tags...)
	s := New(Options{QPS: 1000, Burst: 100, MaxTags: 10})
	res, err := s.Scan(t.Context(), syncv1.ImagePolicySpec{Image: reg.Host() + "/acme/many", Policy: semverPolicy(">=1.0.0")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Tags != 10 || !res.Truncated {
		t.Errorf("read %d tags, truncated %v; want 10, true", res.Tags, res.Truncated)
	}
}
