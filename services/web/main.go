// Command web serves the read-only console and the push and image webhook
// receiver.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/web/internal/console"
	"github.com/kuvryn/kuvryn-sync/services/web/internal/receiver"
	"github.com/kuvryn/kuvryn-sync/services/web/internal/serve"
)

func main() {
	var receiverAddr, receiverService string
	var co consoleOptions
	svc := manager.Service{Name: "web", Flags: func(fs *flag.FlagSet) {
		fs.StringVar(&receiverAddr, "webhook-receiver-bind-address", "",
			"Push webhook receiver address, such as :9292; empty disables it.")
		fs.StringVar(&receiverService, "webhook-receiver-service", "kuvryn-sync-receiver",
			"The receiver's Service, name or namespace/name (a name is in the Pod's namespace): each replica enforces its share of the rate limits, divided by the Service's ready endpoints.")
		fs.StringVar(&co.addr, "console-bind-address", "",
			"Read-only web console address, such as :8080; empty disables it.")
		fs.StringVar(&co.secret, "console-session-secret", "kuvryn-sync-system/kuvryn-sync-web-console-session",
			"Secret (namespace/name) holding the console's session key; created with a random key when absent.")
		fs.DurationVar(&co.ttl, "console-session-ttl", 8*time.Hour, "How long a console sign-in lasts.")
		fs.StringVar(&co.oidc.IssuerURL, "console-oidc-issuer-url", "",
			"OpenID Connect issuer (https://) people may sign in to the console with; empty: token sign-in only. The API server must trust it too.")
		fs.StringVar(&co.oidc.ClientID, "console-oidc-client-id", "", "The console's OIDC client ID: the ID token's audience the API server expects.")
		fs.StringVar(&co.oidcSecretFile, "console-oidc-client-secret-file", "",
			"File holding the OIDC client secret; else $"+oidcSecretEnv+"; neither: a public client (PKCE alone).")
		fs.StringVar(&co.oidc.RedirectURL, "console-oidc-redirect-url", "",
			"The console's OIDC callback as browsers reach it, such as https://console.example.com"+console.OIDCCallbackPath+".")
		fs.StringVar(&co.oidc.CAFile, "console-oidc-ca-file", "", "PEM CA certificates of the issuer's TLS certificate; empty: the system's.")
		fs.StringVar(&co.oidcScopes, "console-oidc-scopes", "openid,email,profile", "Comma-separated OIDC scopes to ask for, such as openid,email,groups.")
		fs.StringVar(&co.oidc.Name, "console-oidc-name", "OIDC", "Issuer name on the sign-in button: \"Sign in with <name>\".")
	}}
	manager.Main(svc, func(mgr ctrl.Manager) error {
		var listeners []*serve.Listener
		if receiverAddr != "" {
			l, err := receiverListener(mgr, receiverAddr, receiverService)
			if err != nil {
				return err
			}
			listeners = append(listeners, l)
		}
		if co.addr != "" {
			l, err := consoleListener(mgr, co)
			if err != nil {
				return err
			}
			listeners = append(listeners, l)
		}
		// Ready while serving nothing would hide a missing flag.
		if len(listeners) == 0 {
			return errors.New("nothing to serve: set --console-bind-address (such as :8080) to run the web console, " +
				"--webhook-receiver-bind-address (such as :9292) to run the push and image webhook receiver, or both")
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
// Repositories and ImagePolicies it reads are cached and the ready
// endpoints of service, which divide its rate limits, are counted.
func receiverListener(mgr ctrl.Manager, addr, service string) (*serve.Listener, error) {
	key, err := receiverService(service, podNamespace())
	if err != nil {
		return nil, err
	}
	replicas, err := receiver.NewReplicas(mgr.GetConfig(), mgr.GetScheme(), key)
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(replicas); err != nil {
		return nil, err
	}
	rc, err := receiver.New(receiver.Options{
		Client:     mgr.GetClient(),
		Secrets:    mgr.GetAPIReader(),
		Registerer: metrics.Registry,
		Log:        ctrl.Log.WithName("webhook-receiver"),
		Replicas:   replicas.Count,
	})
	if err != nil {
		return nil, err
	}
	return &serve.Listener{
		Name:    "webhook-receiver",
		Addr:    addr,
		Handler: rc.Handler(),
		Before: func(ctx context.Context) error {
			if err := replicas.WaitForSync(ctx); err != nil {
				return err
			}
			return receiver.Informers(ctx, mgr.GetCache())
		},
	}, nil
}

// receiverService reads --webhook-receiver-service: a name in podNS, or
// namespace/name.
func receiverService(flag, podNS string) (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(flag, "/")
	if !ok {
		ns, name = podNS, flag
	}
	if ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, fmt.Errorf("--webhook-receiver-service %q: want a name or namespace/name, such as kuvryn-sync-receiver", flag)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// podNamespace is the namespace of the Pod the service runs in, from its
// ServiceAccount's mount; outside a Pod, kuvryn-sync-system.
func podNamespace() string {
	b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	if ns := strings.TrimSpace(string(b)); err == nil && ns != "" {
		return ns
	}
	return "kuvryn-sync-system"
}

// oidcSecretEnv holds the OIDC client secret when no file is given.
const oidcSecretEnv = "KUVRYN_CONSOLE_OIDC_CLIENT_SECRET"

type consoleOptions struct {
	addr           string
	secret         string
	ttl            time.Duration
	oidc           console.OIDCOptions
	oidcSecretFile string
	oidcScopes     string
}

// oidcOptions is the OIDC sign-in the flags configure, or nil.
func (o consoleOptions) oidcOptions() (*console.OIDCOptions, error) {
	if o.oidc.IssuerURL == "" {
		return nil, nil
	}
	oc := o.oidc
	oc.ClientSecret = os.Getenv(oidcSecretEnv)
	if o.oidcSecretFile != "" {
		b, err := os.ReadFile(o.oidcSecretFile)
		if err != nil {
			return nil, fmt.Errorf("--console-oidc-client-secret-file: %w", err)
		}
		oc.ClientSecret = strings.TrimSpace(string(b))
	}
	for sc := range strings.SplitSeq(o.oidcScopes, ",") {
		if sc = strings.TrimSpace(sc); sc != "" {
			oc.Scopes = append(oc.Scopes, sc)
		}
	}
	return &oc, nil
}

// consoleListener serves the console on addr once its session key is read
// (or created) from the session Secret.
func consoleListener(mgr ctrl.Manager, o consoleOptions) (*serve.Listener, error) {
	ns, name, ok := strings.Cut(o.secret, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("--console-session-secret %q: want namespace/name, such as kuvryn-sync-system/kuvryn-sync-web-console-session", o.secret)
	}
	oidc, err := o.oidcOptions()
	if err != nil {
		return nil, err
	}
	l := &serve.Listener{Name: "console", Addr: o.addr}
	l.Before = func(ctx context.Context) error {
		key, err := console.SessionKey(ctx, mgr.GetClient(), mgr.GetAPIReader(), types.NamespacedName{Namespace: ns, Name: name})
		if err != nil {
			return err
		}
		c, err := console.New(console.Options{Config: mgr.GetConfig(), Mapper: mgr.GetRESTMapper(), Key: key,
			SessionTTL: o.ttl, Log: ctrl.Log.WithName("console"), OIDC: oidc})
		if err != nil {
			return err
		}
		l.Handler = c.Handler()
		return nil
	}
	return l, nil
}
