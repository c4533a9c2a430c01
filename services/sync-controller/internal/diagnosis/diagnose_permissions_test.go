package diagnosis

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kuvryn/kuvryn-sync/pkg/graph"
)

func TestDiagnose_WhatTheAccountMayNotReadGoesLessDeepAndIsNeverBlamed(t *testing.T) {
	withSecret := corev1.PodSpec{
		Containers: []corev1.Container{{Name: "app", Image: "web", EnvFrom: []corev1.EnvFromSource{{
			SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}}}}}},
	}
	creating := corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
	deployment := func() *world {
		d, rs := unavailableDeployment(withSecret)
		return newWorld().managed("apps/v1", "Deployment", d, "").replicaSets(rs...)
	}
	tests := []struct {
		name  string
		world *world
		want  []string
	}{
		{
			name:  "without list pods the chain stops at the ReplicaSet and names the list",
			world: deployment().deny("list pods"),
			want: []string{
				"Deployment web: not available: 0 of 2 replicas available",
				"ReplicaSet web-2: 0 of 2 Pods ready; the service account may not list pods in namespace shop, so the diagnosis goes no deeper",
			},
		},
		{
			name: "without list replicasets the chain stops at the Deployment and names the list",
			world: func() *world {
				d, _ := unavailableDeployment(withSecret)
				return newWorld().managed("apps/v1", "Deployment", d, "").deny("list replicasets", "list pods")
			}(),
			want: []string{
				"Deployment web: not available: 0 of 2 replicas available; the service account may not list replicasets in namespace shop, so the diagnosis goes no deeper",
			},
		},
		{
			name: "a Secret it may not get is not blamed",
			world: deployment().pods(pod("web-2-abc", withSecret, notReady(corev1.PodPending, creating))).
				ref("", "Secret", ns, "db", graph.Denied, nil, "").deny("get secrets"),
			want: []string{
				"Deployment web: not available: 0 of 2 replicas available",
				"ReplicaSet web-2: 0 of 2 Pods ready",
				`Pod web-2-abc: Pending, container "app" is waiting: ContainerCreating`,
			},
		},
		{
			name: "a Secret a bound kept unread is not blamed",
			world: deployment().pods(pod("web-2-abc", withSecret, notReady(corev1.PodPending, creating))).
				ref("", "Secret", ns, "db", graph.Skipped, nil, ""),
			want: []string{
				"Deployment web: not available: 0 of 2 replicas available",
				"ReplicaSet web-2: 0 of 2 Pods ready",
				`Pod web-2-abc: Pending, container "app" is waiting: ContainerCreating`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Diagnose(tc.world.s)
			if len(d.Causes) != 1 || !slices.Equal(chain(d.Causes[0]), tc.want) {
				var got [][]string
				for _, c := range d.Causes {
					got = append(got, chain(c))
				}
				t.Errorf("causes:\n%s\nwant:\n%s", show(got), show([][]string{tc.want}))
			}
		})
	}
}
