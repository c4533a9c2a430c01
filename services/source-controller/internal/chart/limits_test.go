package chart

import (
	"context"
	"strings"
	"testing"
)

// Refs that are refused before any network access: nothing listens on
// port 1 of the loopback address.
func TestPull_RefusesRangesAndUnsafeRepositories(t *testing.T) {
	for _, tc := range []struct {
		name string
		ref  Ref
		want string
	}{
		{name: "range", ref: Ref{Repository: "https://127.0.0.1:1/charts", Name: "api", Version: ">=1.0.0"}, want: "exact SemVer"},
		{name: "wildcard", ref: Ref{Repository: "oci://127.0.0.1:1/charts", Name: "api", Version: "1.x"}, want: "exact SemVer"},
		{name: "caret", ref: Ref{Repository: "oci://127.0.0.1:1/charts", Name: "api", Version: "^1.2.0"}, want: "exact SemVer"},
		{name: "tilde", ref: Ref{Repository: "oci://127.0.0.1:1/charts", Name: "api", Version: "~1.2.3"}, want: "exact SemVer"},
		{name: "partial", ref: Ref{Repository: "oci://127.0.0.1:1/charts", Name: "api", Version: "v1.2"}, want: "exact SemVer"},
		{name: "empty version", ref: Ref{Repository: "oci://127.0.0.1:1/charts", Name: "api"}, want: "exact SemVer"},
		{name: "plain http without insecure", ref: Ref{Repository: "http://127.0.0.1:1/charts", Name: "api", Version: "1.0.0"}, want: "insecure: true"},
		{name: "unknown scheme", ref: Ref{Repository: "ftp://127.0.0.1:1/charts", Name: "api", Version: "1.0.0"}, want: "oci:// or https://"},
		{name: "credentials in URL", ref: Ref{Repository: "https://robot:pw@127.0.0.1:1/charts", Name: "api", Version: "1.0.0"}, want: "credentials in its URL"},
		{name: "name with path", ref: Ref{Repository: "oci://127.0.0.1:1/charts", Name: "../api", Version: "1.0.0"}, want: "single path segment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := (&Puller{Dir: t.TempDir()}).Pull(context.Background(), tc.ref, "payments", nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), ":pw@") {
				t.Fatalf("error leaks the URL password: %v", err)
			}
		})
	}
}

func TestPull_RefusesArchivesOverMaxArchiveBytes(t *testing.T) {
	r := newChartRepo(t, nil)
	big := packageChart(t, "big", "1.0.0", map[string][]byte{"files/padding": randomBytes(t, 256<<10)})
	r.publish(t, indexEntry{name: "big", version: "1.0.0", url: "charts/big-1.0.0.tgz", archive: big})
	p := r.puller(t)
	p.MaxArchiveBytes = 64 << 10

	_, err := p.Pull(context.Background(), r.ref("big", "1.0.0"), "payments", nil)
	if err == nil || !strings.Contains(err.Error(), "byte limit") {
		t.Fatalf("got %v, want a size limit error", err)
	}
}

func TestPull_RefusesArchivesThatUnpackFarLargerThanPacked(t *testing.T) {
	r := newChartRepo(t, nil)
	bomb := bombArchive(t, "bomb", "1.0.0", 64<<20)
	if len(bomb) > 256<<10 {
		t.Fatalf("bomb archive is %d bytes; the test wants a small one", len(bomb))
	}
	r.publish(t, indexEntry{name: "bomb", version: "1.0.0", url: "charts/bomb-1.0.0.tgz", archive: bomb})
	p := r.puller(t)
	p.MaxUnpackedBytes = 8 << 20

	_, err := p.Pull(context.Background(), r.ref("bomb", "1.0.0"), "payments", nil)
	if err == nil || !strings.Contains(err.Error(), "unpacks to more than 8388608 bytes") {
		t.Fatalf("got %v, want an unpacked size error", err)
	}
	if n := len(cachedArchives(t, p.Dir)); n != 0 {
		t.Fatalf("%d archives cached after a refused pull, want 0", n)
	}
}
