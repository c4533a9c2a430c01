package controller

import (
	"context"
	"testing"
	"time"
)

func TestStartedCheck_NotReadyUntilTheManagerStartsIt(t *testing.T) {
	s := &startedCheck{}
	if s.NeedLeaderElection() {
		t.Error("the readiness runnable waits for leadership; a second replica would never be ready")
	}
	if err := s.check(nil); err == nil {
		t.Fatal("ready before the manager started the runnable")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for s.check(nil) != nil {
		if time.Now().After(deadline) {
			t.Fatal("not ready after Start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
