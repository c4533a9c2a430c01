package receiver

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Replicas counts the ready endpoints of the receiver's Service, the
// replicas a sender's requests are spread over, from a watch of its
// EndpointSlices alone. Each replica then enforces its share of the guide's
// limits, so that they hold for the Deployment as a whole without any state
// shared between replicas.
type Replicas struct {
	service types.NamespacedName
	cache   cache.Cache
	ready   atomic.Int32
}

// NewReplicas watches the EndpointSlices of service; run it with the
// manager (Start) and wait for WaitForSync before counting.
func NewReplicas(cfg *rest.Config, scheme *runtime.Scheme, service types.NamespacedName) (*Replicas, error) {
	c, err := cache.New(cfg, cache.Options{
		Scheme:            scheme,
		DefaultNamespaces: map[string]cache.Config{service.Namespace: {}},
		ByObject: map[client.Object]cache.ByObject{&discoveryv1.EndpointSlice{}: {
			Label: labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: service.Name}),
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("watching the EndpointSlices of Service %s: %w", service, err)
	}
	r := &Replicas{service: service, cache: c}
	inf, err := c.GetInformer(context.Background(), &discoveryv1.EndpointSlice{})
	if err != nil {
		return nil, fmt.Errorf("watching the EndpointSlices of Service %s: %w", service, err)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { r.recount() },
		UpdateFunc: func(any, any) { r.recount() },
		DeleteFunc: func(any) { r.recount() },
	}); err != nil {
		return nil, fmt.Errorf("watching the EndpointSlices of Service %s: %w", service, err)
	}
	return r, nil
}

// Start runs the watch until ctx ends.
func (r *Replicas) Start(ctx context.Context) error { return r.cache.Start(ctx) }

// NeedLeaderElection is false: every replica serves the receiver.
func (r *Replicas) NeedLeaderElection() bool { return false }

// WaitForSync waits until the EndpointSlices are listed.
func (r *Replicas) WaitForSync(ctx context.Context) error {
	if !r.cache.WaitForCacheSync(ctx) {
		return errors.New("the EndpointSlices of Service " + r.service.String() + " were never listed")
	}
	return nil
}

// Count is the number of ready endpoints, at least 1: with none, no
// request comes through the Service, so this replica's share is the whole.
func (r *Replicas) Count() int {
	return max(int(r.ready.Load()), 1)
}

// recount counts the ready endpoints of the Service's slices.
func (r *Replicas) recount() {
	var slices discoveryv1.EndpointSliceList
	if err := r.cache.List(context.Background(), &slices, client.InNamespace(r.service.Namespace)); err != nil {
		// The informer's own store, which the handler runs on: it does not fail.
		return
	}
	r.ready.Store(int32(readyEndpoints(slices.Items)))
}

// readyEndpoints counts the ready endpoints over every slice, each Pod
// once (a dual-stack Service has a slice per address family).
func readyEndpoints(slices []discoveryv1.EndpointSlice) int {
	ready := map[string]bool{}
	for _, s := range slices {
		for _, e := range s.Endpoints {
			// A nil ready condition means ready, as for kube-proxy.
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			switch {
			case e.TargetRef != nil:
				ready[e.TargetRef.Namespace+"/"+e.TargetRef.Name] = true
			case len(e.Addresses) > 0:
				ready[e.Addresses[0]] = true
			}
		}
	}
	return len(ready)
}
