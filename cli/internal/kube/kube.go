// Package kube builds API clients the way kubectl does: kubeconfig from the
// client-go loading rules (KUBECONFIG, ~/.kube/config, --kubeconfig), an
// optional --context, and the namespace from -n or else the context.
package kube

import (
	"fmt"
	"io"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Options say which kubeconfig, context and namespace to use. Empty fields
// follow the kubeconfig, as kubectl does.
type Options struct {
	// Kubeconfig is an explicit kubeconfig file; empty uses KUBECONFIG or ~/.kube/config.
	Kubeconfig string
	// Context overrides the kubeconfig's current-context.
	Context string
	// Namespace overrides the context's namespace.
	Namespace string
	// UserAgent identifies ksync to the API server.
	UserAgent string
	// Warnings receives the API server's warnings, such as those of admission
	// webhooks; nil discards them.
	Warnings io.Writer
}

// Load resolves the REST config and the namespace to work in: Options.Namespace,
// else the context's namespace, else "default".
func Load(o Options) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: o.Context}
	overrides.Context.Namespace = o.Namespace
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)

	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("loading kubeconfig: %w", err)
	}
	namespace, _, err := loader.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("loading kubeconfig: namespace: %w", err)
	}
	cfg.UserAgent = o.UserAgent
	if o.Warnings != nil {
		cfg.WarningHandler = rest.NewWarningWriter(o.Warnings, rest.WarningWriterOptions{Deduplicate: true})
	} else {
		cfg.WarningHandler = rest.NoWarnings{}
	}
	return cfg, namespace, nil
}

// New returns a client for the Kuvryn Sync kinds and the namespace to work in.
func New(o Options) (client.Client, string, error) {
	cfg, namespace, err := Load(o)
	if err != nil {
		return nil, "", err
	}
	// controller-runtime complains on stderr, after a while, when nothing
	// set its logger; ksync reports errors itself.
	ctrllog.SetLogger(logr.Discard())
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, "", fmt.Errorf("creating client for %s: %w", cfg.Host, err)
	}
	return c, namespace, nil
}

// Scheme knows the Kuvryn Sync kinds.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(syncv1.AddToScheme(s))
	return s
}
