package main

import "strconv"

// exampleRepository is the Git repository the demo serves: four
// Applications declared in .ksync.yaml — plain YAML, a Kustomize overlay, a
// Helm chart with hooks and waves, and one that waits for manual approval.
var exampleRepository = map[string]string{
	".ksync.yaml": `applications:
  - metadata: {name: guestbook}
    spec:
      source: {path: apps/guestbook}
      destination: {namespace: demo}
      serviceAccountName: deployer
      sync: {automatic: true}
  - metadata: {name: frontend}
    spec:
      source: {path: apps/frontend/overlays/demo, render: {type: kustomize}}
      destination: {namespace: demo}
      serviceAccountName: deployer
      sync: {automatic: true}
  - metadata: {name: api}
    spec:
      source:
        path: apps/api
        render:
          type: helm
          helm: {valuesFiles: [values-demo.yaml], values: {replicaCount: 2}}
      destination: {namespace: demo}
      serviceAccountName: deployer
      sync: {automatic: true}
  - metadata: {name: payments}
    spec:
      source: {path: apps/payments}
      destination: {namespace: demo}
      serviceAccountName: deployer
      sync: {automatic: false}
      notifications:
        - sinkRef: {name: audit}
          events: [AwaitingApproval, Healthy, Failed, RolledBack]
`,
	"apps/guestbook/deployment.yaml": deployment("guestbook", "guestbook:1.0", 1),
	"apps/guestbook/service.yaml": `apiVersion: v1
kind: Service
metadata: {name: guestbook}
spec:
  selector: {app: guestbook}
  ports: [{port: 80, targetPort: 8080}]
`,
	"apps/frontend/base/kustomization.yaml": "resources: [deployment.yaml]\n",
	"apps/frontend/base/deployment.yaml":    deployment("frontend", "frontend:1.0", 1),
	"apps/frontend/overlays/demo/kustomization.yaml": `resources: [../../base]
labels:
  - pairs: {env: demo}
replicas:
  - name: frontend
    count: 2
`,
	"apps/api/Chart.yaml":       "apiVersion: v2\nname: api\nversion: 0.1.0\n",
	"apps/api/values.yaml":      "replicaCount: 1\nimage: api:1.0\ngreeting: hello\n",
	"apps/api/values-demo.yaml": "greeting: hello from the demo\n",
	"apps/api/templates/migrate.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-migrate
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: "{{ .Values.image }}", args: [migrate]}]
`,
	"apps/api/templates/config.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
  annotations:
    sync.kuvryn.io/sync-wave: "-1"
data:
  greeting: {{ .Values.greeting | quote }}
`,
	"apps/api/templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicaCount }}
  selector: {matchLabels: {app: {{ .Release.Name }}}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}}}
    spec:
      containers: [{name: api, image: "{{ .Values.image }}"}]
`,
	"apps/api/templates/smoke-test.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-smoke-test
  annotations:
    sync.kuvryn.io/hook: post-sync
    sync.kuvryn.io/sync-wave: "1"
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: smoke, image: "{{ .Values.image }}", args: [smoke-test]}]
`,
	"apps/payments/deployment.yaml": deployment("payments", "payments:1.0", 1),
}

func deployment(name, image string, replicas int) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata: {name: ` + name + `}
spec:
  replicas: ` + strconv.Itoa(replicas) + `
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + `}}
    spec:
      containers: [{name: ` + name + `, image: "` + image + `"}]
`
}
