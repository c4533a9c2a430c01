// Package serve runs the web binary's HTTP listeners (the webhook receiver,
// and any other the binary grows) on every replica, leader or not, and
// tells the readiness probe when each one serves.
package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Listener is one HTTP server, run as a controller-runtime Runnable.
type Listener struct {
	// Name is used in errors and the readiness check, such as webhook-receiver.
	Name string
	// Addr is the bind address, such as :9292.
	Addr    string
	Handler http.Handler
	// Before, if set, runs before the listener binds, such as waiting for
	// the caches the handler reads.
	Before func(context.Context) error

	addr atomic.Pointer[net.Addr]
}

// Start serves until ctx is done, then drains for up to five seconds.
func (l *Listener) Start(ctx context.Context) error {
	if l.Before != nil {
		if err := l.Before(ctx); err != nil {
			return fmt.Errorf("%s: %w", l.Name, err)
		}
	}
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return fmt.Errorf("%s: listening on %s: %w", l.Name, l.Addr, err)
	}
	srv := &http.Server{
		Handler:           l.Handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()
	a := ln.Addr()
	l.addr.Store(&a)
	defer l.addr.Store(nil)
	err = srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-stopped
		return nil
	}
	return fmt.Errorf("%s: serving on %s: %w", l.Name, l.Addr, err)
}

// NeedLeaderElection is false: every replica serves.
func (l *Listener) NeedLeaderElection() bool { return false }

// Ready is a readiness check: an error unless the listener is bound.
func (l *Listener) Ready(*http.Request) error {
	if l.addr.Load() == nil {
		return fmt.Errorf("%s is not listening on %s yet", l.Name, l.Addr)
	}
	return nil
}

// BoundAddr is the address listened on, such as 127.0.0.1:40123 for
// Addr 127.0.0.1:0, or "" before the listener is bound.
func (l *Listener) BoundAddr() string {
	if a := l.addr.Load(); a != nil {
		return (*a).String()
	}
	return ""
}
