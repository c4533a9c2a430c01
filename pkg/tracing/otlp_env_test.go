package tracing

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	"go.opentelemetry.io/otel"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// guardedCollector accepts only exports that carry its token header, as a
// collector behind an authenticating gateway does, and refuses the rest
// with a status the exporter does not retry.
type guardedCollector struct {
	collector
	token string
}

func (c *guardedCollector) Export(ctx context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	if got := md.Get("x-collector-token"); len(got) != 1 || got[0] != c.token {
		return nil, status.Error(codes.PermissionDenied, "no collector token")
	}
	return c.collector.Export(ctx, req)
}

// The guide: the OTLP gRPC exporter's own variables apply (a traces-only
// endpoint, headers, insecure), and export failures are logged by the
// manager.
func TestSetup_HonoursTheExportersVariablesAndLogsExportFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		// endpointVar names the endpoint variable set; the other is unset.
		endpointVar string
		headers     string
		exported    bool
	}{
		{name: "OTEL_EXPORTER_OTLP_HEADERS reach the collector", endpointVar: "OTEL_EXPORTER_OTLP_ENDPOINT",
			headers: "x-collector-token=s3cret", exported: true},
		{name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT alone turns export on", endpointVar: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
			headers: "x-collector-token=s3cret", exported: true},
		{name: "a refused export is logged", endpointVar: "OTEL_EXPORTER_OTLP_ENDPOINT", headers: "x-collector-token=wrong"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &guardedCollector{token: "s3cret"}
			addr := serve(t, c)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
			t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
			t.Setenv(tc.endpointVar, "http://"+addr)
			t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
			t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", tc.headers)
			var mu sync.Mutex
			var logged []string
			log := funcr.New(func(prefix, args string) {
				mu.Lock()
				defer mu.Unlock()
				logged = append(logged, args)
			}, funcr.Options{})

			shutdown, err := Setup(t.Context(), log)
			if err != nil {
				t.Fatal(err)
			}
			_, span := otel.Tracer("test").Start(t.Context(), ApplicationReconcile)
			span.End()
			// Shutdown flushes the batch; a failed export is handed to the
			// error handler, not returned.
			_ = shutdown(t.Context())

			_, names := c.received()
			if got := len(names) == 1; got != tc.exported {
				t.Errorf("collector received spans %v, want exported = %v", names, tc.exported)
			}
			mu.Lock()
			all := strings.Join(logged, "\n")
			mu.Unlock()
			failed := strings.Contains(all, `"msg"="exporting traces"`) && strings.Contains(all, "PermissionDenied")
			if failed == tc.exported {
				t.Errorf("export failure logged = %v, want %v; log:\n%s", failed, !tc.exported, all)
			}
		})
	}
}

// serve runs c as an OTLP gRPC trace receiver on loopback and returns its
// address.
func serve(t *testing.T, c collectortrace.TraceServiceServer) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, c)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}
