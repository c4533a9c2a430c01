package testregistry

import (
	"errors"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestRegistry_StopRefusesConnectionsAndStartServesTheSameImages: a stopped
// registry refuses connections at its address, keeps what was pushed, and
// serves it again at the same address once started; twice, so a restarted
// registry stops like the first.
func TestRegistry_StopRefusesConnectionsAndStartServesTheSameImages(t *testing.T) {
	r := Start(t, Options{})
	want := r.Push(t, "acme/api", "1.0.0")["1.0.0"]
	ref, err := name.NewTag(r.Host() + "/acme/api:1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		r.Stop()
		if _, err := remote.Head(ref); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("outage %d: HEAD %s of a stopped registry: %v, want the connection refused", i, ref, err)
		}
		if err := r.Start(); err != nil {
			t.Fatalf("outage %d: starting: %v", i, err)
		}
		if err := r.Start(); err == nil {
			t.Fatalf("outage %d: starting a running registry succeeded", i)
		}
		desc, err := remote.Head(ref)
		if err != nil || desc.Digest != want {
			t.Fatalf("outage %d: after the restart %s is %v (%v), want %s", i, ref, desc, err, want)
		}
	}
}
