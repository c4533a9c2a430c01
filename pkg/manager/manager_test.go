package manager

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRestConfig_KubeconfigFlagTurnsClientRateLimitingOff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:6443\"}}]\n" +
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := restConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.QPS != -1 || cfg.Host != "https://127.0.0.1:6443" {
		t.Errorf("QPS %v host %s, want QPS -1 (no client-side limit, as controller-runtime): client-go's default of 5/s throttles a rollout",
			cfg.QPS, cfg.Host)
	}
}
