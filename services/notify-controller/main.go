// Command notify-controller delivers Application lifecycle events to
// NotificationSinks.
package main

import (
	"context"
	"crypto/x509"
	"flag"
	"fmt"
	"os"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/controller"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/delivery"
)

func main() {
	o := controller.Options{Delivery: delivery.Options{Backoff: 2 * time.Second, Timeout: 10 * time.Second}}
	var caFile string
	flags := func(fs *flag.FlagSet) {
		fs.IntVar(&o.Delivery.QueueSize, "notification-queue-size", 1000,
			"Notifications that may wait for delivery; more are dropped and counted as dropped.")
		fs.IntVar(&o.Delivery.Workers, "notification-workers", 4, "Notifications delivered in parallel.")
		fs.StringVar(&caFile, "sink-ca-file", "",
			"PEM file of CA certificates trusted for sink URLs besides the system's, for sinks behind a private CA.")
	}
	manager.Main(manager.Service{
		Name:    "notify-controller",
		Flags:   flags,
		Sharded: []client.Object{&syncv1.Application{}, &syncv1.Revision{}},
	}, func(mgr ctrl.Manager) error {
		if o.Delivery.QueueSize < 1 || o.Delivery.Workers < 1 {
			return fmt.Errorf("--notification-queue-size %d and --notification-workers %d must be at least 1",
				o.Delivery.QueueSize, o.Delivery.Workers)
		}
		if caFile != "" {
			pool, err := rootCAs(caFile)
			if err != nil {
				return err
			}
			o.Delivery.RootCAs = pool
		}
		_, err := controller.Setup(context.Background(), mgr, o)
		return err
	})
}

// rootCAs is the system's pool plus the certificates in file.
func rootCAs(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--sink-ca-file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--sink-ca-file %s holds no PEM certificate", file)
	}
	return pool, nil
}
