package scenarios_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestE2E_ManualApplicationHandEditWaitsForTheApprovalOfItsCorrection: on a
// manual Application, `ksync approve` refuses a plan that has already rolled
// out; a `kubectl patch` then makes a fresh plan of the correction that waits
// for approval, and only `ksync approve` of that plan reverts the edit,
// recorded as a fresh approval. Until then the ConfigMap is not written at
// all: its resourceVersion and managed fields stay the hand edit's.
func TestE2E_ManualApplicationHandEditWaitsForTheApprovalOfItsCorrection(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-selfheal-manual")
	repository(t, ns, "platform", map[string]string{
		".ksync.yaml": `metadata: {name: shop}
spec:
  source: {path: deploy}
  serviceAccountName: deployer
  sync: {automatic: false}
`,
		"deploy/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {color: blue}\n",
	})
	var app syncv1.Application
	eventually(t, 3*time.Minute, "shop AwaitingApproval", func() bool {
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "shop"}, &app)
		return err == nil && meta.IsStatusConditionTrue(app.Status.Conditions, syncv1.ConditionAwaitingApproval)
	})
	kubeconfig := userKubeconfig(t, "carol", ns)
	approve := func() string {
		t.Helper()
		out, errOut, err := ksync(t, kubeconfig, "approve", "shop", "-n", ns, "--yes")
		if err != nil {
			t.Fatalf("ksync approve: %v\n%s%s", err, out, errOut)
		}
		return out
	}
	approve()
	waitHealthy(t, ns, "shop", "")
	rev := get(t, &syncv1.Revision{}, ns, get(t, &syncv1.Application{}, ns, "shop").Status.DesiredRevision)
	first := rev.Status.Plan.Digest

	out, errOut, err := ksync(t, kubeconfig, "approve", "shop", "-n", ns, "--yes")
	if err == nil || !strings.Contains(errOut, "is Healthy and waits for no approval") {
		t.Fatalf("ksync approve of a plan that rolled out: err %v\n%s%s\nwant a failure saying it waits for no approval", err, out, errOut)
	}

	kubectl(t, "-n", ns, "patch", "configmap", "settings", "--type=merge", "-p", `{"data":{"color":"red"}}`)
	edited := get(t, &corev1.ConfigMap{}, ns, "settings")
	eventually(t, 2*time.Minute, "a fresh plan of the correction waiting for approval", func() bool {
		rev = get(t, &syncv1.Revision{}, ns, rev.Name)
		return rev.Status.Phase == syncv1.PhaseAwaitingApproval && rev.Status.Plan != nil && rev.Status.Plan.Digest != first
	})
	correction := rev.Status.Plan
	if correction.Summary.Update != 1 || !strings.Contains(correction.Entries[0].Diff, "red") {
		t.Errorf("correction plan %+v, want one update from the hand-set red", correction)
	}
	eventually(t, time.Minute, "an ApprovalStale Event naming the correction", func() bool {
		var events corev1.EventList
		if err := env.Client.List(t.Context(), &events, client.InNamespace(ns)); err != nil {
			return false
		}
		for _, ev := range events.Items {
			if ev.Reason == syncv1.ReasonApprovalStale && strings.Contains(ev.Message, correction.Digest) && strings.Contains(ev.Message, "ConfigMap "+ns+"/settings") {
				return true
			}
		}
		return false
	})
	// Nothing was written to the ConfigMap before the approval, not even
	// the managed fields of the hand edit taken back.
	cm := get(t, &corev1.ConfigMap{}, ns, "settings")
	if cm.Data["color"] != "red" {
		t.Fatalf("color = %q before the correction was approved, want the hand-set red", cm.Data["color"])
	}
	if cm.ResourceVersion != edited.ResourceVersion || !equality.Semantic.DeepEqual(cm.ManagedFields, edited.ManagedFields) {
		t.Fatalf("ConfigMap settings written before the correction was approved: resourceVersion %s → %s, managed fields %v → %v",
			edited.ResourceVersion, cm.ResourceVersion, managers(edited.ManagedFields), managers(cm.ManagedFields))
	}

	if out := approve(); !strings.Contains(out, correction.Digest) {
		t.Errorf("ksync approve did not show the correction's digest %s:\n%s", correction.Digest, out)
	}
	eventually(t, 2*time.Minute, "the edit reverted under the fresh approval", func() bool {
		rev = get(t, &syncv1.Revision{}, ns, rev.Name)
		return rev.Status.Phase == syncv1.PhaseHealthy && get(t, &corev1.ConfigMap{}, ns, "settings").Data["color"] == "blue"
	})
	if a := rev.Status.Approval; a == nil || a.By != "carol" || a.Digest != correction.Digest || rev.Status.Attempt != 2 {
		t.Errorf("attempt %d, approval %+v; want attempt 2 under carol's approval of %s", rev.Status.Attempt, a, correction.Digest)
	}
	app = *get(t, &syncv1.Application{}, ns, "shop")
	if app.Annotations[syncv1.ApprovedDigestAnnotation] != correction.Digest || app.Annotations[syncv1.ApprovedByAnnotation] != "carol" {
		t.Errorf("approval records %v, want carol's of %s", app.Annotations, correction.Digest)
	}
	if h := app.Status.History; len(h) < 2 || h[0].Approval == nil || h[0].Approval.Digest != correction.Digest || h[1].Approval == nil || h[1].Approval.Digest != first {
		t.Errorf("history %+v, want the correction's approval over the first rollout's", h)
	}
}

// managers names the field managers of entries, with their operations.
func managers(entries []metav1.ManagedFieldsEntry) []string {
	var names []string
	for _, e := range entries {
		names = append(names, e.Manager+"/"+string(e.Operation))
	}
	return names
}
