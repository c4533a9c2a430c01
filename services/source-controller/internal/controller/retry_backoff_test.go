package controller_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// serveLate returns the address of a loopback port nothing listens on (a
// connection is refused, as for a server that is down) and a function that
// starts serving target there through a reverse proxy.
func serveLate(t *testing.T, target string) (addr string, up func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: httputil.NewSingleHostReverseProxy(u), ReadHeaderTimeout: 10 * time.Second}
	t.Cleanup(func() { _ = srv.Close() })
	return addr, func() {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("listening on %s: %v", addr, err)
		}
		go func() {
			if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
				t.Errorf("serving on %s: %v", addr, err)
			}
		}()
	}
}

// TestRetry_SourceServerUpLate_IsRetriedWithinAMinute creates a Repository
// (or a Helm Application) whose server is down, with an hour's
// pollInterval: the failure says when it is retried, and once the server
// is up the retry, not the next poll, brings it to Ready.
func TestRetry_SourceServerUpLate_IsRetriedWithinAMinute(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// start creates the objects with a server that is down and returns
		// a function reading the condition that must turn True and one
		// that brings the server up.
		start func(t *testing.T, ns string) (condition func() *metav1.Condition, up func())
	}{
		{"Git server", func(t *testing.T, ns string) (func() *metav1.Condition, func()) {
			gitRepo, err := git.CreateRepo(ns + "/platform")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := gitRepo.Commit(map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: late}\n"}, "initial"); err != nil {
				t.Fatal(err)
			}
			addr, up := serveLate(t, git.BaseURL())
			repo := &syncv1.Repository{
				ObjectMeta: metav1.ObjectMeta{Name: "platform", Namespace: ns},
				Spec: syncv1.RepositorySpec{
					Git:          syncv1.GitSource{URL: strings.Replace(gitRepo.URL(), strings.TrimPrefix(git.BaseURL(), "http://"), addr, 1), Revision: "main"},
					PollInterval: &metav1.Duration{Duration: 60 * time.Minute},
				},
			}
			if err := k8s.Create(t.Context(), repo); err != nil {
				t.Fatal(err)
			}
			return func() *metav1.Condition {
				return meta.FindStatusCondition(get(t, &syncv1.Repository{}, ns, "platform").Status.Conditions, syncv1.ConditionReady)
			}, up
		}},
		{"chart registry", func(t *testing.T, ns string) (func() *metav1.Condition, func()) {
			host := newOCIRegistry(t)
			pushChart(t, host, "demo", "1.0.0", packageDemoChart(t, "1.0.0"))
			addr, up := serveLate(t, "http://"+host.Host())
			newRepository(t, ns, "platform", map[string]string{"envs/prod/values.yaml": "color: blue\n"})
			app := &syncv1.Application{
				ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: ns},
				Spec: syncv1.ApplicationSpec{Source: syncv1.ApplicationSource{
					RepositoryRef: syncv1.LocalObjectReference{Name: "platform"},
					Path:          "envs/prod",
					Render: syncv1.Render{Type: syncv1.RenderHelm, Helm: &syncv1.HelmRender{
						Chart: &syncv1.HelmChart{Repository: "oci://" + addr + "/charts", Name: "demo", Version: "1.0.0", Insecure: true},
					}},
				}},
			}
			if err := k8s.Create(t.Context(), app); err != nil {
				t.Fatal(err)
			}
			return func() *metav1.Condition {
				return meta.FindStatusCondition(get(t, &syncv1.Application{}, ns, "demo").Status.Conditions, syncv1.ConditionRendered)
			}, up
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			start := time.Now()
			condition, up := tc.start(t, ns)
			// The server comes up once the failure says when it is retried.
			var retrying string
			for {
				c := condition()
				if c != nil && c.Status == metav1.ConditionTrue {
					t.Fatalf("True while the server was down: %+v", c)
				}
				if c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "retrying in ") {
					retrying = c.Message
					break
				}
				if time.Since(start) > 3*time.Minute {
					t.Fatalf("while the server was down, no condition message said when it is retried: %+v", c)
				}
				time.Sleep(200 * time.Millisecond)
			}
			up()
			upAt := time.Now()
			for {
				c := condition()
				if c != nil && c.Status == metav1.ConditionTrue {
					break
				}
				if time.Since(upAt) > time.Minute {
					t.Fatalf("not True a minute after the server came up: %+v", c)
				}
				time.Sleep(200 * time.Millisecond)
			}
			t.Logf("True %s after the server came up; while down: %q", time.Since(upAt).Round(time.Second), retrying)
		})
	}
}
