package chart

import (
	"archive/tar"
	"context"
	"strings"
	"testing"

	testchart "github.com/kuvryn/kuvryn-sync/pkg/testkit/chart"
)

func TestPull_RefusesArchiveEntriesThatAreNotFilesOrDirectories(t *testing.T) {
	chartYAML := "apiVersion: v2\nname: api\nversion: 1.0.0\n"
	head := func(extra ...tar.Header) []tar.Header {
		return append([]tar.Header{{Name: "api/Chart.yaml", Typeflag: tar.TypeReg}}, extra...)
	}
	for _, tc := range []struct {
		name    string
		entries []tar.Header
		want    string // empty: the pull succeeds
	}{
		{
			name:    "symlink out of the chart",
			entries: head(tar.Header{Name: "api/templates/passwd.yaml", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}),
			want:    `chart api 1.0.0 from REPO: archive entry "api/templates/passwd.yaml" is a symbolic link to "/etc/passwd"`,
		},
		{
			name:    "symlink up and out with ..",
			entries: head(tar.Header{Name: "api/values.yaml", Typeflag: tar.TypeSymlink, Linkname: "../../../etc/passwd"}),
			want:    `archive entry "api/values.yaml" is a symbolic link to "../../../etc/passwd"`,
		},
		{
			name:    "symlink inside the chart",
			entries: head(tar.Header{Name: "api/templates/b.yaml", Typeflag: tar.TypeSymlink, Linkname: "Chart.yaml"}),
			want:    `archive entry "api/templates/b.yaml" is a symbolic link to "Chart.yaml"`,
		},
		{
			name:    "hard link",
			entries: head(tar.Header{Name: "api/templates/c.yaml", Typeflag: tar.TypeLink, Linkname: "api/Chart.yaml"}),
			want:    `archive entry "api/templates/c.yaml" is a hard link to "api/Chart.yaml"`,
		},
		{
			name:    "character device",
			entries: head(tar.Header{Name: "api/files/zero", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 5}),
			want:    `archive entry "api/files/zero" is of tar type '3', not a file or a directory`,
		},
		{
			name:    "fifo",
			entries: head(tar.Header{Name: "api/files/pipe", Typeflag: tar.TypeFifo}),
			want:    `archive entry "api/files/pipe" is of tar type '6'`,
		},
		{
			name:    "allowed: files, directories and a global pax header",
			entries: head(tar.Header{Name: "api/templates/", Typeflag: tar.TypeDir, Mode: 0o755}, tar.Header{Typeflag: tar.TypeXGlobalHeader, PAXRecords: map[string]string{"comment": "x"}}),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newChartRepo(t, nil)
			archive, err := testchart.TarGz(tc.entries, map[string]string{"api/Chart.yaml": chartYAML})
			if err != nil {
				t.Fatal(err)
			}
			r.publish(t, indexEntry{name: "api", version: "1.0.0", url: "charts/api-1.0.0.tgz", archive: archive})
			p := r.puller(t)
			_, err = p.Pull(context.Background(), r.ref("api", "1.0.0"), "payments", nil)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("pull of an allowed archive: %v", err)
				}
				return
			}
			want := strings.ReplaceAll(tc.want, "REPO", r.ref("api", "1.0.0").Repository)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("got %v, want an error containing %q", err, want)
			}
			if n := len(cachedArchives(t, p.Dir)); n != 0 {
				t.Fatalf("%d archives cached after a refused pull, want 0", n)
			}
		})
	}
}
