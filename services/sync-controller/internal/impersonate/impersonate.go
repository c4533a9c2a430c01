// Package impersonate gives the sync-controller a client per Application
// service account, so that every plan, apply, prune and health read happens
// with that account's permissions, not the controller's.
package impersonate

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Clients builds and keeps one uncached client per service account.
type Clients struct {
	config *rest.Config
	scheme *runtime.Scheme
	mapper meta.RESTMapper

	mu      sync.Mutex
	clients map[types.NamespacedName]client.Client
}

// NewClients returns Clients that impersonate from config, which must be
// allowed to impersonate service accounts.
func NewClients(config *rest.Config, scheme *runtime.Scheme, mapper meta.RESTMapper) *Clients {
	return &Clients{
		config:  config,
		scheme:  scheme,
		mapper:  mapper,
		clients: make(map[types.NamespacedName]client.Client),
	}
}

// UserName is the user a service account authenticates as:
// system:serviceaccount:<namespace>:<name>.
func UserName(sa types.NamespacedName) string {
	return serviceaccount.MakeUsername(sa.Namespace, sa.Name)
}

// For returns the client acting as sa. Clients do not read through a cache:
// their reads are few, and a cache would need list and watch permissions
// the account may lack.
func (c *Clients) For(sa types.NamespacedName) (client.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.clients[sa]; ok {
		return cl, nil
	}
	cfg := rest.CopyConfig(c.config)
	// Only the user name: the API server adds a service account's groups
	// itself, so the controller needs impersonate on serviceaccounts alone,
	// never on groups (which would let it act as any group).
	cfg.Impersonate = rest.ImpersonationConfig{UserName: UserName(sa)}
	cl, err := client.New(cfg, client.Options{Scheme: c.scheme, Mapper: c.mapper})
	if err != nil {
		return nil, fmt.Errorf("building a client for service account %s: %w", UserName(sa), err)
	}
	c.clients[sa] = cl
	return cl, nil
}
