package manager

import (
	"flag"
	"testing"
)

func TestBindFlags_GuideDefaults(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	var o Options
	o.BindFlags(fs)
	want := map[string]string{
		"metrics-bind-address":        "0",
		"metrics-secure":              "true",
		"health-probe-bind-address":   ":8081",
		"pprof-bind-address":          "0",
		"record-api-requests":         "",
		"leader-elect":                "false",
		"leader-election-id":          "",
		"leader-election-namespace":   "",
		"leader-elect-lease-duration": "15s",
		"leader-elect-renew-deadline": "10s",
		"leader-elect-retry-period":   "2s",
		"enable-http2":                "false",
		"webhook-cert-path":           "",
		"webhook-cert-name":           "tls.crt",
		"webhook-cert-key":            "tls.key",
		"metrics-cert-path":           "",
		"metrics-cert-name":           "tls.crt",
		"metrics-cert-key":            "tls.key",
	}
	for name, def := range want {
		f := fs.Lookup(name)
		if f == nil {
			t.Errorf("flag --%s missing", name)
			continue
		}
		if f.DefValue != def {
			t.Errorf("--%s default %q, want %q", name, f.DefValue, def)
		}
	}
	for _, zapFlag := range []string{"zap-log-level", "zap-devel"} {
		if fs.Lookup(zapFlag) == nil {
			t.Errorf("flag --%s missing", zapFlag)
		}
	}
}

func TestTLSOptions_HTTP2OffUnlessEnabled(t *testing.T) {
	cases := []struct {
		name  string
		http2 bool
		want  int
	}{
		{"HTTP/2 disabled by default", false, 1},
		{"HTTP/2 enabled", true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{EnableHTTP2: tc.http2}
			if got := len(o.tlsOptions()); got != tc.want {
				t.Fatalf("%d TLS options, want %d", got, tc.want)
			}
		})
	}
}

func TestWebhooksEnabled(t *testing.T) {
	cases := []struct {
		env  string
		want bool
	}{{"", true}, {"true", true}, {"false", false}, {"FALSE", false}}
	for _, tc := range cases {
		t.Run("ENABLE_WEBHOOKS="+tc.env, func(t *testing.T) {
			t.Setenv("ENABLE_WEBHOOKS", tc.env)
			if got := WebhooksEnabled(); got != tc.want {
				t.Fatalf("WebhooksEnabled() = %v, want %v", got, tc.want)
			}
		})
	}
}
