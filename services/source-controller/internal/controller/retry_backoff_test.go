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
// connection is refused, as for a server that is down) and, after delay,
// serves target there through a reverse proxy.
func serveLate(t *testing.T, target string, delay time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: httputil.NewSingleHostReverseProxy(u), ReadHeaderTimeout: 10 * time.Second}
	timer := time.AfterFunc(delay, func() {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("listening on %s after %s: %v", addr, delay, err)
			return
		}
		if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serving on %s: %v", addr, err)
		}
	})
	t.Cleanup(func() {
		timer.Stop()
		_ = srv.Close()
	})
	return addr
}

// TestRetry_SourceServerUpLate_IsRetriedWithinAMinute creates a Repository
// (or a Helm Application) whose server comes up 20s later, with an hour's
// pollInterval: the failure says when it is retried, and the retry, not
// the next poll, brings it to Ready.
func TestRetry_SourceServerUpLate_IsRetriedWithinAMinute(t *testing.T) {
	const late = 20 * time.Second
	cases := []struct {
		name string
		// start creates the objects with a server that comes up late and
		// returns a function reading the condition that must turn True.
		start func(t *testing.T, ns string) func() *metav1.Condition
	}{
		{"Git server", func(t *testing.T, ns string) func() *metav1.Condition {
			gitRepo, err := git.CreateRepo(ns + "/platform")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := gitRepo.Commit(map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: late}\n"}, "initial"); err != nil {
				t.Fatal(err)
			}
			addr := serveLate(t, git.BaseURL(), late)
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
			}
		}},
		{"chart registry", func(t *testing.T, ns string) func() *metav1.Condition {
			host := newOCIRegistry(t)
			pushChart(t, host, "demo", "1.0.0", packageDemoChart(t, "1.0.0"))
			addr := serveLate(t, "http://"+host.Host(), late)
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
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			start := time.Now()
			condition := tc.start(t, ns)
			var retrying string
			deadline := start.Add(time.Minute)
			for {
				c := condition()
				if c != nil && c.Status == metav1.ConditionTrue {
					break
				}
				if c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "retrying in ") {
					retrying = c.Message
				}
				if time.Now().After(deadline) {
					t.Fatalf("not True a minute after creation, %s after the server came up: %+v", time.Minute-late, c)
				}
				time.Sleep(200 * time.Millisecond)
			}
			if retrying == "" {
				t.Fatal("while the server was down, no condition message said when it is retried")
			}
			t.Logf("True after %s; while down: %q", time.Since(start).Round(time.Second), retrying)
		})
	}
}
