package diagnosis

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// deployment is a one-replica Deployment web whose Pods carry extra labels
// (a kwok Stage, say) and whose Pod spec is spec (indented YAML).
func deployment(name, labels, annotations, spec string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
spec:
  replicas: 1
  selector:
    matchLabels: {app: ` + name + `}
  template:
    metadata:
      labels: {app: ` + name + labels + `}
      annotations: {` + annotations + `}
    spec:
` + spec
}

const appSpec = `      containers:
      - name: app
        image: ghcr.io/acme/web:1.0.0
        ports: [{name: http, containerPort: 8080}]
`

// Pod and ReplicaSet names end in random hashes.
const (
	rsName  = `[a-z0-9]+`
	podName = `[a-z0-9-]+`
)

func TestRun_FindsEachChainOnALiveCluster(t *testing.T) {
	claim := `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  volumeName: pv-gone
  resources: {requests: {storage: 1Gi}}
---
` + deployment("web", ", stage.diagnosis.kuvryn.io: container-creating", "", appSpec+`      volumes:
      - name: data
        persistentVolumeClaim: {claimName: data}
`)
	tests := []struct {
		name      string
		manifests string
		// volumes grants get on PersistentVolumes with a ClusterRole.
		volumes bool
		want    [][]string
	}{
		{
			name: "Deployment -> ReplicaSet -> Pod crash-looping, OOMKilled",
			manifests: deployment("web", ", stage.diagnosis.kuvryn.io: crash-loop",
				`stage.diagnosis.kuvryn.io/exit-code: "137", stage.diagnosis.kuvryn.io/reason: OOMKilled`, appSpec),
			want: [][]string{{
				"Deployment web: not available: 0 of 1 replicas available",
				"ReplicaSet web-" + rsName + ": 0 of 1 Pods ready",
				`Pod web-` + podName + `: Running, container "app" is crash-looping \(CrashLoopBackOff\): last exit code 137 \(OOMKilled\)`,
			}},
		},
		{
			name:      "Deployment -> ReplicaSet -> Pod that cannot pull its image",
			manifests: deployment("web", ", stage.diagnosis.kuvryn.io: image-pull", "", appSpec),
			want: [][]string{{
				"Deployment web: not available: 0 of 1 replicas available",
				"ReplicaSet web-" + rsName + ": 0 of 1 Pods ready",
				`Pod web-` + podName + `: Pending, container "app" cannot pull image ghcr.io/acme/web:1.0.0 \(ImagePullBackOff\)`,
			}},
		},
		{
			name: "Deployment -> ReplicaSet -> unschedulable Pod, in the scheduler's words",
			manifests: deployment("web", "", "", `      nodeSelector: {kuvryn.io/no-such-node: "true"}
`+appSpec),
			want: [][]string{{
				"Deployment web: not available: 0 of 1 replicas available",
				"ReplicaSet web-" + rsName + ": 0 of 1 Pods ready",
				`Pod web-` + podName + `: Pending and unschedulable: Unschedulable: 0/1 nodes are available: 1 node\(s\) didn't match Pod's node affinity/selector.*`,
			}},
		},
		{
			name: "Deployment -> ReplicaSet -> Pod whose readiness probe fails",
			manifests: deployment("web", ", stage.diagnosis.kuvryn.io: not-ready", "", appSpec+`        readinessProbe:
          httpGet: {path: /healthz, port: 8080}
`),
			want: [][]string{{
				"Deployment web: not available: 0 of 1 replicas available",
				"ReplicaSet web-" + rsName + ": 0 of 1 Pods ready",
				`Pod web-` + podName + `: Running, container "app" is running but not ready: readiness probe failing \(httpGet /healthz on port 8080\)`,
			}},
		},
		{
			name: "Deployment -> ReplicaSet -> Pod whose init container fails",
			manifests: deployment("web", ", stage.diagnosis.kuvryn.io: init-crash", "", `      initContainers:
      - {name: migrate, image: ghcr.io/acme/migrate:1.0.0}
`+appSpec),
			want: [][]string{{
				"Deployment web: not available: 0 of 1 replicas available",
				"ReplicaSet web-" + rsName + ": 0 of 1 Pods ready",
				`Pod web-` + podName + `: Pending, init container "migrate" is crash-looping \(CrashLoopBackOff\): last exit code 1 \(Error\)`,
			}},
		},
		{
			name: "Deployment -> ReplicaSet -> Pod -> missing ConfigMap",
			manifests: deployment("web", ", stage.diagnosis.kuvryn.io: container-creating", "", appSpec+`      volumes:
      - name: config
        configMap: {name: settings}
`),
			want: [][]string{{
				"Deployment web: not available: 0 of 1 replicas available",
				"ReplicaSet web-" + rsName + ": 0 of 1 Pods ready",
				`Pod web-` + podName + `: Pending, container "app" is waiting: ContainerCreating; it refers to ConfigMap settings in volume "config"`,
				"ConfigMap settings: not found",
			}},
		},
		{
			// The test API server admits a Pod whose service account does
			// not exist (a cluster's admission refuses it, which the
			// engine's table tests cover as a ReplicaSet's ReplicaFailure).
			name: "Deployment -> ReplicaSet -> Pod -> missing ServiceAccount",
			manifests: deployment("web", ", stage.diagnosis.kuvryn.io: container-creating", "", `      serviceAccountName: web-runner
`+appSpec),
			want: [][]string{{
				"Deployment web: not available: 0 of 1 replicas available",
				"ReplicaSet web-" + rsName + ": 0 of 1 Pods ready",
				`Pod web-` + podName + `: Pending, container "app" is waiting: ContainerCreating; it refers to ServiceAccount web-runner in serviceAccountName`,
				"ServiceAccount web-runner: not found",
			}},
		},
		{
			name:      "Pod -> Pending claim -> missing PersistentVolume",
			manifests: claim,
			volumes:   true,
			want: [][]string{
				{"PersistentVolumeClaim data: Pending, names volume pv-gone", "PersistentVolume pv-gone: not found"},
				{
					"Deployment web: not available: 0 of 1 replicas available",
					"ReplicaSet web-" + rsName + ": 0 of 1 Pods ready",
					`Pod web-` + podName + `: Pending.*; it mounts data in volume "data"`,
					"PersistentVolumeClaim data: Pending, names volume pv-gone",
					"PersistentVolume pv-gone: not found",
				},
			},
		},
		{
			name:      "Pod -> Pending claim, its volume unreadable without the ClusterRole",
			manifests: claim,
			want: [][]string{
				{`PersistentVolumeClaim data: Pending: not bound to its volume pv-gone; the service account may not get persistentvolumes \(only a ClusterRole grants it\), so the diagnosis goes no deeper`},
				{
					"Deployment web: not available: 0 of 1 replicas available",
					"ReplicaSet web-" + rsName + ": 0 of 1 Pods ready",
					`Pod web-` + podName + `: Pending.*; it mounts data in volume "data"`,
					`PersistentVolumeClaim data: Pending: not bound to its volume pv-gone; the service account may not get persistentvolumes \(only a ClusterRole grants it\), so the diagnosis goes no deeper`,
				},
			},
		},
		{
			name: "Service whose selector matches no Pods",
			manifests: `apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: nothing-here}
  ports: [{port: 80, targetPort: 8080}]
`,
			want: [][]string{{"Service web: selector app=nothing-here matches no Pods"}},
		},
		{
			name: "Service -> no ready endpoints -> Pod not ready",
			manifests: `apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
---
` + deployment("web", ", stage.diagnosis.kuvryn.io: not-ready", "", appSpec),
			want: [][]string{
				{
					`Service web: no ready endpoints in its EndpointSlices \(selector app=web\)`,
					`Pod web-` + podName + `: Running, container "app" is running but not ready: not ready`,
				},
				{
					"Deployment web: not available: 0 of 1 replicas available",
					"ReplicaSet web-" + rsName + ": 0 of 1 Pods ready",
					`Pod web-` + podName + `: Running, container "app" is running but not ready: not ready`,
				},
			},
		},
		{
			name: "Service whose target port no Pod exposes",
			manifests: `apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: metrics}]
---
` + deployment("web", "", "", appSpec),
			want: [][]string{{`Service web: port "http" \(80\) targets port metrics, which none of the 1 selected Pods exposes`}},
		},
		{
			name: "HorizontalPodAutoscaler -> missing target",
			manifests: `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: StatefulSet, name: web-db}
  minReplicas: 1
  maxReplicas: 3
`,
			want: [][]string{{
				"HorizontalPodAutoscaler web: spec.scaleTargetRef names StatefulSet web-db, which does not exist",
				"StatefulSet web-db: not found",
			}},
		},
		{
			name: "failed pre-sync hook Job -> its Pod's exit code",
			manifests: `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {test.kuvryn.io/hook: pre-sync}
spec:
  backoffLimit: 0
  template:
    metadata:
      labels: {stage.diagnosis.kuvryn.io: fail}
      annotations: {stage.diagnosis.kuvryn.io/exit-code: "2"}
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: ghcr.io/acme/migrate:1.0.0}]
`,
			want: [][]string{{
				"Job migrate: pre-sync hook Job migrate failed: BackoffLimitExceeded: Job has reached the specified backoff limit",
				`Pod migrate-` + podName + `: Failed, container "migrate" terminated with exit code 2 \(Error\)`,
			}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ns := namespaceFor(t, nil)
			if tc.volumes {
				grantVolumes(t, ns)
			}
			rev := create(t, ns, tc.manifests)
			waitForCauses(t, reader(t, ns, nil), rev, tc.want)
		})
	}
}

func TestRun_AnAccountThatMayNotListPodsGetsAShallowerDiagnosis(t *testing.T) {
	var rules []rbacv1.PolicyRule
	for _, r := range guideRules() {
		switch {
		case len(r.Resources) == 1 && r.Resources[0] == "pods":
			continue
		case r.Resources[0] == "configmaps":
			r.Resources = []string{"configmaps", "serviceaccounts", "persistentvolumeclaims", "services"}
		}
		rules = append(rules, r)
	}
	ns := namespaceFor(t, rules)
	rev := create(t, ns, deployment("web", ", stage.diagnosis.kuvryn.io: container-creating", "", appSpec+`        envFrom:
        - secretRef: {name: db-credentials}
`))
	d := waitForCauses(t, reader(t, ns, nil), rev, [][]string{{
		"Deployment web: not available: 0 of 1 replicas available",
		"ReplicaSet web-" + rsName + ": 0 of 1 Pods ready; the service account may not list pods in namespace " + ns + ", so the diagnosis goes no deeper",
	}})
	if strings.Contains(d.Summary, "db-credentials") {
		t.Errorf("the Secret the account may not get is blamed: %s", d.Summary)
	}
}
