package packaging_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestDeployDefault_AcceptedByAPIServer builds deploy/default as
// `kustomize build` does, as shipped and with its [RECEIVER] entries
// uncommented, installs its CRDs and Namespace for real and Server-Side
// Applies every other object as a dry run: each one must be accepted, and
// every service must have its Deployment and ServiceAccount in
// kuvryn-sync-system.
func TestDeployDefault_AcceptedByAPIServer(t *testing.T) {
	installPrerequisites(t)
	for _, tc := range []struct {
		name string
		objs []*unstructured.Unstructured
	}{
		{"as shipped", deployDefault(t)},
		{"with the [RECEIVER] entries", deployDefaultAll(t)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dryRunApply(t, "deploy/default", tc.objs)
			got := ids(tc.objs)
			for _, s := range services {
				for _, want := range ownedBy(s.name) {
					if !got[want] {
						t.Errorf("deploy/default has no %s for the %s", want, s.name)
					}
				}
			}
			for _, o := range tc.objs {
				if ns := o.GetNamespace(); ns != "" && ns != systemNamespace {
					t.Errorf("deploy/default puts %s in namespace %q, want %s", idOf(o), ns, systemNamespace)
				}
			}
		})
	}
}

// TestDeployDefault_ShipsEveryGeneratedCRD fails when `make manifests`
// generated a CRD into deploy/crds that deploy/default does not install.
func TestDeployDefault_ShipsEveryGeneratedCRD(t *testing.T) {
	want := generatedCRDNames(t)
	var got []string
	for _, o := range ofKind(deployDefault(t), "CustomResourceDefinition") {
		got = append(got, o.GetName())
	}
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("deploy/default installs the CRDs %v, deploy/crds holds %v: list every file in deploy/crds/kustomization.yaml", got, want)
	}
}

// generatedCRDNames reads the CRD names from the files controller-gen
// writes into deploy/crds.
func generatedCRDNames(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "deploy", "crds", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := parseYAML(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, o := range ofKind(objs, "CustomResourceDefinition") {
			names = append(names, o.GetName())
		}
	}
	if len(names) == 0 {
		t.Fatal("deploy/crds holds no CRDs")
	}
	sort.Strings(names)
	return names
}

// TestDeployDefault_OverlayPointsImagesAtARegistryAndInjectsTheCA builds the
// overlay docs/install.md shows, beside deploy/default: the images move to
// another registry with their tags kept, and both webhook configurations
// get cert-manager's CA injection annotation.
func TestDeployDefault_OverlayPointsImagesAtARegistryAndInjectsTheCA(t *testing.T) {
	fs := deployInMemory(t)
	overlay := `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../default
images:
  - {name: ghcr.io/kuvryn/kuvryn-sync-source, newName: registry.example.com/kuvryn-sync-source}
  - {name: ghcr.io/kuvryn/kuvryn-sync-sync, newName: registry.example.com/kuvryn-sync-sync}
  - {name: ghcr.io/kuvryn/kuvryn-sync-web, newName: registry.example.com/kuvryn-sync-web}
patches:
  - target: {group: admissionregistration.k8s.io, name: kuvryn-sync-application}
    patch: |-
      - op: add
        path: /metadata/annotations
        value: {cert-manager.io/inject-ca-from: kuvryn-sync-system/kuvryn-sync-webhook}
`
	if err := fs.WriteFile("/deploy/overlays/production/kustomization.yaml", []byte(overlay)); err != nil {
		t.Fatal(err)
	}
	objs, err := build(fs, "/deploy/overlays/production")
	if err != nil {
		t.Fatal(err)
	}
	appVersion := loadChart(t).Metadata.AppVersion
	for _, d := range ofKind(objs, "Deployment") {
		want := "registry.example.com/kuvryn-sync-" + imageOf[d.GetLabels()["app.kubernetes.io/component"]] + ":" + appVersion
		if image := manager(t, d)["image"]; image != want {
			t.Errorf("%s runs %v, want %s", idOf(d), image, want)
		}
	}
	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		w := find(objs, kind, "kuvryn-sync-application")
		if w == nil {
			t.Fatalf("overlay lost the %s", kind)
		}
		if got := w.GetAnnotations()["cert-manager.io/inject-ca-from"]; got != "kuvryn-sync-system/kuvryn-sync-webhook" {
			t.Errorf("%s inject-ca-from annotation %q", kind, got)
		}
	}
}
