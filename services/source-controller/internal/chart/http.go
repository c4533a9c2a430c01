package chart

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"helm.sh/helm/v3/pkg/repo"
	"sigs.k8s.io/yaml"
)

// fetchHTTP downloads the chart archive from an https (or, when insecure,
// http) Helm repository: index.yaml, the exact version's first URL resolved
// against the repository, and the archive checked against the index digest.
func (p *Puller) fetchHTTP(ctx context.Context, ref Ref, creds *Credentials) ([]byte, error) {
	client := p.httpClient(ref.Insecure)
	defer client.CloseIdleConnections()

	indexURL, err := url.JoinPath(ref.Repository, "index.yaml")
	if err != nil {
		return nil, fmt.Errorf("chart repository %s: %w", ref.Repository, err)
	}
	data, err := get(ctx, client, indexURL, credsFor(indexURL, ref.Repository, creds), p.maxIndex())
	if err != nil {
		return nil, fmt.Errorf("fetching the index of chart repository %s: %w", ref.Repository, err)
	}
	var index repo.IndexFile
	if err := yaml.Unmarshal(data, &index); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", indexURL, err)
	}
	if index.APIVersion == "" {
		return nil, fmt.Errorf("parsing %s: not a Helm repository index (no apiVersion)", indexURL)
	}
	version := findVersion(index.Entries[ref.Name], ref.Version)
	if version == nil {
		return nil, fmt.Errorf("chart %s version %s not found in %s", ref.Name, ref.Version, indexURL)
	}
	if len(version.URLs) == 0 {
		return nil, fmt.Errorf("chart %s version %s in %s lists no URL", ref.Name, ref.Version, indexURL)
	}
	archiveURL, err := repo.ResolveReferenceURL(ref.Repository, version.URLs[0])
	if err != nil {
		return nil, fmt.Errorf("chart %s version %s in %s: %w", ref.Name, ref.Version, indexURL, err)
	}
	u, err := url.Parse(archiveURL)
	if err != nil {
		return nil, fmt.Errorf("chart %s version %s in %s: %w", ref.Name, ref.Version, indexURL, err)
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && ref.Insecure) {
		return nil, fmt.Errorf("chart %s version %s in %s points to %s; only https (or http with insecure: true) is allowed",
			ref.Name, ref.Version, indexURL, u.Redacted())
	}

	limit := p.maxArchive()
	archive, err := get(ctx, client, archiveURL, credsFor(archiveURL, ref.Repository, creds), limit)
	if err != nil {
		return nil, fmt.Errorf("fetching chart %s %s from %s: %w", ref.Name, ref.Version, ref.Repository, err)
	}
	if version.Digest != "" {
		sum := sha256.Sum256(archive)
		if got := hex.EncodeToString(sum[:]); !strings.EqualFold(got, version.Digest) {
			return nil, fmt.Errorf("chart %s %s from %s: archive sha256 %s does not match the index digest %s",
				ref.Name, ref.Version, ref.Repository, got, version.Digest)
		}
	}
	return archive, nil
}

// findVersion returns the entry whose version equals want, preferring the
// exact spelling over one that differs only by a leading v.
func findVersion(versions repo.ChartVersions, want string) *repo.ChartVersion {
	var loose *repo.ChartVersion
	for _, v := range versions {
		if v == nil || v.Metadata == nil {
			continue
		}
		if v.Version == want {
			return v
		}
		if loose == nil && sameVersion(v.Version, want) {
			loose = v
		}
	}
	return loose
}

// credsFor returns creds only for URLs on the repository's own scheme and
// host, as Helm does, so an index cannot send them elsewhere.
func credsFor(target, repository string, creds *Credentials) *Credentials {
	t, err1 := url.Parse(target)
	r, err2 := url.Parse(repository)
	if creds == nil || err1 != nil || err2 != nil || t.Scheme != r.Scheme || t.Host != r.Host {
		return nil
	}
	return creds
}

// get reads one response body of at most limit bytes.
func get(ctx context.Context, client *http.Client, target string, creds *Credentials, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	if creds != nil {
		req.SetBasicAuth(creds.Username, creds.Password)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("GET %s: %s (check the chart's secretRef credentials)", req.URL.Redacted(), resp.Status)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET %s: %s", req.URL.Redacted(), resp.Status)
	case resp.ContentLength > limit:
		return nil, fmt.Errorf("GET %s: %d bytes, over the %d byte limit", req.URL.Redacted(), resp.ContentLength, limit)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", req.URL.Redacted(), err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("GET %s: more than the %d byte limit", req.URL.Redacted(), limit)
	}
	return data, nil
}
