package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

func TestMetrics_AreServedWithTheGuidesLabels(t *testing.T) {
	s := State{Namespace: "payments", Sync: "Synced", Health: "Healthy", Phase: "Healthy"}
	ObserveReconcile(s, false, 20*time.Millisecond)
	ObserveReconcile(State{Namespace: "payments"}, true, time.Second)

	want := `
# HELP kuvryn_sync_application_reconcile_total Application reconciles by the Application's sync state, health state and phase after the reconcile, and result.
# TYPE kuvryn_sync_application_reconcile_total counter
kuvryn_sync_application_reconcile_total{health="Healthy",namespace="payments",phase="Healthy",result="success",sync="Synced"} 1
kuvryn_sync_application_reconcile_total{health="Unknown",namespace="payments",phase="Unknown",result="error",sync="Unknown"} 1
`
	if err := testutil.GatherAndCompare(ctrlmetrics.Registry, strings.NewReader(want),
		"kuvryn_sync_application_reconcile_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reconcileDuration, "kuvryn_sync_application_reconcile_duration_seconds"); n != 2 {
		t.Errorf("duration histogram has %d series, want 2", n)
	}
}
