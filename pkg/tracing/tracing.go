// Package tracing exports OpenTelemetry spans over OTLP gRPC when the
// standard OTEL_ environment variables ask for it, as the operations guide
// describes; without them every tracer is a no-op.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

// ApplicationReconcile is the name of the span of one Application reconcile.
const ApplicationReconcile = "Application/Reconcile"

// StartReconcile starts the span of one Application reconcile with the
// global TracerProvider; the function it returns ends the span with the
// reconcile's error. The span carries nothing naming the Application.
func StartReconcile(ctx context.Context, instrumentation string) (context.Context, func(error)) {
	ctx, span := otel.Tracer(instrumentation).Start(ctx, ApplicationReconcile)
	return ctx, func(err error) { End(span, err) }
}

// End ends span, recording err, if any, bounded like a status message.
func End(span trace.Span, err error) {
	if err != nil {
		message := ssa.Truncate(err.Error())
		span.RecordError(errors.New(message))
		span.SetStatus(codes.Error, message)
	}
	span.End()
}

// DefaultServiceName is service.name unless OTEL_SERVICE_NAME or
// OTEL_RESOURCE_ATTRIBUTES set another.
const DefaultServiceName = "kuvryn-sync"

// Enabled reports whether the environment asks for traces: an OTLP
// endpoint is set and OTEL_SDK_DISABLED is not true.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup installs the global TracerProvider the environment asks for and
// returns the function that flushes and stops it. Only OTLP gRPC is
// exported; the exporter reads its own variables (endpoint, headers,
// insecure, timeout, ...). Export failures are logged to log, never
// returned: tracing must not stop delivery.
func Setup(ctx context.Context, log logr.Logger) (shutdown func(context.Context) error, err error) {
	noop := func(context.Context) error { return nil }
	if !Enabled(os.Getenv) {
		return noop, nil
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		if p := os.Getenv(v); p != "" && p != "grpc" {
			return noop, fmt.Errorf("%s=%s is not supported: Kuvryn Sync exports traces over OTLP gRPC only; unset it or set it to grpc", v, p)
		}
	}
	exporter, err := otlptracegrpc.New(ctx)
	if err != nil {
		return noop, fmt.Errorf("creating the OTLP gRPC trace exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", DefaultServiceName)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil {
		return noop, fmt.Errorf("reading OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	otel.SetTracerProvider(provider)
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Error(err, "exporting traces")
	}))
	log.Info("exporting traces over OTLP gRPC")
	return provider.Shutdown, nil
}
