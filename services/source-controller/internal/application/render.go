package application

import (
	"context"
	"encoding/json"
	"errors"
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

// Output is one render's result.
type Output struct {
	Objects []*unstructured.Unstructured
	Chart   *syncv1.ChartArtifact
	// Withheld lists what a render that withholds secrets left out.
	Withheld []string
	// Inputs are the repository's paths the render read, when the commit
	// was all it read; nil when it also read values from the cluster or a
	// chart from a chart repository, which change without a commit.
	Inputs *render.Inputs
}

// Renderer renders one Application at one commit, reading what the render
// needs beyond the commit: keys, values and charts.
type Renderer struct {
	// APIReader reads Secrets and ConfigMaps without caching them.
	APIReader client.Reader
	Git       *gitrepo.Cache
	Charts    *chart.Puller
}

// withheldSuffix says why a preview render left something out.
const withheldSuffix = " (spec.previews.decrypt is off)"

// Render checks commit out, gathers keys, values and the chart, and renders
// app. Decrypted plaintext exists only in memory here and in the returned
// objects; a render that fails after the checkout returns its Output too,
// without objects, so that it still says what it withheld.
// With withhold, nothing secret is read: SOPS files are left out
// undecrypted, valuesFrom Secrets are not read and the chart is pulled
// without credentials, each listed in Output.Withheld, since a preview's
// commit may come from anyone who can open a pull request.
func (r *Renderer) Render(ctx context.Context, app *syncv1.Application, key gitrepo.RepoKey, commit string, withhold bool) (*Output, error) {
	dir, err := r.Git.Checkout(ctx, key, commit)
	if err != nil {
		return nil, err
	}
	out := &Output{}
	var decryptor render.Decryptor
	var sopsWithheld *sops.Withholder
	if withhold {
		sopsWithheld = &sops.Withholder{}
		decryptor = sopsWithheld
	} else if decryptor, err = r.decryptor(ctx, app); err != nil {
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
	h := app.Spec.Source.Render.Helm
	if h == nil || (len(h.ValuesFrom) == 0 && h.Chart == nil) {
		out.Inputs = &render.Inputs{}
		req.Inputs = out.Inputs
	}
	if h != nil {
		req.Helm.ReleaseName = h.ReleaseName
		req.Helm.ValuesFiles = h.ValuesFiles
		if req.Helm.ValuesFrom, err = r.valuesFrom(ctx, app, withhold, out); err != nil {
			return out, err
		}
		if h.Values != nil && len(h.Values.Raw) > 0 {
			if err := json.Unmarshal(h.Values.Raw, &req.Helm.Values); err != nil {
				return nil, inputErr(syncv1.ReasonValidationFailure, "spec.source.render.helm.values: %v", err)
			}
		}
		if c := h.Chart; c != nil {
			pulled, err := r.pull(ctx, app, c, withhold, out)
			if err != nil {
				return out, err
			}
			req.Helm.Chart = pulled.Chart
			out.Chart = &syncv1.ChartArtifact{Repository: c.Repository, Name: c.Name, Version: c.Version, SHA256: pulled.SHA256}
		}
	}
	out.Objects, err = render.Render(ctx, req)
	if sopsWithheld != nil {
		for _, f := range sopsWithheld.Files() {
			out.Withheld = append(out.Withheld, f+": SOPS-encrypted, not decrypted"+withheldSuffix)
		}
	}
	// A failed render still says what it withheld: the files left out may
	// be why it failed.
	return out, err
}

// FailureReason is the condition reason of a render error, and whether it
// may heal without a change to Git or the Application (a chart repository
// that is down).
func FailureReason(err error) (reason string, transient bool) {
	var re *render.Error
	var ie *inputError
	switch {
	case errors.As(err, &re):
		return re.Reason, false
	case errors.As(err, &ie):
		return ie.reason, ie.transient
	}
	return syncv1.ReasonRenderFailed, false
}

// decryptor returns the SOPS decryptor for the Application: its age keys, or
// one that refuses encrypted files when spec.decryption is not set.
func (r *Renderer) decryptor(ctx context.Context, app *syncv1.Application) (render.Decryptor, error) {
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
func (r *Renderer) labelledSecret(ctx context.Context, namespace, name, label, field string) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret); err != nil {
		return nil, fmt.Errorf("%s: Secret %q: %w", field, name, err)
	}
	if secret.Labels[label] != "true" {
		return nil, fmt.Errorf("%s: Secret %q must carry the label %s: \"true\"", field, name, label)
	}
	return secret, nil
}

// valuesFrom reads each valuesFrom entry, in order; with withhold, a Secret
// is left out and listed in out.Withheld.
func (r *Renderer) valuesFrom(ctx context.Context, app *syncv1.Application, withhold bool, out *Output) ([]map[string]any, error) {
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
			if withhold {
				out.Withheld = append(out.Withheld, fmt.Sprintf("%s: Secret %q not read%s", field, ref.Name, withheldSuffix))
				continue
			}
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

// pull fetches the chart with the credentials of chart.secretRef, if any;
// with withhold, without them, listed in out.Withheld.
func (r *Renderer) pull(ctx context.Context, app *syncv1.Application, c *syncv1.HelmChart, withhold bool, out *Output) (*chart.Pulled, error) {
	var creds *chart.Credentials
	withheld := ""
	if c.SecretRef != nil && withhold {
		withheld = fmt.Sprintf("spec.source.render.helm.chart.secretRef: Secret %q not read%s", c.SecretRef.Name, withheldSuffix)
		out.Withheld = append(out.Withheld, withheld)
	} else if c.SecretRef != nil {
		s := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: c.SecretRef.Name}, s); err != nil {
			return nil, inputErr(syncv1.ReasonRenderFailed, "spec.source.render.helm.chart.secretRef: Secret %q: %v", c.SecretRef.Name, err)
		}
		creds = &chart.Credentials{Username: string(s.Data["username"]), Password: string(s.Data["password"])}
	}
	pulled, err := r.Charts.Pull(ctx, chart.Ref{Repository: c.Repository, Name: c.Name, Version: c.Version, Insecure: c.Insecure}, app.Namespace, creds)
	if err != nil && withheld != "" {
		// Pulled without its credentials, the chart failing is expected
		// and no retry heals it.
		return nil, inputErr(syncv1.ReasonRenderFailed, "spec.source.render.helm.chart: %v; pulled without credentials: %s", err, withheld)
	}
	if err != nil {
		return nil, &inputError{reason: syncv1.ReasonRenderFailed, transient: true,
			err: fmt.Errorf("spec.source.render.helm.chart: %v", err)}
	}
	return pulled, nil
}
