package requestlog_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kuvryn/kuvryn-sync/pkg/internal/apitest"
	"github.com/kuvryn/kuvryn-sync/pkg/requestlog"
)

// TestLog_RecordsEachRequestButWatches sends requests through clients whose
// transport a Log wraps, one of them impersonating a service account, and
// reads back one line per request but the watch, with the body of writes.
func TestLog_RecordsEachRequestButWatches(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := apitest.Start(t)

	path := filepath.Join(t.TempDir(), "requests.jsonl")
	log, err := requestlog.Create(path, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	admin := rest.CopyConfig(cfg)
	admin.Wrap(log.Wrap)
	c, err := kubernetes.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	const user = "system:serviceaccount:default:deployer"
	impersonating := rest.CopyConfig(cfg)
	impersonating.Impersonate = rest.ImpersonationConfig{UserName: user}
	impersonating.Wrap(log.Wrap)
	as, err := kubernetes.NewForConfig(impersonating)
	if err != nil {
		t.Fatal(err)
	}
	cms := c.CoreV1().ConfigMaps("default")
	const base = "/api/v1/namespaces/default/configmaps"

	// want is nil for a request that leaves no line.
	type line struct {
		method, path, query, user, contentType string
		status                                 int
		// body is in the recorded body, JSON or the clientset's Protobuf;
		// "" wants none.
		body string
	}
	steps := []struct {
		name string
		send func() error
		want *line
	}{
		{"a create records its body", func() error {
			_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "recorded"}, Data: map[string]string{"k": "v1"}}, metav1.CreateOptions{})
			return err
		}, &line{method: "POST", path: base, contentType: "application/", status: 201, body: "recorded"}},
		{"a read has no body", func() error {
			_, err := cms.Get(ctx, "recorded", metav1.GetOptions{})
			return err
		}, &line{method: "GET", path: base + "/recorded", status: 200}},
		{"a list keeps its query", func() error {
			_, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "app=x"})
			return err
		}, &line{method: "GET", path: base, query: "labelSelector=app%3Dx", status: 200}},
		{"a watch is not recorded", func() error {
			w, err := cms.Watch(ctx, metav1.ListOptions{})
			if err == nil {
				w.Stop()
			}
			return err
		}, nil},
		{"a patch records its content type and body", func() error {
			_, err := cms.Patch(ctx, "recorded", types.MergePatchType, []byte(`{"data":{"k":"v2"}}`), metav1.PatchOptions{FieldManager: "bench"})
			return err
		}, &line{method: "PATCH", path: base + "/recorded", query: "fieldManager=bench", contentType: "application/merge-patch+json", status: 200, body: `{"data":{"k":"v2"}}`}},
		{"an impersonated request names its user, refused or not", func() error {
			_, err := as.CoreV1().ConfigMaps("default").Get(ctx, "recorded", metav1.GetOptions{})
			if err == nil {
				return os.ErrPermission
			}
			return nil
		}, &line{method: "GET", path: base + "/recorded", user: user, status: 403}},
		{"a delete is a write", func() error {
			return cms.Delete(ctx, "recorded", metav1.DeleteOptions{})
		}, &line{method: "DELETE", path: base + "/recorded", contentType: "application/", status: 200, body: "DeleteOptions"}},
	}
	var want []*line
	for _, s := range steps {
		if err := s.send(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if s.want != nil {
			want = append(want, s.want)
		}
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}

	got, err := requestlog.ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	patches, err := requestlog.ReadFile(path, func(e requestlog.Entry) bool { return e.Method == "PATCH" })
	if err != nil || len(patches) != 1 || patches[0].Path != base+"/recorded" {
		t.Errorf("kept %d entries (%v), want the one PATCH", len(patches), err)
	}
	if len(got) != len(want) {
		for _, e := range got {
			t.Logf("recorded %s %s?%s", e.Method, e.Path, e.Query)
		}
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	var previous time.Time
	for i, w := range want {
		e := got[i]
		if e.Method != w.method || e.Path != w.path || e.Query != w.query || e.User != w.user || e.Status != w.status {
			t.Errorf("line %d: %s %s?%s as %q -> %d, want %s %s?%s as %q -> %d",
				i+1, e.Method, e.Path, e.Query, e.User, e.Status, w.method, w.path, w.query, w.user, w.status)
		}
		if (w.contentType == "") != (e.ContentType == "") || !strings.HasPrefix(e.ContentType, w.contentType) {
			t.Errorf("line %d: content type %q, want %q", i+1, e.ContentType, w.contentType)
		}
		if body := string(e.Payload()); (w.body == "") != (body == "") || !strings.Contains(body, w.body) {
			t.Errorf("line %d: body %q, want one holding %q", i+1, body, w.body)
		}
		if e.Accept == "" {
			t.Errorf("line %d: no Accept recorded", i+1)
		}
		if e.Time.Before(previous) || e.Time.IsZero() {
			t.Errorf("line %d: time %s, after %s", i+1, e.Time, previous)
		}
		previous = e.Time
	}
}
