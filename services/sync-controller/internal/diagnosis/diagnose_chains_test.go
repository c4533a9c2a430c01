package diagnosis

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kuvryn/kuvryn-sync/pkg/graph"
)

func TestDiagnose_FollowsEachChainToItsRootCause(t *testing.T) {
	plain := corev1.PodSpec{Containers: []corev1.Container{appContainer()}}
	withConfig := corev1.PodSpec{
		Containers: []corev1.Container{appContainer()},
		Volumes:    []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}}},
	}
	withSecret := corev1.PodSpec{
		Containers: []corev1.Container{{Name: "app", Image: "web", Env: []corev1.EnvVar{{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}}}}},
	}
	withClaim := corev1.PodSpec{
		Containers: []corev1.Container{appContainer()},
		Volumes:    []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}},
	}
	withAccount := corev1.PodSpec{ServiceAccountName: "web-runner", Containers: []corev1.Container{appContainer()}}
	withProbe := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web", ReadinessProbe: &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}}}}}
	withInit := corev1.PodSpec{InitContainers: []corev1.Container{{Name: "migrate", Image: "migrate"}}, Containers: []corev1.Container{appContainer()}}

	deployment := func(spec corev1.PodSpec, pods ...corev1.Pod) *world {
		d, rs := unavailableDeployment(spec)
		return newWorld().managed("apps/v1", "Deployment", d, "").replicaSets(rs...).pods(pods...)
	}
	crashing := corev1.ContainerStatus{Name: "app", Image: "ghcr.io/acme/web:1.0.0", RestartCount: 4,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}
	pulling := corev1.ContainerStatus{Name: "app", Image: "ghcr.io/acme/web:9.9.9",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "manifest unknown"}}}
	creating := corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
	unready := corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}

	unschedulable := corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/3 nodes are available: 3 Insufficient memory.",
	}}}
	initFailing := notReady(corev1.PodPending)
	initFailing.InitContainerStatuses = []corev1.ContainerStatus{{Name: "migrate", RestartCount: 2,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}

	replicaFailure := func() *world {
		d, rs := unavailableDeployment(withAccount)
		rs[1].Status.Conditions = []appsv1.ReplicaSetCondition{{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
			Message: `pods "web-2-x" is forbidden: error looking up service account shop/web-runner: serviceaccount "web-runner" not found`}}
		return newWorld().managed("apps/v1", "Deployment", d, "").replicaSets(rs...).ref("", "ServiceAccount", ns, "web-runner", graph.Missing, nil, "")
	}

	service := func(targetPort intstr.IntOrString) corev1.Service {
		return corev1.Service{ObjectMeta: objMeta("web", "svc"), Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: targetPort}},
		}}
	}
	slice := func(ready bool, podName string) discoveryv1.EndpointSlice {
		return discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-abcde", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.5"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)},
				TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: podName}}},
		}
	}
	standalone := func(name string, status corev1.PodStatus) corev1.Pod {
		return corev1.Pod{ObjectMeta: objMeta(name, "p-"+name), Spec: plain, Status: status}
	}

	job := batchv1.Job{
		ObjectMeta: objMeta("migrate", "job"),
		Spec:       batchv1.JobSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": "job"}}, Template: template(plain)},
		Status: batchv1.JobStatus{Failed: 3, Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue,
			Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}}},
	}
	jobPod := corev1.Pod{ObjectMeta: objMeta("migrate-x7k2p", "jp", owner("Job", "migrate", "job")), Spec: plain, Status: corev1.PodStatus{
		Phase: corev1.PodFailed,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error"}}}},
	}}

	hpa := autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: objMeta("web", "hpa"), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web-api"}, MaxReplicas: 3}}

	statefulSet := appsv1.StatefulSet{ObjectMeta: objMeta("db", "sts"),
		Spec:   appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), Selector: webSelector, Template: template(withClaim)},
		Status: appsv1.StatefulSetStatus{Replicas: 1}}
	stsPod := corev1.Pod{ObjectMeta: objMeta("db-0", "db0", owner("StatefulSet", "db", "sts")), Spec: withClaim, Status: notReady(corev1.PodPending, creating)}
	pendingClaim := corev1.PersistentVolumeClaim{ObjectMeta: objMeta("data", "pvc"), Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("fast")},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}
	lostClaim := corev1.PersistentVolumeClaim{ObjectMeta: objMeta("data", "pvc"), Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-data"},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimLost}}

	tests := []struct {
		name  string
		world *world
		want  [][]string
	}{
		{
			name:  "a crash-looping container names its last exit code and OOMKilled",
			world: deployment(plain, pod("web-2-abc", plain, notReady(corev1.PodRunning, crashing))),
			want: [][]string{{
				"Deployment web: not available: 0 of 2 replicas available",
				"ReplicaSet web-2: 0 of 2 Pods ready",
				`Pod web-2-abc: Running, container "app" is crash-looping (CrashLoopBackOff): last exit code 137 (OOMKilled)`,
			}},
		},
		{
			name:  "an image that cannot be pulled names the image",
			world: deployment(plain, pod("web-2-abc", plain, notReady(corev1.PodPending, pulling))),
			want: [][]string{{
				"Deployment web: not available: 0 of 2 replicas available",
				"ReplicaSet web-2: 0 of 2 Pods ready",
				`Pod web-2-abc: Pending, container "app" cannot pull image ghcr.io/acme/web:9.9.9 (ImagePullBackOff)`,
			}},
		},
		{
			name:  "an unschedulable Pod quotes the scheduler",
			world: deployment(plain, pod("web-2-abc", plain, unschedulable)),
			want: [][]string{{
				"Deployment web: not available: 0 of 2 replicas available",
				"ReplicaSet web-2: 0 of 2 Pods ready",
				"Pod web-2-abc: Pending and unschedulable: Unschedulable: 0/3 nodes are available: 3 Insufficient memory.",
			}},
		},
		{
			name:  "a failing readiness probe names the probe",
			world: deployment(withProbe, pod("web-2-abc", withProbe, notReady(corev1.PodRunning, unready))),
			want: [][]string{{
				"Deployment web: not available: 0 of 2 replicas available",
				"ReplicaSet web-2: 0 of 2 Pods ready",
				`Pod web-2-abc: Running, container "app" is running but not ready: readiness probe failing (httpGet /healthz on port 8080)`,
			}},
		},
		{
			name:  "a failing init container names its exit code",
			world: deployment(withInit, pod("web-2-abc", withInit, initFailing)),
			want: [][]string{{
				"Deployment web: not available: 0 of 2 replicas available",
				"ReplicaSet web-2: 0 of 2 Pods ready",
				`Pod web-2-abc: Pending, init container "migrate" is crash-looping (CrashLoopBackOff): last exit code 1 (Error)`,
			}},
		},
		{
			name: "a missing ConfigMap is the root cause",
			world: deployment(withConfig, pod("web-2-abc", withConfig, notReady(corev1.PodPending, creating))).
				ref("", "ConfigMap", ns, "settings", graph.Missing, nil, ""),
			want: [][]string{{
				"Deployment web: not available: 0 of 2 replicas available",
				"ReplicaSet web-2: 0 of 2 Pods ready",
				`Pod web-2-abc: Pending, container "app" is waiting: ContainerCreating; it refers to ConfigMap settings in volume "config"`,
				"ConfigMap settings: not found",
			}},
		},
		{
			name: "a missing Secret is the root cause",
			world: deployment(withSecret, pod("web-2-abc", withSecret, notReady(corev1.PodPending, creating))).
				ref("", "Secret", ns, "db", graph.Missing, nil, ""),
			want: [][]string{{
				"Deployment web: not available: 0 of 2 replicas available",
				"ReplicaSet web-2: 0 of 2 Pods ready",
				`Pod web-2-abc: Pending, container "app" is waiting: ContainerCreating; it refers to Secret db in env DB_PASSWORD of container "app"`,
				"Secret db: not found",
			}},
		},
		{
			name:  "a missing ServiceAccount keeps the ReplicaSet from creating Pods",
			world: replicaFailure(),
			want: [][]string{{
				"Deployment web: not available: 0 of 2 replicas available",
				`ReplicaSet web-2: cannot create Pods: FailedCreate: pods "web-2-x" is forbidden: error looking up service account shop/web-runner: serviceaccount "web-runner" not found`,
				`ServiceAccount web-runner: not found; the Pod template refers to it in serviceAccountName`,
			}},
		},
		{
			name: "a Pending claim names its storage class",
			world: newWorld().managed("apps/v1", "StatefulSet", statefulSet, "").pods(stsPod).
				ref("", "PersistentVolumeClaim", ns, "data", graph.Present, pendingClaim, "v1"),
			want: [][]string{{
				"StatefulSet db: not available: 0 of 1 replicas ready",
				`Pod db-0: Pending, container "app" is waiting: ContainerCreating; it mounts data in volume "data"`,
				`PersistentVolumeClaim data: Pending: no PersistentVolume bound (storage class "fast")`,
			}},
		},
		{
			name: "a claim whose volume is gone leads to the volume",
			world: newWorld().managed("apps/v1", "StatefulSet", statefulSet, "").pods(stsPod).
				ref("", "PersistentVolumeClaim", ns, "data", graph.Present, lostClaim, "v1").
				ref("", "PersistentVolume", "", "pv-data", graph.Missing, nil, ""),
			want: [][]string{{
				"StatefulSet db: not available: 0 of 1 replicas ready",
				`Pod db-0: Pending, container "app" is waiting: ContainerCreating; it mounts data in volume "data"`,
				"PersistentVolumeClaim data: Lost, names volume pv-data",
				"PersistentVolume pv-data: not found",
			}},
		},
		{
			name:  "a Service whose selector matches no Pods",
			world: newWorld().managed("v1", "Service", service(intstr.FromString("http")), ""),
			want:  [][]string{{"Service web: selector app=web matches no Pods"}},
		},
		{
			name: "a Service whose target port no Pod exposes",
			world: newWorld().managed("v1", "Service", service(intstr.FromString("metrics")), "").
				pods(standalone("web-a", readyStatus())).slices(slice(true, "web-a")),
			want: [][]string{{`Service web: port "http" (80) targets port metrics, which none of the 1 selected Pods exposes`}},
		},
		{
			name: "a Service with no ready endpoints leads to the Pod",
			world: newWorld().managed("v1", "Service", service(intstr.FromInt32(8080)), "").
				pods(standalone("web-a", notReady(corev1.PodRunning, crashing))).slices(slice(false, "web-a")),
			want: [][]string{{
				"Service web: no ready endpoints in its EndpointSlices (selector app=web)",
				`Pod web-a: Running, container "app" is crash-looping (CrashLoopBackOff): last exit code 137 (OOMKilled)`,
			}},
		},
		{
			name: "a HorizontalPodAutoscaler whose target does not exist",
			world: newWorld().managed("autoscaling/v2", "HorizontalPodAutoscaler", hpa, "").
				ref("apps", "Deployment", ns, "web-api", graph.Missing, nil, ""),
			want: [][]string{{
				"HorizontalPodAutoscaler web: spec.scaleTargetRef names Deployment web-api, which does not exist",
				"Deployment web-api: not found",
			}},
		},
		{
			name:  "a failed hook Job names the hook and its Pod's exit code",
			world: newWorld().managed("batch/v1", "Job", job, "pre-sync").pods(jobPod),
			want: [][]string{{
				"Job migrate: pre-sync hook Job migrate failed: BackoffLimitExceeded: Job has reached the specified backoff limit",
				`Pod migrate-x7k2p: Failed, container "app" terminated with exit code 2 (Error)`,
			}},
		},
		{
			name:  "a managed object that is gone",
			world: newWorld().gone("", "v1", "ConfigMap", "settings"),
			want:  [][]string{{"ConfigMap settings: not found: the rollout applied it, but it no longer exists"}},
		},
		{
			name: "healthy objects have no cause",
			world: newWorld().managed("v1", "Service", service(intstr.FromInt32(8080)), "").
				pods(standalone("web-a", readyStatus())).slices(slice(true, "web-a")).
				managed("autoscaling/v2", "HorizontalPodAutoscaler", hpa, "").
				ref("apps", "Deployment", ns, "web-api", graph.Present, appsv1.Deployment{ObjectMeta: objMeta("web-api", "x")}, "apps/v1"),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Diagnose(tc.world.s)
			var got [][]string
			for _, c := range d.Causes {
				got = append(got, chain(c))
			}
			if !slices.EqualFunc(got, tc.want, slices.Equal[[]string]) {
				t.Errorf("causes:\n%s\nwant:\n%s", show(got), show(tc.want))
			}
			if len(tc.want) == 0 && d.Summary != "" {
				t.Errorf("summary %q for a healthy state", d.Summary)
			}
			if len(tc.want) > 0 && !strings.HasPrefix(d.Summary, "1 cause; first: ") {
				t.Errorf("summary %q", d.Summary)
			}
		})
	}
}

func show(causes [][]string) string {
	var b strings.Builder
	for _, c := range causes {
		b.WriteString("  -\n")
		for _, l := range c {
			b.WriteString("    " + l + "\n")
		}
	}
	return b.String()
}
