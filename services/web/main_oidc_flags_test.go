package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kuvryn/kuvryn-sync/services/web/internal/console"
)

// TestOIDCFlags_BecomeTheConsoleOIDCOptions: no issuer is no OIDC; the
// client secret comes from the file (trimmed) over the environment
// variable, and the scopes are split at commas.
func TestOIDCFlags_BecomeTheConsoleOIDCOptions(t *testing.T) {
	file := filepath.Join(t.TempDir(), "client-secret")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	issuer := console.OIDCOptions{IssuerURL: "https://dex.example.com", ClientID: "kuvryn-console"}
	tests := []struct {
		name       string
		o          consoleOptions
		env        string
		wantNil    bool
		wantSecret string
		wantScopes []string
		wantErr    string
	}{
		{name: "no issuer", o: consoleOptions{oidcSecretFile: file, oidcScopes: "openid"}, wantNil: true},
		{name: "secret from the environment", o: consoleOptions{oidc: issuer, oidcScopes: "openid, email,,groups"}, env: "from-env",
			wantSecret: "from-env", wantScopes: []string{"openid", "email", "groups"}},
		{name: "the file wins", o: consoleOptions{oidc: issuer, oidcSecretFile: file, oidcScopes: "openid"}, env: "from-env",
			wantSecret: "from-file", wantScopes: []string{"openid"}},
		{name: "public client", o: consoleOptions{oidc: issuer, oidcScopes: "openid"}, wantScopes: []string{"openid"}},
		{name: "missing file", o: consoleOptions{oidc: issuer, oidcSecretFile: file + ".absent"}, wantErr: "--console-oidc-client-secret-file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(oidcSecretEnv, tt.env)
			got, err := tt.o.oidcOptions()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != tt.wantNil {
				t.Fatalf("options %+v, want nil: %t", got, tt.wantNil)
			}
			if got == nil {
				return
			}
			if got.ClientSecret != tt.wantSecret || !slices.Equal(got.Scopes, tt.wantScopes) || got.IssuerURL != issuer.IssuerURL {
				t.Errorf("secret %q scopes %q issuer %q, want %q %q %q", got.ClientSecret, got.Scopes, got.IssuerURL,
					tt.wantSecret, tt.wantScopes, issuer.IssuerURL)
			}
		})
	}
}
