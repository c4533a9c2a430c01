package diagnosis

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuvryn/kuvryn-sync/pkg/graph"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/impersonate"
)

// The guide: Secrets, ConfigMaps and ServiceAccounts are read as metadata
// only; their data never leaves the API server. The live graph (which the
// diagnosis, ksync graph and the console share) reads them, managed or
// referenced, while every response the API server sends is searched for
// their contents.
func TestCollect_ReadsSecretsConfigMapsAndServiceAccountsAsMetadataOnly(t *testing.T) {
	const sentinel = "do-not-leave-the-api-server"
	ns := namespaceFor(t, nil)
	for _, obj := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tls"}, Data: map[string][]byte{"tls.key": []byte(sentinel + "-tls")}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "flags"}, Data: map[string]string{"flags": sentinel + "-flags"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "runner"},
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: sentinel + "-pull"}}},
	} {
		must(t, admin.Create(t.Context(), obj))
	}
	rev := create(t, ns, `apiVersion: v1
kind: Secret
metadata: {name: db}
data: {password: `+base64.StdEncoding.EncodeToString([]byte(sentinel+"-db"))+`}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {color: `+sentinel+`-settings}
---
`+deployment("web", "", "", appSpec+`      serviceAccountName: runner
      volumes:
      - name: tls
        secret: {secretName: tls}
      - name: flags
        configMap: {name: flags}
`))

	var mu sync.Mutex
	var bodies [][]byte
	cfg := unthrottled(cp.Impersonate(impersonate.UserName(client.ObjectKey{Namespace: ns, Name: account})))
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err != nil {
				return resp, err
			}
			body, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
			mu.Lock()
			bodies = append(bodies, body)
			mu.Unlock()
			return resp, err
		})
	})
	c, err := client.New(cfg, client.Options{Scheme: manager.Scheme(), Mapper: mapper(t, cp.Config)})
	must(t, err)

	snap, err := graph.Collect(t.Context(), c, ns, graph.RootsOf(rev))
	must(t, err)
	for _, tc := range []struct{ kind, name string }{
		{"Secret", "db"}, {"ConfigMap", "settings"}, {"Secret", "tls"}, {"ConfigMap", "flags"}, {"ServiceAccount", "runner"},
	} {
		l, ok := snap.Lookup(graph.ID("", tc.kind, ns, tc.name))
		if !ok || l.Found != graph.Present {
			t.Errorf("%s %s: %+v, want it read and present", tc.kind, tc.name, l)
			continue
		}
		for _, field := range []string{"data", "stringData", "binaryData", "imagePullSecrets", "secrets"} {
			if _, has := l.Object.Object[field]; has {
				t.Errorf("%s %s was read with its %s", tc.kind, tc.name, field)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) == 0 {
		t.Fatal("no response went through the recording transport")
	}
	// The sentinel is 27 bytes long, so its base64 begins that of the
	// Secret's value.
	for _, secret := range [][]byte{[]byte(sentinel), []byte(base64.StdEncoding.EncodeToString([]byte(sentinel)))} {
		for _, body := range bodies {
			if bytes.Contains(body, secret) {
				t.Fatalf("a response to the graph's reader holds %q:\n%s", secret, body)
			}
		}
	}
}
