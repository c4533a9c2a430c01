package transition

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestLedger_RecordIsBounded: the record keeps only what is still wanted,
// and of that the newest syncv1.MaxDeliveredNotifications.
func TestLedger_RecordIsBounded(t *testing.T) {
	app := types.NamespacedName{Namespace: "payments", Name: "api"}
	rev := []syncv1.Revision{{ObjectMeta: metav1.ObjectMeta{Name: "api-1", UID: "uid-1"},
		Status: state(syncv1.PhaseAwaitingApproval, 0, "AwaitingApproval=True@1")}}
	var want []Delivery
	for i := range syncv1.MaxDeliveredNotifications + 8 {
		want = append(want, deliveries(fmt.Sprintf("sink-%02d", i), Observe(rev))...)
	}
	for _, tc := range []struct {
		name      string
		wantLater []Delivery
		first     string
		length    int
	}{
		{"more delivered than the bound", want, "sink-08", syncv1.MaxDeliveredNotifications},
		{"only what is still wanted", want[30:35], "sink-30", 5},
		{"nothing wanted", nil, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLedger()
			for _, d := range l.Due(app, nil, want) {
				l.Delivered(app, d)
			}
			rec, n := l.Record(app, nil, tc.wantLater)
			if n != len(want) {
				t.Errorf("Record took in %d deliveries, want %d", n, len(want))
			}
			if len(rec) != tc.length || (len(rec) > 0 && rec[0].Sink != tc.first) {
				t.Fatalf("record of %d entries starting at %v, want %d starting at %s", len(rec), rec, tc.length, tc.first)
			}
			l.Recorded(app, rec, n)
			if _, n := l.Record(app, rec, tc.wantLater); n != 0 {
				t.Errorf("after Recorded, %d deliveries still to record", n)
			}
		})
	}
}
