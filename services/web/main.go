// Command web serves the read-only console and the push and image webhook
// receiver.
package main

import (
	"context"
	"errors"
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/web/internal/receiver"
	"github.com/kuvryn/kuvryn-sync/services/web/internal/serve"
)

func main() {
	var receiverAddr string
	svc := manager.Service{Name: "web", Flags: func(fs *flag.FlagSet) {
		fs.StringVar(&receiverAddr, "webhook-receiver-bind-address", "",
			"Push webhook receiver address, such as :9292; empty disables it.")
	}}
	manager.Main(svc, func(mgr ctrl.Manager) error {
		var listeners []*serve.Listener
		if receiverAddr != "" {
			l, err := receiverListener(mgr, receiverAddr)
			if err != nil {
				return err
			}
			listeners = append(listeners, l)
		}
		// Ready while serving nothing would hide a missing flag.
		if len(listeners) == 0 {
			return errors.New("nothing to serve: set --webhook-receiver-bind-address (such as :9292) to run the push and image webhook receiver")
		}
		for _, l := range listeners {
			if err := mgr.Add(l); err != nil {
				return err
			}
			if err := mgr.AddReadyzCheck(l.Name, l.Ready); err != nil {
				return err
			}
		}
		return nil
	})
}

// receiverListener serves the webhook receiver on addr once the
// Repositories and ImagePolicies it reads are cached.
func receiverListener(mgr ctrl.Manager, addr string) (*serve.Listener, error) {
	rc, err := receiver.New(receiver.Options{
		Client:     mgr.GetClient(),
		Secrets:    mgr.GetAPIReader(),
		Registerer: metrics.Registry,
		Log:        ctrl.Log.WithName("webhook-receiver"),
	})
	if err != nil {
		return nil, err
	}
	return &serve.Listener{
		Name:    "webhook-receiver",
		Addr:    addr,
		Handler: rc.Handler(),
		Before:  func(ctx context.Context) error { return receiver.Informers(ctx, mgr.GetCache()) },
	}, nil
}
