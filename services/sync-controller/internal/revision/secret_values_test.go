package revision

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/logbuffer"
)

// startLoggedController is startController with the manager, and so every
// reconcile's logger, writing to a buffer the test reads. Debug level is on
// so that whatever the controller logs at any verbosity is scanned.
func (e *testEnv) startLoggedController(o Options) *logbuffer.Buffer {
	e.t.Helper()
	logs := &logbuffer.Buffer{}
	mgr, err := ctrl.NewManager(cp.Config, ctrl.Options{
		Scheme:                 manager.Scheme(),
		Logger:                 zap.New(zap.UseDevMode(true), zap.WriteTo(logs)),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{e.ns: {}}},
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	must(e.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r := New(mgr, o)
	must(e.t, r.SetupWithManager(ctx, mgr))
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			e.t.Errorf("manager stopped with: %v", err)
		}
	})
	return logs
}

// secretManifest is a Secret named name in the test's namespace; mutate
// fills in the rest.
func secretManifest(name string, mutate func(obj map[string]any)) *unstructured.Unstructured {
	obj := map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata":   map[string]any{"name": name},
	}
	mutate(obj)
	return &unstructured.Unstructured{Object: obj}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// leakForms are the forms in which value would show if it leaked: verbatim,
// and base64 as Secret data holds it. Only the first 24 bytes are encoded,
// so that the form is the same whatever follows the value in its key.
func leakForms(value string) []string {
	return []string{value, b64(value[:24])}
}

// TestSecretValue_FoundNowhereWhenTheAPIServerRefusesTheSecret: a plain
// Secret committed to Git whose dry-run the API server refuses fails the
// Revision with a message naming the Secret and the field, and its value,
// verbatim or base64, is in no status, Event, managedFields or log line,
// although the API server's own message may quote it. A Secret the API
// server accepts leaves its value out of the plan and diff as well.
func TestSecretValue_FoundNowhereWhenTheAPIServerRefusesTheSecret(t *testing.T) {
	t.Parallel()
	filler := strings.Repeat("f", 1<<20+1024)
	cases := []struct {
		name string
		// before is applied and Healthy first, when the refusal needs a
		// live object; it may carry a value of its own.
		before func(value string) *unstructured.Unstructured
		secret func(value string) *unstructured.Unstructured
		// refused is false for a Secret the API server accepts.
		refused bool
		// field is what the failure message must name besides the Secret.
		field string
	}{
		{
			name: "data value that is not base64",
			secret: func(v string) *unstructured.Unstructured {
				return secretManifest("db", func(o map[string]any) { o["data"] = map[string]any{"password": v + "*!"} })
			},
			refused: true, field: "data[password]: not base64",
		},
		{
			// Server-Side Apply's schema check quotes the offending value,
			// as an HTTP 500 that fails the Revision, since it comes again
			// on every retry.
			name: "stringData value that is not a string",
			secret: func(v string) *unstructured.Unstructured {
				return secretManifest("db", func(o map[string]any) {
					o["stringData"] = map[string]any{"password": map[string]any{"value": v}}
				})
			},
			refused: true, field: "refused by the API server (HTTP 500)",
		},
		{
			name: "immutable Secret given a new value",
			before: func(v string) *unstructured.Unstructured {
				return secretManifest("db", func(o map[string]any) {
					o["immutable"] = true
					o["data"] = map[string]any{"password": b64(v)}
				})
			},
			secret: func(v string) *unstructured.Unstructured {
				return secretManifest("db", func(o map[string]any) {
					o["immutable"] = true
					o["data"] = map[string]any{"password": b64(v)}
				})
			},
			refused: true, field: "data",
		},
		{
			name: "value over the 1 MiB limit",
			secret: func(v string) *unstructured.Unstructured {
				return secretManifest("db", func(o map[string]any) { o["data"] = map[string]any{"blob": b64(v + filler)} })
			},
			refused: true, field: "data",
		},
		{
			name: "invalid key name next to the key holding the value",
			secret: func(v string) *unstructured.Unstructured {
				return secretManifest("db", func(o map[string]any) {
					o["data"] = map[string]any{"bad key!": b64("x"), "password": b64(v)}
				})
			},
			refused: true, field: "data[bad key!]",
		},
		{
			name: "TLS Secret without tls.key",
			secret: func(v string) *unstructured.Unstructured {
				return secretManifest("tls", func(o map[string]any) {
					o["type"] = "kubernetes.io/tls"
					o["data"] = map[string]any{"tls.crt": b64(v)}
				})
			},
			refused: true, field: "tls.key",
		},
		{
			name: "annotations repeating the value on a refused Secret",
			secret: func(v string) *unstructured.Unstructured {
				return secretManifest("db", func(o map[string]any) {
					lastApplied, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Secret", "stringData": map[string]any{"password": v}})
					o["metadata"].(map[string]any)["annotations"] = map[string]any{
						"kubectl.kubernetes.io/last-applied-configuration": string(lastApplied),
						"example.com/note": v,
					}
					o["stringData"] = map[string]any{"password": v, "bad key!": "x"}
				})
			},
			refused: true, field: "bad key!",
		},
		{
			name: "valid Secret with data and stringData",
			secret: func(v string) *unstructured.Unstructured {
				return secretManifest("db", func(o map[string]any) {
					o["data"] = map[string]any{"password": b64(v)}
					o["stringData"] = map[string]any{"token": v}
				})
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			logs := e.startLoggedController(defaultOptions())
			e.createApplication("shop", nil)
			// Each case has fresh values, so a match can only come from
			// this case's manifests.
			value := rand.Text()
			needles := leakForms(value)
			var revisions []string
			if tc.before != nil {
				old := rand.Text()
				needles = append(needles, leakForms(old)...)
				first := e.publish("shop", tc.before(old))
				e.waitForPhase(first, syncv1.PhaseHealthy)
				revisions = append(revisions, first)
			}
			name := e.publish("shop", tc.secret(value), configMap(t, "settings"))
			revisions = append(revisions, name)

			if tc.refused {
				rev := e.waitForPhase(name, syncv1.PhaseFailed)
				c := condition(rev.Status.Conditions, syncv1.ConditionPlanned)
				id := "Secret " + e.ns + "/" + tc.secret(value).GetName()
				if c.Status != "False" || !contains(c.Message, id, tc.field) {
					t.Errorf("Planned = %+v, want False with a message naming %s and %q", c, id, tc.field)
				}
				t.Logf("refused: reason %s, message %q", c.Reason, c.Message)
			} else {
				rev := e.waitForPhase(name, syncv1.PhaseHealthy)
				// The Secret's diff must still be there, with markers
				// where the values are, or an empty plan would pass.
				diff := ""
				if rev.Status.Plan != nil {
					for _, entry := range rev.Status.Plan.Entries {
						if entry.Kind == "Secret" && entry.Name == "db" {
							diff = entry.Diff
						}
					}
				}
				if !strings.Contains(diff, syncv1.RedactedMarker) {
					t.Errorf("the Secret's diff is %q, want its values shown as %s", diff, syncv1.RedactedMarker)
				}
				live := e.get("v1", "Secret", "db")
				if live == nil {
					t.Fatal("the accepted Secret was not applied")
				}
				data, _, _ := unstructured.NestedStringMap(live.Object, "data")
				if data["password"] != b64(value) || data["token"] != b64(value) {
					t.Errorf("live data %v, want password and token holding the committed value", data)
				}
			}

			places := map[string]string{}
			for _, n := range revisions {
				places["Revision "+n] = asJSON(t, e.revision(n))
			}
			places["Application"] = asJSON(t, e.application("shop"))
			var events eventsv1.EventList
			must(t, admin.List(t.Context(), &events, client.InNamespace(e.ns)))
			places["Events"] = asJSON(t, events.Items)
			var coreEvents corev1.EventList
			must(t, admin.List(t.Context(), &coreEvents, client.InNamespace(e.ns)))
			places["core Events"] = asJSON(t, coreEvents.Items)
			for _, list := range []client.ObjectList{&corev1.SecretList{}, &corev1.ConfigMapList{}} {
				must(t, admin.List(t.Context(), list, client.InNamespace(e.ns)))
				switch l := list.(type) {
				case *corev1.SecretList:
					for _, s := range l.Items {
						places["managedFields of Secret "+s.Name] = asJSON(t, s.ManagedFields)
						places["annotations of Secret "+s.Name] = asJSON(t, s.Annotations)
					}
				case *corev1.ConfigMapList:
					for _, cm := range l.Items {
						places["managedFields of ConfigMap "+cm.Name] = asJSON(t, cm.ManagedFields)
					}
				}
			}
			places["controller log"] = logs.String()
			if !strings.Contains(places["controller log"], "Starting") {
				t.Errorf("the controller log holds no reconcile line, so it was not captured:\n%s", places["controller log"])
			}
			for where, text := range places {
				for _, needle := range needles {
					if strings.Contains(text, needle) {
						t.Errorf("%s holds a Secret value (%q)", where, needle)
					}
				}
			}
			t.Logf("scanned %d places, %d KiB of controller log", len(places), len(places["controller log"])/1024)
		})
	}
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	out, err := json.Marshal(v)
	must(t, err)
	return string(out)
}
