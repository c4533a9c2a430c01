package manager

import (
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// MaxRetryDelay bounds the wait before an object whose reconcile failed
// (an API conflict, the API server restarting) is tried again.
const MaxRetryDelay = time.Minute

// RetryRateLimiter spaces out retries of an object whose reconcile returned
// an error: 5 ms, doubling with each failure in a row, at most MaxRetryDelay,
// reset by a success. A conflict heals on the next read, so the first retries
// come at once; the cap keeps an object from waiting the workqueue default's
// 16 minutes after a long API-server outage. Retries of all objects together
// are limited to 10 per second (bursts of 100), as by default.
func RetryRateLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, MaxRetryDelay),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// ControllerOptions are the options every controller starts from: each
// gets its own RetryRateLimiter.
func ControllerOptions() controller.Options {
	return controller.Options{RateLimiter: RetryRateLimiter()}
}
