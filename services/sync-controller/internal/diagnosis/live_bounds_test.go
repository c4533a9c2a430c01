package diagnosis

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/graph"
)

// TestRun_KeepsToTheGuidesBoundsOnManyPods diagnoses Applications with
// hundreds of Pods, each referring to a ConfigMap of its own, and counts
// the requests the diagnosis sends and the objects it reads.
func TestRun_KeepsToTheGuidesBoundsOnManyPods(t *testing.T) {
	tests := []struct {
		name string
		// busy Deployments select podsEach Pods apiece; idle ones select none.
		busy, podsEach, idle, services int
		// wantRead is how many objects the bounds let the diagnosis read in
		// all, wantPods how many Pods, wantReferenced how many referenced
		// objects; zero is not checked.
		wantRead, wantPods, wantReferenced int
	}{
		// 52 managed objects leave 448 of the 500 for ReplicaSets and
		// pages of Pods; nothing is left for references.
		{name: "600 Pods over six selectors stop at 500 objects", busy: 6, podsEach: 100, idle: 20, services: 25, wantRead: graph.MaxObjects},
		// One page of 100 Pods per selector; 200 referenced ConfigMaps of
		// which 100 are read.
		{name: "300 Pods under two selectors stop at 100 per list and 100 referenced", busy: 2, podsEach: 150, wantPods: 200, wantReferenced: 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ns := namespaceFor(t, nil)
			rev := manyPods(t, ns, tc.busy, tc.podsEach, tc.idle, tc.services)
			managed := len(rev.Status.Inventory.Entries)

			var requests atomic.Int64
			snap, err := graph.Collect(t.Context(), reader(t, ns, &requests), ns, graph.RootsOf(rev))
			must(t, err)

			selectors := min(tc.busy+tc.idle, graph.MaxSelectors)
			// A get per managed object, a ReplicaSet and a Pod list per
			// selector, an EndpointSlice list per Service, a get per
			// referenced object: the most the bounds allow.
			limit := managed + 2*selectors + min(tc.services, graph.MaxServiceSlices) + graph.MaxReferenced
			if n := requests.Load(); n > int64(limit) {
				t.Errorf("%d requests, more than the bounds allow (%d)", n, limit)
			}
			read := len(snap.ReplicaSets) + len(snap.Pods) + len(snap.EndpointSlices)
			referenced := 0
			for _, l := range snap.Managed {
				if l.Found != graph.Skipped {
					read++
				}
			}
			for _, l := range snap.Referenced {
				if l.Found != graph.Skipped {
					read++
					referenced++
				}
			}
			if read > graph.MaxObjects {
				t.Errorf("read %d objects, more than %d", read, graph.MaxObjects)
			}
			perSelector := map[string]int{}
			for _, p := range snap.Pods {
				perSelector[p.Labels["app"]]++
			}
			for app, n := range perSelector {
				if n > graph.MaxPerList {
					t.Errorf("read %d Pods of %s, more than %d per list", n, app, graph.MaxPerList)
				}
			}
			for _, check := range []struct {
				what      string
				got, want int
			}{{"objects", read, tc.wantRead}, {"Pods", len(snap.Pods), tc.wantPods}, {"referenced objects", referenced, tc.wantReferenced}} {
				if check.want != 0 && check.got != check.want {
					t.Errorf("read %d %s, want %d", check.got, check.what, check.want)
				}
			}
			if !snap.Truncated {
				t.Error("the read is not marked truncated")
			}
			t.Logf("%d managed objects, %d Pods: %d requests, %d objects read", managed, tc.busy*tc.podsEach, requests.Load(), read)

			d := Diagnose(snap)
			if len(d.Causes) == 0 || !d.Truncated {
				t.Errorf("diagnosis of a truncated read with a deleted ConfigMap: %+v", d)
			}
		})
	}
}

// manyPods creates busy Deployments (no replicas of their own) whose
// selectors match podsEach Pods apiece, idle Deployments, and Services
// over the busy selectors, and returns a Revision listing them.
func manyPods(t *testing.T, ns string, busy, podsEach, idle, services int) *syncv1.Revision {
	t.Helper()
	ctx := t.Context()
	rev := &syncv1.Revision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "many-1"}}
	rev.Status.Inventory = &syncv1.Inventory{}
	add := func(obj client.Object, group, kind string) {
		must(t, admin.Create(ctx, obj))
		rev.Status.Inventory.Entries = append(rev.Status.Inventory.Entries, strings.Join([]string{ns, obj.GetName(), group, kind, "v1"}, "_"))
	}
	dep := func(name string) *appsv1.Deployment {
		sel := map[string]string{"app": name}
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web"}}}},
		}}
	}
	for i := range busy {
		add(dep(fmt.Sprintf("web-%d", i)), "apps", "Deployment")
	}
	for i := range idle {
		add(dep(fmt.Sprintf("idle-%02d", i)), "apps", "Deployment")
	}
	for i := range services {
		add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("svc-%02d", i)}, Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": fmt.Sprintf("web-%d", i%busy)},
			Ports:    []corev1.ServicePort{{Port: 80}},
		}}, "", "Service")
	}
	// A ConfigMap the rollout applied and someone deleted gives the
	// diagnosis a cause to report, whatever the bounds left unread.
	rev.Status.Inventory.Entries = append(rev.Status.Inventory.Entries, strings.Join([]string{ns, "deleted", "", "ConfigMap", "v1"}, "_"))
	// The Pods name a scheduler that does not exist, so nothing schedules
	// or runs them (a node that does not exist would have them collected):
	// only their number matters. Eight writers keep creation short.
	var wg sync.WaitGroup
	errs := make(chan error, busy*podsEach)
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs <- admin.Create(context.Background(), &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("pod-%03d", i), Labels: map[string]string{"app": fmt.Sprintf("web-%d", i/podsEach)}},
					Spec: corev1.PodSpec{SchedulerName: "kuvryn-nobody", Containers: []corev1.Container{{Name: "app", Image: "web"}},
						Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: fmt.Sprintf("config-%03d", i)}}}}}},
				})
			}
		}()
	}
	for i := range busy * podsEach {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	return rev
}
