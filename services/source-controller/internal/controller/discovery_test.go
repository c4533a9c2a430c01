package controller_test

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

const ksync = `applications:
  - metadata:
      name: web
      annotations:
        sync.kuvryn.io/approved-revision: web-0000000000
        sync.kuvryn.io/approved-by: mallory
    spec:
      source: {path: apps/web}
  - metadata: {name: worker}
    spec:
      source: {path: apps/worker}
`

func TestDiscovery_AppliesDeclaredApplicationsAndPrunesRemovedOnes(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	gitRepo, repo := newRepository(t, ns, "platform", map[string]string{".ksync.yaml": ksync})

	eventually(t, "two discovered Applications", func() bool {
		var list syncv1.ApplicationList
		if err := k8s.List(t.Context(), &list, client.InNamespace(ns), client.MatchingLabels{syncv1.RepositoryLabel: "platform"}); err != nil {
			t.Fatal(err)
		}
		return len(list.Items) == 2
	})
	web := get(t, &syncv1.Application{}, ns, "web")
	if web.Annotations[syncv1.DiscoveredFromAnnotation] != ".ksync.yaml" {
		t.Errorf("discovered-from %q", web.Annotations[syncv1.DiscoveredFromAnnotation])
	}
	for _, a := range []string{syncv1.ApprovedRevisionAnnotation, syncv1.ApprovedByAnnotation} {
		if v, ok := web.Annotations[a]; ok {
			t.Errorf("approval annotation %s=%q carried from Git", a, v)
		}
	}
	if web.Spec.Source.RepositoryRef.Name != "platform" {
		t.Errorf("repositoryRef %q", web.Spec.Source.RepositoryRef.Name)
	}

	if _, err := gitRepo.Commit(map[string]string{".ksync.yaml": "applications:\n  - metadata: {name: web}\n    spec: {source: {path: apps/web}}\n"}, "drop worker"); err != nil {
		t.Fatal(err)
	}
	requestFetch(t, get(t, &syncv1.Repository{}, ns, repo.Name))
	eventually(t, "worker pruned", func() bool {
		err := k8s.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "worker"}, &syncv1.Application{})
		return apierrors.IsNotFound(err)
	})
	if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, &syncv1.Application{}); err != nil {
		t.Fatalf("web should stay: %v", err)
	}
}
