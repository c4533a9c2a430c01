package revision

import (
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// recordSpans installs a global TracerProvider that keeps every span
// until the test ends.
func recordSpans(t *testing.T) *tracetest.SpanRecorder {
	t.Helper()
	recorder := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder)))
	t.Cleanup(func() { otel.SetTracerProvider(noop.NewTracerProvider()) })
	return recorder
}

// Not parallel: the TracerProvider is global, and parallel tests start
// only after this one ended, so every span recorded is this test's.
func TestTracing_EveryReconcileIsOneSpanNamingNoApplication(t *testing.T) {
	recorder := recordSpans(t)
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	e.waitForPhase(e.publish("shop", configMap(t, "settings")), syncv1.PhaseHealthy)

	// A span ends when its reconcile returns, after the status it wrote.
	var spans []sdktrace.ReadOnlySpan
	eventually(t, "a span for a reconcile of the rollout", func() bool {
		spans = recorder.Ended()
		return len(spans) > 0
	}, nil)
	for _, s := range spans {
		if s.Name() != "Application/Reconcile" {
			t.Errorf("span %q, want every span named Application/Reconcile", s.Name())
		}
		for _, a := range s.Attributes() {
			if v := a.Value.String(); strings.Contains(v, e.ns) || strings.Contains(v, "shop") {
				t.Errorf("span attribute %s=%q names the Application", a.Key, v)
			}
		}
	}
}
