package receiver

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestReceiver_RateLimitsHoldAcrossReplicas runs two receivers for one
// Service, as two replicas of the web Deployment, with one frozen clock,
// and sends one address's requests to them in turn, as the Service spreads
// them. With the Service's ready endpoints in an EndpointSlice, the two
// together admit no more than the guide's limits: 50 requests from the
// address, then 10 for the Repository, and 10 more after ten seconds; with
// a third ready replica that gets none of the requests, less.
func TestReceiver_RateLimitsHoldAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "receiver-replicas-"}}
	must(t, admin.Create(ctx, ns))
	t.Cleanup(func() { _ = admin.Delete(context.Background(), ns) })
	grantNamespaceRole(t, ns.Name)

	var mu sync.Mutex
	clock := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	advance := func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(d)
	}
	const service = "kuvryn-sync-receiver"
	replicas := []*fixture{
		start(t, fixtureOptions{now: now, namespace: ns.Name, service: service}),
		start(t, fixtureOptions{now: now, namespace: ns.Name, service: service}),
	}
	replicas[0].secret("hook", "s3cret")
	replicas[0].repository("platform", "https://github.com/acme/platform", "hook")
	replicas[1].waitCached(&syncv1.Repository{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "platform"}})

	body := githubPush("acme/platform")
	bad := map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(body, "guess")}
	ping := map[string]string{"X-GitHub-Event": "ping", "X-Hub-Signature-256": sign(body, "s3cret")}
	path := "/hooks/" + ns.Name + "/platform"
	// passed sends n requests in turn to the replicas and counts those not
	// refused with 429.
	passed := func(n int, header map[string]string) int {
		ok := 0
		for i := range n {
			if replicas[i%2].post(path, header, body).status != http.StatusTooManyRequests {
				ok++
			}
		}
		return ok
	}

	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns.Name, Name: service + "-abcde", Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	cases := []struct {
		name          string
		ready         int
		notReady      int
		wantAddress   int
		wantRepoBurst int
		wantRepo10s   int
	}{
		{"two ready replicas, a third not ready", 2, 1, addressBurst, objectBurst, 10 * objectPerSecond},
		{"three ready replicas, two of them sent to", 3, 0, 2 * (addressBurst / 3), 2 * (objectBurst / 3), 2 * (objectBurst / 3)},
	}
	for i, c := range cases {
		slice.Endpoints = nil
		for j := range c.ready + c.notReady {
			ready := j < c.ready
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
				Addresses:  []string{fmt.Sprintf("10.0.0.%d", j+1)},
				Conditions: discoveryv1.EndpointConditions{Ready: &ready},
				TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: ns.Name, Name: fmt.Sprintf("kuvryn-sync-web-%d", j)},
			})
		}
		if i == 0 {
			must(t, admin.Create(ctx, slice))
		} else {
			must(t, admin.Update(ctx, slice))
		}
		deadline := time.Now().Add(30 * time.Second)
		for replicas[0].replicas.Count() != c.ready || replicas[1].replicas.Count() != c.ready {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the replicas count %d and %d ready endpoints, want %d", c.name,
					replicas[0].replicas.Count(), replicas[1].replicas.Count(), c.ready)
			}
			time.Sleep(10 * time.Millisecond)
		}
		// Every bucket full again.
		advance(time.Minute)

		if got := passed(2*addressBurst, bad); got != c.wantAddress {
			t.Errorf("%s: %d requests from one address passed its limit, want %d (the guide: at most %d)", c.name, got, c.wantAddress, addressBurst)
		}
		advance(time.Minute)
		if got := passed(3*objectBurst, ping); got != c.wantRepoBurst {
			t.Errorf("%s: %d signed requests for one Repository passed its limit, want %d (the guide: at most %d)", c.name, got, c.wantRepoBurst, objectBurst)
		}
		advance(10 * time.Second)
		if got := passed(3*objectBurst, ping); got != c.wantRepo10s {
			t.Errorf("%s: ten seconds later %d passed, want %d (the guide: at most %d)", c.name, got, c.wantRepo10s, 10*objectPerSecond)
		}
	}
}
