package commands

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func crashLoopDiagnosis() *syncv1.Diagnosis {
	return &syncv1.Diagnosis{
		Summary: `1 cause; first: Pod diagnose/api-5d8f-x2x9q: Running, container "app" is crash-looping (CrashLoopBackOff): last exit code 137 (OOMKilled)`,
		Causes: []syncv1.Cause{{Chain: []syncv1.CauseLink{
			{ObjectRef: syncv1.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "diagnose", Name: "api"}, Message: "not available: 0 of 2 replicas available"},
			{ObjectRef: syncv1.ObjectRef{Group: "apps", Version: "v1", Kind: "ReplicaSet", Namespace: "diagnose", Name: "api-5d8f"}, Message: "0 of 2 Pods ready"},
			{ObjectRef: syncv1.ObjectRef{Version: "v1", Kind: "Pod", Namespace: "diagnose", Name: "api-5d8f-x2x9q"},
				Message: `Running, container "app" is crash-looping (CrashLoopBackOff): last exit code 137 (OOMKilled)`},
		}}},
	}
}

func TestDiagnose_PrintsTheChainsAndFailsWhileUnhealthy(t *testing.T) {
	ns := namespace(t, "diagnose", nil)
	app := application(ns, "api")
	app.Status.DesiredRevision = "api-2"
	app.Status.Health = syncv1.HealthDegraded
	createApplication(t, app)
	healthy := application(ns, "web")
	healthy.Status.DesiredRevision = "web-1"
	healthy.Status.Health = syncv1.HealthHealthy
	createApplication(t, healthy)
	createRevision(t, ns, "api", "api-2", syncv1.RevisionStatus{
		Phase: syncv1.PhaseFailed,
		Conditions: []metav1.Condition{{
			Type: syncv1.ConditionRolloutComplete, Status: metav1.ConditionFalse, Reason: syncv1.ReasonHealthFailure,
			Message: "Deployment.apps diagnose/api is Degraded: Progress deadline exceeded", LastTransitionTime: *ts("2026-12-03T06:00:00Z"),
		}},
		Diagnosis: crashLoopDiagnosis(),
	})
	createRevision(t, ns, "web", "web-1", syncv1.RevisionStatus{Phase: syncv1.PhaseHealthy})

	t.Run("prints the failure and each chain, and exits 1", func(t *testing.T) {
		r := ksync(t, "diagnose", "api", "-n", ns)
		r.expect(t, exitFailed)
		golden(t, "diagnose", r.stdout)
		if want := "ksync: Application diagnose/api is not Healthy (health Degraded)\n"; r.stderr != want {
			t.Errorf("stderr %q, want %q", r.stderr, want)
		}
	})
	t.Run("as JSON, and exits 1", func(t *testing.T) {
		r := ksync(t, "diagnose", "api", "-n", ns, "-o", "json")
		r.expect(t, exitFailed)
		var got diagnoseExport
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("-o json is not JSON: %v\n%s", err, r.stdout)
		}
		if got.Revision != "api-2" || got.Health != syncv1.HealthDegraded || got.Failure == nil || got.Failure.Reason != syncv1.ReasonHealthFailure ||
			got.Diagnosis == nil || len(got.Diagnosis.Causes) != 1 || len(got.Diagnosis.Causes[0].Chain) != 3 {
			t.Errorf("export %+v", got)
		}
	})
	t.Run("as YAML", func(t *testing.T) {
		r := ksync(t, "diagnose", "api", "-n", ns, "-o", "yaml")
		r.expect(t, exitFailed)
		var got diagnoseExport
		if err := yaml.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("-o yaml is not YAML: %v\n%s", err, r.stdout)
		}
		if got.Diagnosis == nil || !equality.Semantic.DeepEqual(*got.Diagnosis, *crashLoopDiagnosis()) {
			t.Errorf("diagnosis in -o yaml:\n%s", r.stdout)
		}
	})
	t.Run("of a Healthy Application, exits 0", func(t *testing.T) {
		r := ksync(t, "diagnose", "web", "-n", ns)
		r.expect(t, 0)
		if !strings.Contains(r.stdout, "Diagnosis:    none") || r.stderr != "" {
			t.Errorf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		}
	})
	t.Run("refuses an unknown output format", func(t *testing.T) {
		r := ksync(t, "diagnose", "api", "-n", ns, "-o", "dot")
		r.expect(t, exitUsage)
	})
}
