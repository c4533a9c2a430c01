package tracing

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// collector is an OTLP gRPC trace receiver on loopback.
type collector struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []*tracepb.ResourceSpans
}

func (c *collector) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spans = append(c.spans, req.GetResourceSpans()...)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func startCollector(t *testing.T) (*collector, string) {
	t.Helper()
	c := &collector{}
	return c, serve(t, c)
}

// received returns service.name and span names of what the collector got.
func (c *collector) received() (services, names []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range c.spans {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				services = append(services, a.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				names = append(names, s.GetName())
			}
		}
	}
	return services, names
}

func TestSetup_ExportsSpansOverOTLPGRPC(t *testing.T) {
	for _, tc := range []struct {
		name        string
		env         map[string]string
		wantService string
	}{
		{name: "default service name", wantService: DefaultServiceName},
		{name: "OTEL_SERVICE_NAME", env: map[string]string{"OTEL_SERVICE_NAME": "sync-eu"}, wantService: "sync-eu"},
		{name: "OTEL_RESOURCE_ATTRIBUTES", env: map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "service.name=sync-us,team=platform"}, wantService: "sync-us"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, addr := startCollector(t)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+addr)
			t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			shutdown, err := Setup(t.Context(), logr.Discard())
			if err != nil {
				t.Fatal(err)
			}
			_, span := otel.Tracer("test").Start(t.Context(), "Application/Reconcile")
			span.End()
			if err := shutdown(t.Context()); err != nil {
				t.Fatal(err)
			}
			services, names := c.received()
			if len(names) != 1 || names[0] != "Application/Reconcile" {
				t.Errorf("collector received spans %v, want one Application/Reconcile", names)
			}
			if len(services) != 1 || services[0] != tc.wantService {
				t.Errorf("service.name %v, want %s", services, tc.wantService)
			}
		})
	}
}

func TestEnabled_FollowsTheOTELVariables(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want bool
	}{
		{name: "nothing set", want: false},
		{name: "endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"}, want: true},
		{name: "traces endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4317"}, want: true},
		{name: "SDK disabled", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_SDK_DISABLED": "true"}, want: false},
		{name: "SDK disabled in capitals", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_SDK_DISABLED": "TRUE"}, want: false},
		{name: "SDK not disabled", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_SDK_DISABLED": "false"}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Enabled(func(k string) string { return tc.env[k] }); got != tc.want {
				t.Errorf("Enabled = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSetup_RefusesHTTPProtobuf(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	_, err := Setup(t.Context(), logr.Discard())
	if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf is not supported") {
		t.Fatalf("Setup error %v, want http/protobuf refused by name", err)
	}
}

func TestEnd_RecordsTheReconcileErrorBoundedLikeAStatusMessage(t *testing.T) {
	long := "reading desired-state Secret: " + strings.Repeat("x", 4*syncv1.MaxMessageBytes)
	for _, tc := range []struct {
		name    string
		err     error
		status  codes.Code
		message string
	}{
		{name: "success", status: codes.Unset},
		{name: "short error", err: errors.New("plan: the API server is unavailable"), status: codes.Error,
			message: "plan: the API server is unavailable"},
		{name: "long error", err: errors.New(long), status: codes.Error, message: long[:syncv1.MaxMessageBytes-3] + "..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recorder := tracetest.NewSpanRecorder()
			_, span := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder)).Tracer("test").Start(t.Context(), ApplicationReconcile)
			End(span, tc.err)
			got := recorder.Ended()
			if len(got) != 1 {
				t.Fatalf("%d spans ended, want 1", len(got))
			}
			if s := got[0].Status(); s.Code != tc.status || s.Description != tc.message {
				t.Errorf("status %v %q, want %v %q", s.Code, s.Description, tc.status, tc.message)
			}
			if want := map[bool]int{true: 1, false: 0}[tc.err != nil]; len(got[0].Events()) != want {
				t.Errorf("events %v, want %d", got[0].Events(), want)
			}
		})
	}
}
