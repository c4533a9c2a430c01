package render

import (
	"archive/tar"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testchart "github.com/kuvryn/kuvryn-sync/pkg/testkit/chart"
)

// A vendored subchart archive holding a link is refused naming the chart,
// the archive and the entry; Helm would read the link as an empty file.
func TestRender_Helm_RefusesSubchartArchiveEntriesThatAreNotFiles(t *testing.T) {
	subChart := "apiVersion: v2\nname: db\nversion: 1.0.0\n"
	for _, tc := range []struct {
		name  string
		entry tar.Header
		want  string // empty: the render succeeds
	}{
		{
			name:  "symlink out of the checkout",
			entry: tar.Header{Name: "db/templates/passwd.yaml", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
			want:  `web: charts/db-1.0.0.tgz: archive entry "db/templates/passwd.yaml" is a symbolic link to "/etc/passwd"; chart archives may hold only files and directories`,
		},
		{
			name:  "symlink within the subchart",
			entry: tar.Header{Name: "db/values.yaml", Typeflag: tar.TypeSymlink, Linkname: "Chart.yaml"},
			want:  `web: charts/db-1.0.0.tgz: archive entry "db/values.yaml" is a symbolic link to "Chart.yaml"`,
		},
		{
			name:  "hard link",
			entry: tar.Header{Name: "db/templates/x.yaml", Typeflag: tar.TypeLink, Linkname: "db/Chart.yaml"},
			want:  `web: charts/db-1.0.0.tgz: archive entry "db/templates/x.yaml" is a hard link to "db/Chart.yaml"`,
		},
		{
			name:  "allowed: a directory entry",
			entry: tar.Header{Name: "db/templates/", Typeflag: tar.TypeDir, Mode: 0o755},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			archive, err := testchart.TarGz([]tar.Header{{Name: "db/Chart.yaml", Typeflag: tar.TypeReg}, tc.entry},
				map[string]string{"db/Chart.yaml": subChart})
			if err != nil {
				t.Fatal(err)
			}
			root, _ := newRepo(t, merge(under("web", webChart(t)), map[string]string{"web/charts/db-1.0.0.tgz": string(archive)}), nil)
			req := Request{
				Root: root, Path: "web", Type: syncv1.RenderHelm, Application: "shop", Decryptor: &testDecryptor{},
				Helm: HelmOptions{Namespace: "prod"},
			}
			if tc.want == "" {
				mustRender(t, req)
				return
			}
			renderErr(t, req, syncv1.ReasonValidationFailure, tc.want)
		})
	}
}
