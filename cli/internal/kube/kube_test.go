package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const kubeconfig = `apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod
  cluster: {server: "https://127.0.0.1:6443"}
- name: dev
  cluster: {server: "https://127.0.0.1:7443"}
users:
- name: admin
  user: {token: test-token}
contexts:
- name: prod
  context: {cluster: prod, user: admin, namespace: payments}
- name: dev
  context: {cluster: dev, user: admin}
`

func TestLoad_FollowsKubectlRules(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		env       string // KUBECONFIG
		opts      Options
		host      string
		namespace string
	}{
		{"current context and its namespace", "", Options{Kubeconfig: path}, "https://127.0.0.1:6443", "payments"},
		{"--context picks another, whose namespace defaults to default", "", Options{Kubeconfig: path, Context: "dev"}, "https://127.0.0.1:7443", "default"},
		{"-n overrides the context's namespace", "", Options{Kubeconfig: path, Namespace: "web"}, "https://127.0.0.1:6443", "web"},
		{"KUBECONFIG is read without --kubeconfig", path, Options{}, "https://127.0.0.1:6443", "payments"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.env)
			t.Setenv("HOME", t.TempDir())
			cfg, namespace, err := Load(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tc.host || namespace != tc.namespace {
				t.Errorf("host %q namespace %q, want %q %q", cfg.Host, namespace, tc.host, tc.namespace)
			}
		})
	}
}

func TestLoad_ErrorsNameTheProblem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"missing kubeconfig file", Options{Kubeconfig: filepath.Join(t.TempDir(), "nope")}, "nope"},
		{"unknown context", Options{Kubeconfig: path, Context: "staging"}, `context "staging" does not exist`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", "")
			_, _, err := Load(tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
