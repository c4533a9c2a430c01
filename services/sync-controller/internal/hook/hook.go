// Package hook decides in which stage of a rollout a rendered object is
// applied, from Kuvryn Sync's own hook annotation and the Helm and Argo CD
// hook annotations it honours for migrations.
package hook

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/message"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/validation"
)

// Stage is where in a rollout an object is applied.
type Stage string

const (
	// PreSync hooks run, and must be Healthy, before the first wave.
	PreSync Stage = syncv1.HookPreSync
	// Sync is an ordinary object, applied in its wave.
	Sync Stage = "sync"
	// PostSync hooks run after the last wave and pruning.
	PostSync Stage = syncv1.HookPostSync
	// Skip marks an object that is never applied during a sync.
	Skip Stage = syncv1.HookSkip
)

// IsHook reports whether objects of stage s run as hooks rather than in a wave.
func IsHook(s Stage) bool {
	return s == PreSync || s == PostSync
}

// Values of helm.sh/hook. Helm lower-cases them, so do we.
var helmStages = map[string]Stage{
	"pre-install":   PreSync,
	"pre-upgrade":   PreSync,
	"post-install":  PostSync,
	"post-upgrade":  PostSync,
	"test":          Skip,
	"test-success":  Skip,
	"test-failure":  Skip,
	"pre-delete":    Skip,
	"post-delete":   Skip,
	"pre-rollback":  Skip,
	"post-rollback": Skip,
}

// Values of argocd.argoproj.io/hook, case-sensitive as in Argo CD.
var argoStages = map[string]Stage{
	"PreSync":    PreSync,
	"Sync":       Sync,
	"PostSync":   PostSync,
	"Skip":       Skip,
	"SyncFail":   Skip,
	"PreDelete":  Skip,
	"PostDelete": Skip,
}

var kuvrynStages = map[string]Stage{
	syncv1.HookPreSync:  PreSync,
	syncv1.HookPostSync: PostSync,
	syncv1.HookSkip:     Skip,
}

// source is one hook annotation Kuvryn Sync reads.
type source struct {
	annotation string
	stages     map[string]Stage
	// list is set when the value is a comma-separated list.
	list bool
	// normalise turns a written value into a key of stages.
	normalise func(string) string
	// want lists the accepted values for error messages.
	want string
}

// sources are read in this order; the first stage found is the one others
// are compared with in conflict messages.
var sources = []source{
	{syncv1.HookAnnotation, kuvrynStages, false, strings.TrimSpace,
		"pre-sync, post-sync or skip"},
	{syncv1.HelmHookAnnotation, helmStages, true, normaliseHelm,
		"pre-install, pre-upgrade, post-install, post-upgrade, or a test, delete or rollback hook"},
	{syncv1.ArgoHookAnnotation, argoStages, true, strings.TrimSpace,
		"PreSync, Sync, PostSync, Skip, SyncFail, PreDelete or PostDelete"},
}

// vote is the stage one hook annotation asks for.
type vote struct {
	annotation string
	value      string
	stage      Stage
}

// Classify returns the stage of obj. An object without hook annotations is
// Sync. An object that any hook annotation marks as skipped is Skip, because
// not applying an object its author excluded is the safe choice. Otherwise
// every hook annotation present must name the same stage.
//
// Errors are *validation.Error: an unknown value in any of the three
// annotations, even beside a skip value, or annotations (or the values of
// one list) naming different stages, which Kuvryn Sync cannot honour since a
// hook runs in one stage.
func Classify(obj *unstructured.Unstructured) (Stage, error) {
	annotations := obj.GetAnnotations()
	var votes []vote
	skip := false
	for _, src := range sources {
		value, ok := annotations[src.annotation]
		if !ok {
			continue
		}
		items := []string{value}
		if src.list {
			items = strings.Split(value, ",")
		}
		var stages []Stage
		for _, item := range items {
			stage, known := src.stages[src.normalise(item)]
			if !known {
				return "", &validation.Error{
					Object:     validation.Describe(obj),
					Annotation: src.annotation,
					Value:      value,
					Problem:    fmt.Sprintf("unknown value %q; want %s", message.Bound(strings.TrimSpace(item), validation.MaxValueBytes), src.want),
				}
			}
			if stage == Skip {
				skip = true
			}
			stages = append(stages, stage)
		}
		if skip {
			continue
		}
		for _, stage := range stages[1:] {
			if stage != stages[0] {
				return "", &validation.Error{
					Object:     validation.Describe(obj),
					Annotation: src.annotation,
					Value:      value,
					Problem:    fmt.Sprintf("names two stages, %s and %s; a hook runs in one stage", stages[0], stage),
				}
			}
		}
		votes = append(votes, vote{annotation: src.annotation, value: value, stage: stages[0]})
	}
	if skip {
		return Skip, nil
	}
	if len(votes) == 0 {
		return Sync, nil
	}
	for _, v := range votes[1:] {
		if v.stage != votes[0].stage {
			return "", &validation.Error{
				Object:     validation.Describe(obj),
				Annotation: v.annotation,
				Value:      v.value,
				Problem: fmt.Sprintf("stage %s conflicts with stage %s from annotation %s",
					v.stage, votes[0].stage, votes[0].annotation),
			}
		}
	}
	return votes[0].stage, nil
}

func normaliseHelm(s string) string {
	return strings.ToLower(strings.TrimSpace(s))
}
