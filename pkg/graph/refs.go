package graph

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
)

// Reference is one object a Pod (or Pod template) refers to, and how.
type Reference struct {
	ID desiredstate.ObjectID
	// Via says where the reference is, such as `volume "config"` or
	// `env DB_PASSWORD of container "app"`.
	Via string
	// Optional references may be missing without keeping the Pod from starting.
	Optional bool
}

// PodReferences lists, in a stable order, the ConfigMaps, Secrets,
// ServiceAccount and PersistentVolumeClaims spec refers to in namespace.
// An empty service account name is the namespace's "default", which the API
// server creates itself, so it is left out.
func PodReferences(namespace string, spec *corev1.PodSpec) []Reference {
	var refs []Reference
	add := func(kind, name, via string, optional *bool) {
		if name == "" {
			return
		}
		refs = append(refs, Reference{ID: ID("", kind, namespace, name), Via: via, Optional: optional != nil && *optional})
	}
	if sa := spec.ServiceAccountName; sa != "" && sa != "default" {
		add(KindAccount.Kind, sa, "serviceAccountName", nil)
	}
	for _, v := range spec.Volumes {
		via := fmt.Sprintf("volume %q", v.Name)
		switch {
		case v.ConfigMap != nil:
			add(KindConfigMap.Kind, v.ConfigMap.Name, via, v.ConfigMap.Optional)
		case v.Secret != nil:
			add(KindSecret.Kind, v.Secret.SecretName, via, v.Secret.Optional)
		case v.PersistentVolumeClaim != nil:
			add(KindPVC.Kind, v.PersistentVolumeClaim.ClaimName, via, nil)
		case v.Projected != nil:
			for _, src := range v.Projected.Sources {
				if src.ConfigMap != nil {
					add(KindConfigMap.Kind, src.ConfigMap.Name, via, src.ConfigMap.Optional)
				}
				if src.Secret != nil {
					add(KindSecret.Kind, src.Secret.Name, via, src.Secret.Optional)
				}
			}
		}
	}
	containers := func(kind string, cs []corev1.Container) {
		for _, c := range cs {
			for _, from := range c.EnvFrom {
				via := fmt.Sprintf("envFrom of %s %q", kind, c.Name)
				if from.ConfigMapRef != nil {
					add(KindConfigMap.Kind, from.ConfigMapRef.Name, via, from.ConfigMapRef.Optional)
				}
				if from.SecretRef != nil {
					add(KindSecret.Kind, from.SecretRef.Name, via, from.SecretRef.Optional)
				}
			}
			for _, env := range c.Env {
				if env.ValueFrom == nil {
					continue
				}
				via := fmt.Sprintf("env %s of %s %q", env.Name, kind, c.Name)
				if r := env.ValueFrom.ConfigMapKeyRef; r != nil {
					add(KindConfigMap.Kind, r.Name, via, r.Optional)
				}
				if r := env.ValueFrom.SecretKeyRef; r != nil {
					add(KindSecret.Kind, r.Name, via, r.Optional)
				}
			}
		}
	}
	containers("init container", spec.InitContainers)
	containers("container", spec.Containers)
	return dedupe(refs)
}

// dedupe keeps the first reference to each object, a required one before
// an optional one, in kind and name order.
func dedupe(refs []Reference) []Reference {
	sort.SliceStable(refs, func(i, j int) bool {
		a, b := refs[i], refs[j]
		if a.ID != b.ID {
			return lessID(a.ID, b.ID)
		}
		return !a.Optional && b.Optional
	})
	out := refs[:0]
	for i, r := range refs {
		if i == 0 || r.ID != refs[i-1].ID {
			out = append(out, r)
		}
	}
	return out
}

func lessID(a, b desiredstate.ObjectID) bool {
	if a.Group != b.Group {
		return a.Group < b.Group
	}
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}
