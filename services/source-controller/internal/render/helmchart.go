package render

// Loading a chart's files: from Git through the repository's file system,
// or copied from a pulled chart, with vendored subchart archives unpacked
// against the render's input budget.

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/ignore"

	pulledchart "github.com/kuvryn/kuvryn-sync/services/source-controller/internal/chart"
)

var utf8BOM = []byte("\xEF\xBB\xBF")

// loadChartFiles returns the chart's files, with vendored subchart
// archives unpacked, and the chart's name for messages: read from Git
// through the repository's file system, or copied from a chart pulled from
// a chart repository, so the caller's chart is never modified.
func loadChartFiles(repo *repoFS, pulled *chart.Chart, dir string) ([]*loader.BufferedFile, string, error) {
	var (
		files []*loader.BufferedFile
		label string
		err   error
	)
	if pulled != nil {
		label = "chart " + pulled.Name()
		if len(pulled.Raw) == 0 {
			return nil, label, renderFailed(label, "chart carries no files; load it with Helm's chart loader")
		}
		var size int64
		for _, f := range pulled.Raw {
			files = append(files, &loader.BufferedFile{Name: f.Name, Data: f.Data})
			size += int64(len(f.Data))
		}
		if err := repo.spend(label, size); err != nil {
			return nil, label, err
		}
	} else {
		label = dir
		if err := requireDir(repo, dir); err != nil {
			return nil, label, err
		}
		if files, err = readChartFiles(repo, dir); err != nil {
			return nil, label, err
		}
	}
	if files, err = unpackSubcharts(repo, label, files); err != nil {
		return nil, label, err
	}
	return files, label, nil
}

// readChartFiles reads the chart in dir as helm's directory loader does,
// .helmignore included, but through the repository's file system. Values
// files of the chart and its vendored subcharts are decrypted; templates are
// not SOPS files and are read as they are.
func readChartFiles(repo *repoFS, dir string) ([]*loader.BufferedFile, error) {
	prefix := ""
	if dir != "." {
		prefix = dir + "/"
	}
	rules := ignore.Empty()
	ignoreFile := path.Join(dir, ignore.HelmIgnore)
	data, _, err := repo.readRaw(ignoreFile)
	switch {
	case err == nil:
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, renderFailed(ignoreFile, "%w", err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	rules.AddDefaults()

	var files []*loader.BufferedFile
	skip := func(rel string, fi fs.FileInfo) bool {
		// A chart at the top of a checkout sits beside .git, which is
		// repository metadata, never chart content.
		return path.Base(rel) == ".git" || rules.Ignore(strings.TrimPrefix(rel, prefix), fi)
	}
	err = repo.walkFiles(dir, skip, func(rel string) error {
		name := strings.TrimPrefix(rel, prefix)
		var data []byte
		var err error
		if isChartValuesFile(name) {
			data, _, _, err = repo.readFile(rel)
		} else {
			data, _, err = repo.readRaw(rel)
		}
		if err != nil {
			return err
		}
		files = append(files, &loader.BufferedFile{Name: name, Data: bytes.TrimPrefix(data, utf8BOM)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

// isChartValuesFile reports whether name (chart-relative) is the
// values.yaml of the chart or of a subchart vendored under charts/.
func isChartValuesFile(name string) bool {
	parts := strings.Split(name, "/")
	if len(parts)%2 == 0 || parts[len(parts)-1] != "values.yaml" {
		return false
	}
	for i := 0; i < len(parts)-1; i += 2 {
		if parts[i] != "charts" {
			return false
		}
	}
	return true
}

// subchartArchive matches a vendored subchart archive at any depth. Helm
// skips subcharts whose name starts with '_' or '.', so they are not unpacked.
var subchartArchive = regexp.MustCompile(`^(charts/[^/]+/)*charts/[^/_.][^/]*\.tgz$`)

// unpackSubcharts replaces every vendored subchart archive by its files, as
// if the subchart were vendored as a directory, counting the unpacked bytes
// against the render's budget. Helm would unpack them itself, against a far
// larger limit of its own.
func unpackSubcharts(repo *repoFS, label string, files []*loader.BufferedFile) ([]*loader.BufferedFile, error) {
	for {
		var out []*loader.BufferedFile
		dirs := map[string]bool{}
		for _, f := range files {
			dirs[path.Dir(f.Name)] = true
		}
		unpacked := false
		for _, f := range files {
			if !subchartArchive.MatchString(f.Name) {
				out = append(out, f)
				continue
			}
			unpacked = true
			file := label + ": " + f.Name
			subdir := strings.TrimSuffix(f.Name, ".tgz")
			if dirs[subdir] {
				return nil, renderFailed(label, "%s and %s/ both vendor a subchart", f.Name, subdir)
			}
			zr, err := gzip.NewReader(bytes.NewReader(f.Data))
			if err != nil {
				return nil, renderFailed(file, "subchart archive is not gzip: %w", err)
			}
			tarData, err := repo.consume(file, zr)
			if err != nil {
				return nil, err
			}
			if err := pulledchart.CheckEntries(bytes.NewReader(tarData)); err != nil {
				return nil, validationFailure(file, "%w", err)
			}
			// Helm's archive loader wants gzip and validates every entry's
			// path; stored (uncompressed) gzip costs a copy, not a compression.
			var stored bytes.Buffer
			zw, err := gzip.NewWriterLevel(&stored, gzip.NoCompression)
			if err != nil {
				return nil, renderFailed(file, "%w", err)
			}
			if _, err := zw.Write(tarData); err != nil {
				return nil, renderFailed(file, "%w", err)
			}
			if err := zw.Close(); err != nil {
				return nil, renderFailed(file, "%w", err)
			}
			inner, err := loader.LoadArchiveFiles(&stored)
			if err != nil {
				return nil, renderFailed(file, "unpacking subchart: %w", err)
			}
			for _, g := range inner {
				out = append(out, &loader.BufferedFile{Name: subdir + "/" + g.Name, Data: g.Data})
			}
		}
		files = out
		if !unpacked {
			return files, nil
		}
	}
}
