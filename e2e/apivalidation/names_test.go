package apivalidation_test

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
)

// TestAPI_ReferenceThatIsNotAnObjectNameIsRefusedNamingTheField: a
// reference to a Secret, a service account, a sink or a namespace is read by
// a name the API server could never give an object (a path such as
// ../kube-system/credentials), client-go refuses to send the read, and the
// controller, taking that for a transient error, retried it forever without
// saying which field was wrong. Admission refuses such names instead, with
// the field and the rule, and takes every real name.
func TestAPI_ReferenceThatIsNotAnObjectNameIsRefusedNamingTheField(t *testing.T) {
	ns := namespace(t)
	const nameRule = "must be a Kubernetes object name"
	const namespaceRule = "must be a namespace name"
	type field struct {
		path string
		rule string
		set  func(ns, value string) client.Object
	}
	fields := []field{
		{"spec.git.secretRef.name", nameRule, func(ns, v string) client.Object {
			return withRepo(ns, func(r *syncv1.Repository) { r.Spec.Git.SecretRef = &syncv1.LocalObjectReference{Name: v} })
		}},
		{"spec.webhook.secretRef.name", nameRule, func(ns, v string) client.Object {
			return withRepo(ns, func(r *syncv1.Repository) { r.Spec.Webhook.SecretRef.Name = v })
		}},
		{"spec.imageUpdate.secretRef.name", nameRule, func(ns, v string) client.Object {
			return withRepo(ns, func(r *syncv1.Repository) { r.Spec.ImageUpdate.SecretRef.Name = v })
		}},
		{"spec.source.repositoryRef.name", nameRule, func(ns, v string) client.Object {
			return withApp(ns, func(a *syncv1.Application) { a.Spec.Source.RepositoryRef.Name = v })
		}},
		{"spec.serviceAccountName", nameRule, func(ns, v string) client.Object {
			return withApp(ns, func(a *syncv1.Application) { a.Spec.ServiceAccountName = v })
		}},
		{"spec.destination.namespace", namespaceRule, func(ns, v string) client.Object {
			return withApp(ns, func(a *syncv1.Application) { a.Spec.Destination.Namespace = v })
		}},
		{"spec.decryption.secretRef.name", nameRule, func(ns, v string) client.Object {
			return withApp(ns, func(a *syncv1.Application) { a.Spec.Decryption.SecretRef.Name = v })
		}},
		{"spec.source.render.helm.valuesFrom[0].name", nameRule, func(ns, v string) client.Object {
			return withApp(ns, func(a *syncv1.Application) { a.Spec.Source.Render.Helm.ValuesFrom[0].Name = v })
		}},
		{"spec.notifications[0].sinkRef.name", nameRule, func(ns, v string) client.Object {
			return withApp(ns, func(a *syncv1.Application) { a.Spec.Notifications[0].SinkRef.Name = v })
		}},
		{"spec.secretRef.name", nameRule, func(ns, v string) client.Object {
			return withSink(ns, func(s *syncv1.NotificationSink) { s.Spec.SecretRef.Name = v })
		}},
		{"spec.secretRef.name", nameRule, func(ns, v string) client.Object {
			return withPolicy(ns, func(p *syncv1.ImagePolicy) { p.Spec.SecretRef.Name = v })
		}},
	}
	hostile := []string{"../deployer", "../../kube-system/git-credentials", "a/b", "Upper", "-leading", "trailing.", "white space", "nul\x00"}
	for i, f := range fields {
		for _, v := range hostile {
			obj := f.set(ns, v)
			t.Run(kindOf(obj)+" "+f.path+" "+v, func(t *testing.T) {
				err := k8s.Create(t.Context(), obj)
				if err == nil {
					t.Fatalf("created with %s %q; want a refusal", f.path, v)
				}
				if !strings.Contains(err.Error(), f.path+":") || !strings.Contains(err.Error(), f.rule) {
					t.Fatalf("refusal %q\ndoes not name field %q with %q", err, f.path, f.rule)
				}
			})
		}
		// A real name is taken; dots only where the kind allows them.
		valid := "team-a.deployer"
		if f.rule == namespaceRule {
			valid = "team-a"
		}
		obj := f.set(ns, valid)
		obj.SetName(fmt.Sprintf("valid-%d", i))
		t.Run(kindOf(obj)+" "+f.path+" valid", func(t *testing.T) {
			if err := k8s.Create(t.Context(), obj); err != nil {
				t.Fatalf("refused %s %q: %v", f.path, valid, err)
			}
		})
	}
}

func kindOf(obj client.Object) string {
	gvk, err := apiutil.GVKForObject(obj, manager.Scheme())
	if err != nil {
		return "object"
	}
	return gvk.Kind
}
