package manager

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestRetryRateLimiter_BacksOffFromMillisecondsToAMinuteAndResetsOnSuccess(t *testing.T) {
	a := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "payments", Name: "api"}}
	b := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "payments", Name: "web"}}
	l := RetryRateLimiter()

	var delays []time.Duration
	for range 20 {
		delays = append(delays, l.When(a))
	}
	want := map[int]time.Duration{0: 5 * time.Millisecond, 1: 10 * time.Millisecond, 9: 2560 * time.Millisecond, 14: MaxRetryDelay, 19: MaxRetryDelay}
	for i, d := range want {
		if delays[i] != d {
			t.Errorf("failure %d in a row waits %s, want %s (all: %v)", i+1, delays[i], d, delays)
		}
	}
	for i := 1; i < len(delays); i++ {
		if delays[i] < delays[i-1] || delays[i] > MaxRetryDelay {
			t.Fatalf("delays %v do not grow monotonically up to %s", delays, MaxRetryDelay)
		}
	}
	if d := l.When(b); d != 5*time.Millisecond {
		t.Errorf("another object's first failure waits %s, want 5ms: failures are counted per object", d)
	}
	l.Forget(a)
	if d := l.When(a); d != 5*time.Millisecond {
		t.Errorf("after a success the next failure waits %s, want 5ms", d)
	}
}
