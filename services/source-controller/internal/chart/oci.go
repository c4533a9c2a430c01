package chart

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/registry"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// ociMetadataAllowance is what a pull may download beyond the archive:
// manifest, chart config, token responses.
const ociMetadataAllowance int64 = 4 << 20

// fetchOCI pulls the chart archive from an OCI registry with Helm's
// registry client, trying the version as given and then with the leading v
// added or removed.
func (p *Puller) fetchOCI(ctx context.Context, ref Ref, creds *Credentials) ([]byte, error) {
	repository := strings.TrimPrefix(ref.Repository, "oci://") + "/" + ref.Name
	host, _, _ := strings.Cut(repository, "/")
	limit := p.maxArchive()
	dl := newBudget(limit + ociMetadataAllowance)

	httpClient := p.httpClient(ref.Insecure)
	httpClient.Transport = &boundTransport{ctx: ctx, base: httpClient.Transport, budget: dl}
	defer httpClient.CloseIdleConnections()

	// Our own authorizer means Helm never consults its credentials file or
	// Docker's; the file option only keeps Helm from locating its own.
	authorizer := auth.Client{Client: httpClient, Cache: auth.NewCache(), Header: http.Header{"User-Agent": {userAgent}}}
	if creds != nil {
		authorizer.Credential = auth.StaticCredential(host, auth.Credential{Username: creds.Username, Password: creds.Password})
	}
	opts := []registry.ClientOption{
		registry.ClientOptHTTPClient(httpClient),
		registry.ClientOptAuthorizer(authorizer),
		registry.ClientOptCredentialsFile(filepath.Join(p.Dir, ".no-registry-credentials.json")),
	}
	if ref.Insecure {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	client, err := registry.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("creating registry client for %s: %w", ref.Repository, err)
	}

	tags := versionCandidates(ref.Version)
	for _, tag := range tags {
		result, err := client.Pull(repository + ":" + tag)
		if errors.Is(err, errdef.ErrNotFound) {
			continue
		}
		if dl.exhausted() {
			return nil, fmt.Errorf("pulling chart %s %s from %s: download exceeds the %d byte archive limit",
				ref.Name, ref.Version, ref.Repository, limit)
		}
		if err != nil {
			return nil, fmt.Errorf("pulling chart %s %s from %s: %w", ref.Name, ref.Version, ref.Repository, err)
		}
		if int64(len(result.Chart.Data)) > limit {
			return nil, fmt.Errorf("pulling chart %s %s from %s: archive is %d bytes, over the %d byte limit",
				ref.Name, ref.Version, ref.Repository, len(result.Chart.Data), limit)
		}
		return result.Chart.Data, nil
	}
	return nil, fmt.Errorf("chart %s version %s not found in %s (tried tags %s)",
		ref.Name, ref.Version, ref.Repository, strings.Join(tags, " and "))
}

// versionCandidates lists the version as given, then with its leading v
// toggled, so v1.2.3 and 1.2.3 match either spelling.
func versionCandidates(version string) []string {
	if trimmed, ok := strings.CutPrefix(version, "v"); ok {
		return []string{version, trimmed}
	}
	return []string{version, "v" + version}
}
