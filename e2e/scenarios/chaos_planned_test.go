package scenarios_test

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// requireOnlyPlanned fails unless the Deployments and Jobs of ns, the kinds
// the chaos Application renders, are exactly the objects rev planned: a
// fault must not make a rollout apply anything its plan does not show, nor
// leave out anything it does.
func requireOnlyPlanned(t *testing.T, ns string, rev *syncv1.Revision) {
	t.Helper()
	var planned []string
	if rev.Status.Plan != nil {
		for _, e := range rev.Status.Plan.Entries {
			if e.Action != syncv1.ActionDelete {
				planned = append(planned, e.Kind+"/"+e.Name)
			}
		}
	}
	var live []string
	var deployments appsv1.DeploymentList
	if err := env.Client.List(t.Context(), &deployments, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, d := range deployments.Items {
		live = append(live, "Deployment/"+d.Name)
	}
	var jobs batchv1.JobList
	if err := env.Client.List(t.Context(), &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		live = append(live, "Job/"+j.Name)
	}
	slices.Sort(planned)
	slices.Sort(live)
	if !slices.Equal(planned, live) {
		t.Errorf("%s: live Deployments and Jobs %v, but Revision %s planned %v", ns, live, rev.Name, planned)
	}
}
