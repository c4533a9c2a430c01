package printers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func syncCell(s syncv1.SyncState) Cell {
	switch s {
	case syncv1.SyncStateSynced:
		return Cell{Text: string(s), Color: Green}
	case syncv1.SyncStateOutOfSync:
		return Cell{Text: string(s), Color: Yellow}
	}
	return Plain(string(s))
}

func healthCell(h syncv1.HealthState) Cell {
	switch h {
	case syncv1.HealthHealthy:
		return Cell{Text: string(h), Color: Green}
	case syncv1.HealthProgressing:
		return Cell{Text: string(h), Color: Yellow}
	case syncv1.HealthDegraded, syncv1.HealthMissing:
		return Cell{Text: string(h), Color: Red}
	}
	return Plain(string(h))
}

func phaseCell(p syncv1.RevisionPhase) Cell {
	switch p {
	case syncv1.PhaseHealthy:
		return Cell{Text: string(p), Color: Green}
	case syncv1.PhaseAwaitingApproval, syncv1.PhaseApplying, syncv1.PhaseRolledBack:
		return Cell{Text: string(p), Color: Yellow}
	case syncv1.PhaseFailed:
		return Cell{Text: string(p), Color: Red}
	}
	return Plain(string(p))
}

func conditionCell(conditions []metav1.Condition, conditionType string) Cell {
	for _, c := range conditions {
		if c.Type != conditionType {
			continue
		}
		switch c.Status {
		case metav1.ConditionTrue:
			return Cell{Text: string(c.Status), Color: Green}
		case metav1.ConditionFalse:
			return Cell{Text: string(c.Status), Color: Red}
		}
		return Plain(string(c.Status))
	}
	return Plain("")
}

func conditionMessage(conditions []metav1.Condition, conditionType string) string {
	for _, c := range conditions {
		if c.Type == conditionType {
			return c.Message
		}
	}
	return ""
}
