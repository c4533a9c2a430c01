package application

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/chart"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/gitrepo"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/render"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/sops"
)

// inputError is a render input that could not be read (a key Secret, a
// values Secret, a chart), with the reason to report. transient marks a
// failure that may heal without a change to Git or the Application, such
// as a chart repository that is down.
type inputError struct {
	reason    string
	err       error
	transient bool
}

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

func inputErr(reason, format string, args ...any) error {
	return &inputError{reason: reason, err: fmt.Errorf(format, args...)}
}

// output is one render's result.
type output struct {
	objects []*unstructured.Unstructured
	chart   *syncv1.ChartArtifact
}

// render checks the commit out, gathers keys, values and the chart, and
// renders. Decrypted plaintext exists only in memory here and in the
// returned objects.
func (r *Reconciler) render(ctx context.Context, app *syncv1.Application, repo *syncv1.Repository) (*output, error) {
	dir, err := r.Git.Checkout(ctx, gitrepo.RepoKey{Namespace: repo.Namespace, Name: repo.Name}, repo.Status.Artifact.Commit)
	if err != nil {
		return nil, err
	}
	decryptor, err := r.decryptor(ctx, app)
	if err != nil {
		return nil, err
	}
	req := render.Request{
		Root:        dir,
		Path:        app.Spec.Source.Path,
		Type:        app.Spec.Source.Render.Type,
		Application: app.Name,
		Decryptor:   decryptor,
		Helm:        render.HelmOptions{Namespace: app.DestinationNamespace()},
	}
	out := &output{}
	if h := app.Spec.Source.Render.Helm; h != nil {
		req.Helm.ReleaseName = h.ReleaseName
		req.Helm.ValuesFiles = h.ValuesFiles
		if req.Helm.ValuesFrom, err = r.valuesFrom(ctx, app); err != nil {
			return nil, err
		}
		if h.Values != nil && len(h.Values.Raw) > 0 {
			if err := json.Unmarshal(h.Values.Raw, &req.Helm.Values); err != nil {
				return nil, inputErr(syncv1.ReasonValidationFailure, "spec.source.render.helm.values: %v", err)
			}
		}
		if c := h.Chart; c != nil {
			pulled, err := r.pull(ctx, app, c)
			if err != nil {
				return nil, err
			}
			req.Helm.Chart = pulled.Chart
			out.chart = &syncv1.ChartArtifact{Repository: c.Repository, Name: c.Name, Version: c.Version, SHA256: pulled.SHA256}
		}
	}
	if out.objects, err = render.Render(ctx, req); err != nil {
		return nil, err
	}
	return out, nil
}

// decryptor returns the SOPS decryptor for the Application: its age keys, or
// one that refuses encrypted files when spec.decryption is not set.
func (r *Reconciler) decryptor(ctx context.Context, app *syncv1.Application) (render.Decryptor, error) {
	d := app.Spec.Decryption
	if d == nil {
		return sops.NoKeys(), nil
	}
	secret, err := r.labelledSecret(ctx, app.Namespace, d.SecretRef.Name, syncv1.DecryptionKeyLabel, "spec.decryption.secretRef")
	if err != nil {
		return nil, &inputError{reason: syncv1.ReasonDecryptionFailed, err: err}
	}
	keys, err := sops.NewDecryptor(secret.Data)
	if err != nil {
		return nil, inputErr(syncv1.ReasonDecryptionFailed, "spec.decryption.secretRef: Secret %q: %v", secret.Name, err)
	}
	return keys, nil
}

// labelledSecret reads a Secret that must carry label: "true", the opt-in
// that keeps arbitrary Secrets out of reach of anyone who can write an
// Application.
func (r *Reconciler) labelledSecret(ctx context.Context, namespace, name, label, field string) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret); err != nil {
		return nil, fmt.Errorf("%s: Secret %q: %w", field, name, err)
	}
	if secret.Labels[label] != "true" {
		return nil, fmt.Errorf("%s: Secret %q must carry the label %s: \"true\"", field, name, label)
	}
	return secret, nil
}

// valuesFrom reads each valuesFrom entry, in order.
func (r *Reconciler) valuesFrom(ctx context.Context, app *syncv1.Application) ([]map[string]any, error) {
	var all []map[string]any
	for i, ref := range app.Spec.Source.Render.Helm.ValuesFrom {
		field := fmt.Sprintf("spec.source.render.helm.valuesFrom[%d]", i)
		key := ref.Key
		if key == "" {
			key = "values.yaml"
		}
		var data []byte
		switch ref.Kind {
		case "Secret":
			s := &corev1.Secret{}
			if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: ref.Name}, s); err != nil {
				return nil, inputErr(syncv1.ReasonRenderFailed, "%s: Secret %q: %v", field, ref.Name, err)
			}
			data = s.Data[key]
		case "ConfigMap":
			cm := &corev1.ConfigMap{}
			if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: ref.Name}, cm); err != nil {
				return nil, inputErr(syncv1.ReasonRenderFailed, "%s: ConfigMap %q: %v", field, ref.Name, err)
			}
			data = []byte(cm.Data[key])
		}
		if data == nil {
			return nil, inputErr(syncv1.ReasonRenderFailed, "%s: %s %q has no key %q", field, ref.Kind, ref.Name, key)
		}
		values := map[string]any{}
		if err := yaml.Unmarshal(data, &values); err != nil {
			// The values may be secret: say where, not what.
			return nil, inputErr(syncv1.ReasonValidationFailure, "%s: %s %q key %q is not a YAML map", field, ref.Kind, ref.Name, key)
		}
		all = append(all, values)
	}
	return all, nil
}

// pull fetches the chart with the credentials of chart.secretRef, if any.
func (r *Reconciler) pull(ctx context.Context, app *syncv1.Application, c *syncv1.HelmChart) (*chart.Pulled, error) {
	var creds *chart.Credentials
	if c.SecretRef != nil {
		s := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: c.SecretRef.Name}, s); err != nil {
			return nil, inputErr(syncv1.ReasonRenderFailed, "spec.source.render.helm.chart.secretRef: Secret %q: %v", c.SecretRef.Name, err)
		}
		creds = &chart.Credentials{Username: string(s.Data["username"]), Password: string(s.Data["password"])}
	}
	pulled, err := r.Charts.Pull(ctx, chart.Ref{Repository: c.Repository, Name: c.Name, Version: c.Version, Insecure: c.Insecure}, app.Namespace, creds)
	if err != nil {
		return nil, &inputError{reason: syncv1.ReasonRenderFailed, transient: true,
			err: fmt.Errorf("spec.source.render.helm.chart: %v", err)}
	}
	return pulled, nil
}
