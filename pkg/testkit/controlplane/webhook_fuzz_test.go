package controlplane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// FuzzToLoopback: whatever manifests it is given, the rewrite of webhook
// configurations to the loopback receiver never panics, refuses what is not
// a webhook configuration or lacks a service path, and leaves every webhook
// it accepts calling https://127.0.0.1:<port> with the given CA, nothing else.
func FuzzToLoopback(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "deploy", "webhook", "*.yaml"))
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("kind: ValidatingWebhookConfiguration\napiVersion: admissionregistration.k8s.io/v1\nwebhooks:\n- name: a\n  clientConfig: {service: {name: s, namespace: n}}\n"))
	f.Add([]byte("kind: MutatingWebhookConfiguration\napiVersion: admissionregistration.k8s.io/v1\nwebhooks:\n- name: a\n  clientConfig: {service: {name: s, namespace: n, path: /mutate}}\n"))
	f.Add([]byte("kind: ConfigMap\napiVersion: v1\n"))
	f.Add([]byte("kind: MutatingWebhookConfiguration\nwebhooks: 3\n"))
	const port = 9443
	ca := []byte("ca")
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := DecodeManifests(data)
		if err != nil {
			return
		}
		for _, u := range objs {
			out, err := toLoopback(u, port, ca)
			if err != nil {
				continue
			}
			var configs []admissionregistrationv1.WebhookClientConfig
			switch out.GetKind() {
			case "MutatingWebhookConfiguration":
				m := &admissionregistrationv1.MutatingWebhookConfiguration{}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(out.Object, m); err != nil {
					t.Fatalf("rewritten configuration does not decode: %v", err)
				}
				for _, w := range m.Webhooks {
					configs = append(configs, w.ClientConfig)
				}
			case "ValidatingWebhookConfiguration":
				v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(out.Object, v); err != nil {
					t.Fatalf("rewritten configuration does not decode: %v", err)
				}
				for _, w := range v.Webhooks {
					configs = append(configs, w.ClientConfig)
				}
			default:
				t.Fatalf("kind %q accepted as a webhook configuration", out.GetKind())
			}
			for _, cc := range configs {
				if cc.Service != nil || cc.URL == nil || !strings.HasPrefix(*cc.URL, "https://127.0.0.1:9443") || string(cc.CABundle) != "ca" {
					t.Fatalf("rewritten clientConfig %+v, want only a URL at https://127.0.0.1:9443 and the given CA", cc)
				}
			}
		}
	})
}
