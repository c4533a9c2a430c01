package controlplane

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// WebhookCertificates generates a CA and a serving certificate for
// 127.0.0.1 and localhost signed by it, writes the certificate and key into
// dir as tls.crt and tls.key (the manager's --webhook-cert-path layout) and
// the CA as ca.crt, and returns the CA certificate in PEM for caBundle.
func WebhookCertificates(dir string) (caBundle []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kuvryn-sync-webhook-test-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("creating the webhook CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serving := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	servingDER, err := x509.CreateCertificate(rand.Reader, serving, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("creating the webhook serving certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}

	caBundle = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	files := []struct {
		name string
		data []byte
	}{
		{"ca.crt", caBundle},
		{"tls.crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: servingDER})},
		{"tls.key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o600); err != nil {
			return nil, err
		}
	}
	return caBundle, nil
}

// RegisterWebhooks applies the admission webhook configurations of
// root/deploy/webhook through c (which must be allowed to), each webhook pointed at
// https://127.0.0.1:<port><its service path> and trusting caBundle instead of
// the in-cluster Service, so rules and failure policy are the shipped ones.
func RegisterWebhooks(ctx context.Context, c client.Client, root string, port int, caBundle []byte) error {
	dir := filepath.Join(root, "deploy", "webhook")
	objs, err := ReadManifests(dir)
	if err != nil {
		return err
	}
	registered := 0
	for _, u := range objs {
		local, err := toLoopback(u, port, caBundle)
		if err != nil {
			return fmt.Errorf("%s: %s %s: %w", dir, u.GetKind(), u.GetName(), err)
		}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(local),
			client.FieldOwner("kuvryn-e2e"), client.ForceOwnership); err != nil {
			return fmt.Errorf("%s: %s %s: %w", dir, u.GetKind(), u.GetName(), err)
		}
		registered++
	}
	if registered == 0 {
		return fmt.Errorf("no webhook configurations in %s", dir)
	}
	return nil
}

// toLoopback rewrites every webhook's clientConfig of one configuration.
func toLoopback(u *unstructured.Unstructured, port int, caBundle []byte) (*unstructured.Unstructured, error) {
	loopback := func(cc *admissionregistrationv1.WebhookClientConfig) error {
		if cc.Service == nil || cc.Service.Path == nil {
			return errors.New("clientConfig.service.path is not set")
		}
		url := "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) + *cc.Service.Path
		*cc = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle}
		return nil
	}
	var obj runtime.Object
	switch u.GetKind() {
	case "MutatingWebhookConfiguration":
		m := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, m); err != nil {
			return nil, err
		}
		for i := range m.Webhooks {
			if err := loopback(&m.Webhooks[i].ClientConfig); err != nil {
				return nil, fmt.Errorf("webhook %s: %w", m.Webhooks[i].Name, err)
			}
		}
		obj = m
	case "ValidatingWebhookConfiguration":
		v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, v); err != nil {
			return nil, err
		}
		for i := range v.Webhooks {
			if err := loopback(&v.Webhooks[i].ClientConfig); err != nil {
				return nil, fmt.Errorf("webhook %s: %w", v.Webhooks[i].Name, err)
			}
		}
		obj = v
	default:
		return nil, fmt.Errorf("kind %s is not a webhook configuration", u.GetKind())
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	out := &unstructured.Unstructured{Object: content}
	out.SetAPIVersion(u.GetAPIVersion())
	out.SetKind(u.GetKind())
	unstructured.RemoveNestedField(out.Object, "metadata", "creationTimestamp")
	return out, nil
}

// WaitForWebhooks returns once the API server calls the Application
// webhooks and they answer: a dry-run create of an Application carrying
// approve-digest without approved-revision in namespace is refused by the
// mutating webhook. Nothing is stored.
func WaitForWebhooks(ctx context.Context, c client.Client, namespace string, timeout time.Duration) error {
	probe := func() *syncv1.Application {
		return &syncv1.Application{
			ObjectMeta: metav1.ObjectMeta{
				Name:        "webhook-probe",
				Namespace:   namespace,
				Annotations: map[string]string{syncv1.ApproveDigestAnnotation: "sha256:probe"},
			},
			Spec: syncv1.ApplicationSpec{Source: syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "probe"}}},
		}
	}
	deadline := time.Now().Add(timeout)
	var last error
	for {
		err := c.Create(ctx, probe(), client.DryRunAll)
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), syncv1.ApproveDigestAnnotation) {
			return nil
		}
		last = err
		if time.Now().After(deadline) {
			return fmt.Errorf("the Application admission webhooks did not answer within %s: last probe: %v", timeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
