// Package chart pulls Helm charts at exact versions from OCI registries and
// https chart repositories, and caches the archives on disk.
//
// Nothing from the local Helm or Docker setup is used: no repository config,
// registry credentials file, cache or plugins. Credentials come only from the
// caller, and the cache is keyed by namespace and credentials so one
// namespace never receives a private chart that another namespace pulled.
package chart

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// Defaults for the zero values of Puller's limits.
const (
	DefaultMaxArchiveBytes  int64 = 20 << 20  // 20 MiB
	DefaultMaxUnpackedBytes int64 = 100 << 20 // 100 MiB, Helm's own cap on a loaded chart
	DefaultMaxIndexBytes    int64 = 50 << 20  // 50 MiB; public index.yaml files reach tens of MiB
)

const (
	archiveSuffix = ".tgz"
	tempPrefix    = ".pull-"
	userAgent     = "kuvryn-sync-source-controller"
)

// Puller pulls charts and caches their archives under Dir. It keeps no
// state besides the directory and is safe for concurrent use.
type Puller struct {
	// Dir holds the cached archives; it is created on first use.
	Dir string
	// MaxArchiveBytes bounds a chart archive as downloaded; 0 means DefaultMaxArchiveBytes.
	MaxArchiveBytes int64
	// MaxUnpackedBytes bounds a chart archive once gunzipped, so an archive
	// far larger unpacked than packed is refused before Helm loads it; 0
	// means DefaultMaxUnpackedBytes. Helm's loader also refuses charts over
	// its own 100 MiB limit.
	MaxUnpackedBytes int64
	// MaxIndexBytes bounds an https repository's index.yaml; 0 means DefaultMaxIndexBytes.
	MaxIndexBytes int64
	// Now stamps cache use; nil means time.Now.
	Now func() time.Time
	// RootCAs verifies the TLS certificates of registries and repositories;
	// nil means the system roots.
	RootCAs *x509.CertPool
}

// Ref names a chart at an exact version, as spec.source.render.helm.chart does.
type Ref struct {
	// Repository is oci://host/path, https://host/path, or http://host/path with Insecure.
	Repository string
	Name       string
	// Version is an exact SemVer version; a leading v matches both v1.2.3 and 1.2.3.
	Version string
	// Insecure allows plain HTTP.
	Insecure bool
}

// Credentials authenticate to a registry or repository with HTTP basic auth
// (for OCI, the registry's token flow).
type Credentials struct {
	Username string
	Password string
}

// Pulled is a loaded chart and the sha256 of its archive, hex.
type Pulled struct {
	Chart  *helmchart.Chart
	SHA256 string
}

// Pull returns the chart ref names, from the cache entry of namespace and
// creds when there is one (without network access), else from the
// repository. creds may be nil for anonymous access.
func (p *Puller) Pull(ctx context.Context, ref Ref, namespace string, creds *Credentials) (*Pulled, error) {
	ref.Repository = strings.TrimSuffix(ref.Repository, "/")
	if err := validate(ref); err != nil {
		return nil, err
	}
	if p.Dir == "" {
		return nil, errors.New("chart cache directory is not set")
	}
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating chart cache directory: %w", err)
	}
	entry := filepath.Join(p.Dir, cacheKey(ref, namespace, creds)+archiveSuffix)

	if pulled, ok := p.fromCache(ref, entry); ok {
		return pulled, nil
	}

	var archive []byte
	var err error
	if strings.HasPrefix(ref.Repository, "oci://") {
		archive, err = p.fetchOCI(ctx, ref, creds)
	} else {
		archive, err = p.fetchHTTP(ctx, ref, creds)
	}
	if err != nil {
		return nil, err
	}
	pulled, err := p.load(ref, archive)
	if err != nil {
		return nil, err
	}
	if err := p.store(entry, archive); err != nil {
		return nil, err
	}
	return pulled, nil
}

// validate refuses what can be refused without the network: unknown or
// plain-HTTP schemes, bad names and anything but an exact version.
func validate(ref Ref) error {
	u, err := url.Parse(ref.Repository)
	if err != nil || u.Host == "" {
		return fmt.Errorf("chart repository %q is not a URL with a host", ref.Repository)
	}
	if u.User != nil {
		return fmt.Errorf("chart repository %s carries credentials in its URL; reference a Secret instead", u.Redacted())
	}
	switch u.Scheme {
	case "oci", "https":
	case "http":
		if !ref.Insecure {
			return fmt.Errorf("chart repository %s uses plain HTTP; set insecure: true to allow it", u.Redacted())
		}
	default:
		return fmt.Errorf("chart repository %s must be an oci:// or https:// URL", u.Redacted())
	}
	if ref.Name == "" || strings.ContainsAny(ref.Name, "/\\:@") || ref.Name == "." || ref.Name == ".." {
		return fmt.Errorf("chart name %q must be a single path segment", ref.Name)
	}
	if _, err := semver.StrictNewVersion(strings.TrimPrefix(ref.Version, "v")); err != nil {
		return fmt.Errorf("chart %s version %q is not an exact SemVer version (ranges such as >=1.0.0 or 1.x are refused)", ref.Name, ref.Version)
	}
	return nil
}

// sameVersion compares versions ignoring a leading v.
func sameVersion(a, b string) bool {
	return strings.TrimPrefix(a, "v") == strings.TrimPrefix(b, "v")
}

// cacheKey is the sha256 of everything that decides what a pull may return,
// length-prefixed so no two inputs share an encoding. Credentials enter only
// as a digest.
func cacheKey(ref Ref, namespace string, creds *Credentials) string {
	var credsDigest string
	if creds != nil {
		sum := sha256.Sum256([]byte(creds.Username + "\x00" + creds.Password))
		credsDigest = hex.EncodeToString(sum[:])
	}
	insecure := "tls"
	if ref.Insecure {
		insecure = "insecure"
	}
	h := sha256.New()
	for _, field := range []string{"chart-cache/v1", ref.Repository, ref.Name, ref.Version, insecure, namespace, credsDigest} {
		fmt.Fprintf(h, "%d:%s\n", len(field), field)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// fromCache loads a cache entry and marks it used. A missing, unreadable or
// invalid entry is a miss; an invalid one is removed so the pull replaces it.
func (p *Puller) fromCache(ref Ref, entry string) (*Pulled, bool) {
	now := p.now()
	if err := os.Chtimes(entry, now, now); err != nil {
		return nil, false
	}
	archive, err := readFileLimited(entry, p.maxArchive())
	if err == nil {
		var pulled *Pulled
		if pulled, err = p.load(ref, archive); err == nil {
			return pulled, true
		}
	}
	_ = os.Remove(entry)
	return nil, false
}

func readFileLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return data, nil
}

// store writes the archive to its cache entry atomically, so concurrent
// pulls and Prune only ever see complete archives.
func (p *Puller) store(entry string, archive []byte) error {
	tmp, err := os.CreateTemp(p.Dir, tempPrefix+"*")
	if err != nil {
		return fmt.Errorf("caching chart archive: %w", err)
	}
	_, err = tmp.Write(archive)
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), entry)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("caching chart archive: %w", err)
	}
	now := p.now()
	return os.Chtimes(entry, now, now)
}

// load checks the archive's unpacked size and entry types, loads it with Helm and checks it
// is the chart that was asked for.
func (p *Puller) load(ref Ref, archive []byte) (*Pulled, error) {
	limit := p.maxUnpacked()
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("chart %s %s from %s is not a gzip archive: %w", ref.Name, ref.Version, ref.Repository, err)
	}
	unpacked := &countingReader{r: io.LimitReader(gz, limit+1)}
	entriesErr := CheckEntries(unpacked)
	if entriesErr == nil {
		// Bytes after the tar stream's end count too.
		_, entriesErr = io.Copy(io.Discard, unpacked)
	}
	if unpacked.n > limit {
		return nil, fmt.Errorf("chart %s %s from %s unpacks to more than %d bytes (its archive is %d bytes); refusing it",
			ref.Name, ref.Version, ref.Repository, limit, len(archive))
	}
	if entriesErr != nil {
		return nil, fmt.Errorf("chart %s %s from %s: %w", ref.Name, ref.Version, ref.Repository, entriesErr)
	}
	ch, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("loading chart %s %s from %s: %w", ref.Name, ref.Version, ref.Repository, err)
	}
	if ch.Metadata.Name != ref.Name || !sameVersion(ch.Metadata.Version, ref.Version) {
		return nil, fmt.Errorf("chart %s %s from %s holds chart %s %s instead",
			ref.Name, ref.Version, ref.Repository, ch.Metadata.Name, ch.Metadata.Version)
	}
	sum := sha256.Sum256(archive)
	return &Pulled{Chart: ch, SHA256: hex.EncodeToString(sum[:])}, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Prune removes cached charts, and leftovers of interrupted pulls, that no
// Pull has used for longer than maxUnused. It returns how many charts it
// removed.
func (p *Puller) Prune(maxUnused time.Duration) (int, error) {
	entries, err := os.ReadDir(p.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading chart cache: %w", err)
	}
	cutoff := p.now().Add(-maxUnused)
	removed := 0
	var errs []error
	for _, e := range entries {
		name := e.Name()
		isChart := strings.HasSuffix(name, archiveSuffix) && !strings.HasPrefix(name, tempPrefix)
		if e.IsDir() || (!isChart && !strings.HasPrefix(name, tempPrefix)) {
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !info.ModTime().Before(cutoff) {
			continue
		}
		if err := os.Remove(filepath.Join(p.Dir, name)); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		if isChart {
			removed++
		}
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("pruning chart cache: %w", errors.Join(errs...))
	}
	return removed, nil
}

func (p *Puller) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Puller) maxArchive() int64 {
	if p.MaxArchiveBytes > 0 {
		return p.MaxArchiveBytes
	}
	return DefaultMaxArchiveBytes
}

func (p *Puller) maxUnpacked() int64 {
	if p.MaxUnpackedBytes > 0 {
		return p.MaxUnpackedBytes
	}
	return DefaultMaxUnpackedBytes
}

func (p *Puller) maxIndex() int64 {
	if p.MaxIndexBytes > 0 {
		return p.MaxIndexBytes
	}
	return DefaultMaxIndexBytes
}
