package ssa_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

func TestConditions_KeepsTransitionTimeAndOnlyOwnTypes(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	existing := []metav1.Condition{
		{Type: "Rendered", Status: metav1.ConditionTrue, Reason: "Succeeded", LastTransitionTime: then},
		{Type: "Healthy", Status: metav1.ConditionTrue, Reason: "Succeeded", LastTransitionTime: then},
	}
	cases := []struct {
		name           string
		update         metav1.Condition
		wantTransition bool
	}{
		{"same status keeps the transition time", metav1.Condition{Type: "Rendered", Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "again"}, false},
		{"new status moves the transition time", metav1.Condition{Type: "Rendered", Status: metav1.ConditionFalse, Reason: "RenderFailed"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ssa.Conditions(existing, []string{"Rendered"}, tc.update)
			if len(got) != 1 || got[0].Type != "Rendered" {
				t.Fatalf("got %+v, want only Rendered", got)
			}
			if moved := !got[0].LastTransitionTime.Equal(&then); moved != tc.wantTransition {
				t.Errorf("transition time moved = %v, want %v", moved, tc.wantTransition)
			}
			if got[0].Reason != tc.update.Reason || got[0].Message != tc.update.Message {
				t.Errorf("condition not updated: %+v", got[0])
			}
		})
	}
	if existing[0].Message != "" {
		t.Error("existing conditions were modified")
	}
}
