package packaging_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestChart_ConsoleOIDCValuesBecomeTheWebFlags: console.oidc.* renders the
// web service's --console-oidc-* flags, the client secret as an
// environment variable from its Secret and the CA from its ConfigMap; the
// API server accepts the result. Without an issuer nothing of it renders,
// and an issuer without a client ID or redirect URL, or an http:// one,
// is refused by name.
func TestChart_ConsoleOIDCValuesBecomeTheWebFlags(t *testing.T) {
	installPrerequisites(t)
	const oidc = `console:
  enabled: true
  oidc:
    issuerURL: https://dex.example.com
    clientID: kuvryn-console
    redirectURL: https://console.example.com/sign-in/oidc/callback
    scopes: [openid, email, groups]
    name: Dex
`
	flags := []string{"--console-oidc-issuer-url=https://dex.example.com", "--console-oidc-client-id=kuvryn-console",
		"--console-oidc-redirect-url=https://console.example.com/sign-in/oidc/callback",
		"--console-oidc-scopes=openid,email,groups", "--console-oidc-name=Dex"}
	withCA := append(slices.Clone(flags), "--console-oidc-ca-file=/etc/kuvryn-sync/oidc-ca/ca.pem")
	tests := []struct {
		name   string
		values string
		flags  []string
		// secret is the Secret the client secret comes from; empty, none.
		secret string
		// ca is the ConfigMap mounted for the CA; empty, none.
		ca string
	}{
		{"no issuer: token sign-in only", "console: {enabled: true}\n", nil, "", ""},
		{"public client", oidc, flags, "", ""},
		{"client secret and CA", oidc + "    clientSecret: {secretName: dex-client}\n    caConfigMap: {name: dex-ca, key: ca.pem}\n",
			withCA, "dex-client", "dex-ca"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := mustRenderChart(t, tt.values)
			dryRunApply(t, "charts/kuvryn-sync", objs)
			web := deployment(t, objs, "web")
			var got []string
			for _, a := range stringsAt(t, manager(t, web), "args") {
				if strings.HasPrefix(a, "--console-oidc-") {
					got = append(got, a)
				}
			}
			if !slices.Equal(got, tt.flags) {
				t.Errorf("OIDC flags %q, want %q", got, tt.flags)
			}
			env, _, _ := unstructured.NestedSlice(manager(t, web), "env")
			var secret any
			for _, e := range env {
				if e := e.(map[string]any); e["name"] == "KUVRYN_CONSOLE_OIDC_CLIENT_SECRET" {
					secret, _, _ = unstructured.NestedFieldNoCopy(e, "valueFrom", "secretKeyRef")
				}
			}
			var wantSecret any
			if tt.secret != "" {
				wantSecret = map[string]any{"name": tt.secret, "key": "client-secret"}
			}
			if !reflect.DeepEqual(secret, wantSecret) {
				t.Errorf("client secret from %v, want %v", secret, wantSecret)
			}
			name, _, _ := unstructured.NestedString(volume(web, "oidc-ca"), "configMap", "name")
			if name != tt.ca {
				t.Errorf("CA volume from ConfigMap %q, want %q", name, tt.ca)
			}
			mounts, _, _ := unstructured.NestedSlice(manager(t, web), "volumeMounts")
			mounted := slices.ContainsFunc(mounts, func(m any) bool {
				return m.(map[string]any)["name"] == "oidc-ca" && m.(map[string]any)["mountPath"] == "/etc/kuvryn-sync/oidc-ca"
			})
			if mounted != (tt.ca != "") {
				t.Errorf("CA mounted at /etc/kuvryn-sync/oidc-ca: %t, want %t", mounted, tt.ca != "")
			}
			for _, s := range services {
				if s.name == "web" {
					continue
				}
				for _, a := range stringsAt(t, manager(t, deployment(t, objs, s.name)), "args") {
					if strings.HasPrefix(a, "--console-oidc-") {
						t.Errorf("%s has %s", s.name, a)
					}
				}
			}
		})
	}

	for _, bad := range []struct{ values, says string }{
		{"console:\n  enabled: true\n  oidc: {issuerURL: https://dex.example.com}\n", "console.oidc.issuerURL needs console.oidc.clientID"},
		{"console:\n  enabled: true\n  oidc: {issuerURL: http://dex.example.com, clientID: c, redirectURL: https://c.example.com/sign-in/oidc/callback}\n", "issuerURL"},
		{"console:\n  enabled: true\n  oidc: {issuerURL: https://dex.example.com, clientID: c, redirectURL: https://c.example.com/callback}\n", "redirectURL"},
	} {
		if _, err := renderChart(t, bad.values); err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("values\n%s rendered (error %v), want an error naming %s", bad.values, err, bad.says)
		}
	}
}
