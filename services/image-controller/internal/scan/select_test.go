package scan

import (
	"errors"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testregistry "github.com/kuvryn/kuvryn-sync/pkg/testkit/registry"
)

func semverPolicy(r string) syncv1.ImageSelectionPolicy {
	return syncv1.ImageSelectionPolicy{SemVer: &syncv1.SemVerPolicy{Range: r}}
}

func patternPolicy(regex, extract, sort, order string) syncv1.ImageSelectionPolicy {
	return syncv1.ImageSelectionPolicy{TagPattern: &syncv1.TagPatternPolicy{Regex: regex, Extract: extract, Sort: sort, Order: order}}
}

func TestScan_SelectsWhatUsersExpect(t *testing.T) {
	reg := testregistry.Start(t, testregistry.Options{})
	private := testregistry.Start(t, testregistry.Options{Username: "robot", Password: "s3cret"})
	release := []string{"0.9.0", "1.0.0", "v1.2.0", "1.10.0", "1.11.0-rc.1", "2.0.0", "latest"}
	builds := []string{"main-7-abc", "main-12-def", "main-9-fff", "feature-99-aaa", "RELEASE.2024-01-02", "RELEASE.2023-12-31"}

	for _, tc := range []struct {
		name    string
		reg     *testregistry.Registry
		auth    authn.Authenticator
		tags    []string
		policy  syncv1.ImageSelectionPolicy
		want    string
		wantErr error
	}{
		{name: "semver range excludes pre-releases and later majors", tags: release, policy: semverPolicy(">=1.0.0 <2.0.0"), want: "1.10.0"},
		{name: "semver range naming a pre-release includes it", tags: release, policy: semverPolicy(">=1.11.0-0 <2.0.0"), want: "1.11.0-rc.1"},
		{name: "semver accepts a v prefix", tags: release, policy: semverPolicy("~1.2"), want: "v1.2.0"},
		{name: "semver with nothing in range", tags: release, policy: semverPolicy(">=3"), wantErr: ErrNoMatchingTag},
		{name: "numerical by capture group, highest", tags: builds, policy: patternPolicy(`^main-(?P<build>\d+)-[a-f]+$`, "$build", "numerical", "desc"), want: "main-12-def"},
		{name: "numerical by capture group, lowest", tags: builds, policy: patternPolicy(`^main-(?P<build>\d+)-[a-f]+$`, "$build", "numerical", "asc"), want: "main-7-abc"},
		{name: "alphabetical without capture compares whole tag", tags: builds, policy: patternPolicy(`^main-`, "", "alphabetical", "desc"), want: "main-9-fff"},
		{name: "alphabetical over dated releases", tags: builds, policy: patternPolicy(`^RELEASE\.(?P<ts>.*)$`, "${ts}", "", ""), want: "RELEASE.2024-01-02"},
		{name: "pattern matching nothing", tags: builds, policy: patternPolicy(`^nope$`, "", "", ""), wantErr: ErrNoMatchingTag},
		{name: "private registry with basic auth", reg: private, auth: basic("robot", "s3cret"), tags: release, policy: semverPolicy("1.x"), want: "1.10.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.reg
			if r == nil {
				r = reg
			}
			repo := "acme/" + sanitize(tc.name)
			digests := r.Push(t, repo, tc.tags...)
			s := New(Options{QPS: 1000, Burst: 100})
			spec := syncv1.ImagePolicySpec{Image: r.Host() + "/" + repo, Policy: tc.policy}
			res, err := s.Scan(t.Context(), spec, tc.auth)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Scan error %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := spec.Image + ":" + tc.want + "@" + digests[tc.want].String()
			if res.Image.String() != want {
				t.Errorf("selected %s, want %s", res.Image, want)
			}
			if res.Tags != len(tc.tags) || res.Truncated {
				t.Errorf("read %d tags (truncated %v), want %d", res.Tags, res.Truncated, len(tc.tags))
			}
		})
	}
}

func TestScan_DigestFollowsMovingTag(t *testing.T) {
	reg := testregistry.Start(t, testregistry.Options{})
	s := New(Options{QPS: 1000, Burst: 100})
	spec := syncv1.ImagePolicySpec{Image: reg.Host() + "/acme/api",
		Policy: syncv1.ImageSelectionPolicy{Digest: &syncv1.DigestPolicy{Tag: "main"}}}
	for i := range 2 {
		d := reg.Push(t, "acme/api", "main")["main"]
		res, err := s.Scan(t.Context(), spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := spec.Image + ":main@" + d.String(); res.Image.String() != want {
			t.Errorf("push %d: selected %s, want %s", i+1, res.Image, want)
		}
	}
}

func TestScan_RefusesWrongRegistryPassword(t *testing.T) {
	reg := testregistry.Start(t, testregistry.Options{Username: "robot", Password: "s3cret"})
	reg.Push(t, "acme/api", "1.0.0")
	spec := syncv1.ImagePolicySpec{Image: reg.Host() + "/acme/api", Policy: semverPolicy("1.x")}
	for _, auth := range []authn.Authenticator{nil, basic("robot", "wrong")} {
		if _, err := New(Options{QPS: 1000, Burst: 100}).Scan(t.Context(), spec, auth); err == nil {
			t.Errorf("scan with %v succeeded against a registry requiring basic auth", auth)
		}
	}
}
