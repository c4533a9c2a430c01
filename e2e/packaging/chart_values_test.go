package packaging_test

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestChart_ValuesReachTheManifests renders the chart with each documented
// value set and checks it lands where docs/install.md says.
func TestChart_ValuesReachTheManifests(t *testing.T) {
	const caPEM = "-----BEGIN CERTIFICATE-----\nMIIBexample\n-----END CERTIFICATE-----\n"
	appVersion := loadChart(t).Metadata.AppVersion
	cases := []struct {
		name   string
		values string
		check  func(t *testing.T, objs []*unstructured.Unstructured)
	}{{
		name: "a service's image repository and tag replace the defaults for it alone",
		values: `sourceController:
  image: {repository: registry.example.com/kuvryn/source, tag: v9.9.9, pullPolicy: Always}
`,
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			src := manager(t, deployment(t, objs, "source-controller"))
			wantEqual(t, "source image", src["image"], "registry.example.com/kuvryn/source:v9.9.9")
			wantEqual(t, "source pull policy", src["imagePullPolicy"], "Always")
			wantEqual(t, "image-controller image", manager(t, deployment(t, objs, "image-controller"))["image"],
				publishedRegistry+"/kuvryn-sync-source:"+appVersion)
		},
	}, {
		name:   "image.registry moves every service's image to a mirror, tags kept",
		values: "image: {registry: registry.example.com/mirror}\nweb: {enabled: true}\nsyncController: {image: {tag: v9.9.9}}\n",
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			for _, s := range services {
				tag := appVersion
				if s.name == "sync-controller" {
					tag = "v9.9.9"
				}
				wantEqual(t, s.name+" image", manager(t, deployment(t, objs, s.name))["image"],
					"registry.example.com/mirror/kuvryn-sync-"+imageOf[s.name]+":"+tag)
			}
		},
	}, {
		name:   "by default, as the guide shows, two replicas of every service elect a leader",
		values: enabledValues(allServices()),
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			for _, s := range services {
				d := deployment(t, objs, s.name)
				wantEqual(t, s.name+" replicas", field(d.Object, "spec", "replicas"), 2)
				args := stringsAt(t, manager(t, d), "args")
				for _, want := range []string{"--leader-elect", "--leader-election-id=" + chartPrefix + s.chartSuffix} {
					if !slices.Contains(args, want) {
						t.Errorf("%s args %v lack %s", s.name, args, want)
					}
				}
			}
		},
	}, {
		name: "top-level resources reach every service, whose own resources win key by key",
		values: `resources: {requests: {ephemeral-storage: 1Gi}, limits: {ephemeral-storage: 2Gi, memory: 3Gi}}
notifyController:
  resources: {limits: {memory: 300Mi}}
`,
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			for _, s := range services[:4] {
				res := field(manager(t, deployment(t, objs, s.name)), "resources")
				wantEqual(t, s.name+" ephemeral-storage request", field(res.(map[string]any), "requests", "ephemeral-storage"), "1Gi")
				wantEqual(t, s.name+" ephemeral-storage limit", field(res.(map[string]any), "limits", "ephemeral-storage"), "2Gi")
			}
			src := field(manager(t, deployment(t, objs, "source-controller")), "resources").(map[string]any)
			wantEqual(t, "source memory limit, its own", field(src, "limits", "memory"), "1Gi")
			wantEqual(t, "source cpu request, its own", field(src, "requests", "cpu"), "100m")
			notify := field(manager(t, deployment(t, objs, "notify-controller")), "resources").(map[string]any)
			wantEqual(t, "notify memory limit, its own override", field(notify, "limits", "memory"), "300Mi")
		},
	}, {
		name:   "webhookReceiver.enabled runs the web service with the receiver flag and Service",
		values: "webhookReceiver: {enabled: true}\n",
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			args := stringsAt(t, manager(t, deployment(t, objs, "web")), "args")
			if !slices.Contains(args, "--webhook-receiver-bind-address=:9292") {
				t.Errorf("web args %v lack the receiver flag", args)
			}
			if find(objs, "Service", chartPrefix+"-receiver") == nil {
				t.Errorf("no Service %s-receiver", chartPrefix)
			}
		},
	}, {
		name:   "console.enabled runs the web service with the console listener and a session Secret named after the release",
		values: "console: {enabled: true}\n",
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			web := manager(t, deployment(t, objs, "web"))
			args := stringsAt(t, web, "args")
			for _, want := range []string{"--console-bind-address=:8080",
				"--console-session-secret=" + systemNamespace + "/" + chartPrefix + "-web-console-session"} {
				if !slices.Contains(args, want) {
					t.Errorf("web args %v lack %s", args, want)
				}
			}
			if slices.Contains(args, "--webhook-receiver-bind-address=:9292") {
				t.Errorf("web args %v have the receiver, which webhookReceiver.enabled turns on", args)
			}
		},
	}, {
		name:   "webhookReceiver.enabled alone runs the web service without the console",
		values: "webhookReceiver: {enabled: true}\n",
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			for _, a := range stringsAt(t, manager(t, deployment(t, objs, "web")), "args") {
				if strings.HasPrefix(a, "--console-") {
					t.Errorf("web passes %s without console.enabled", a)
				}
			}
		},
	}, {
		name:   "replicaCount sets every service and a service's replicas wins",
		values: "replicaCount: 4\nsyncController: {replicas: 3}\nnotifyController: {replicas: 0}\n",
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			wantEqual(t, "source replicas", field(deployment(t, objs, "source-controller").Object, "spec", "replicas"), 4)
			wantEqual(t, "sync replicas", field(deployment(t, objs, "sync-controller").Object, "spec", "replicas"), 3)
			wantEqual(t, "notify replicas", field(deployment(t, objs, "notify-controller").Object, "spec", "replicas"), 0)
		},
	}, {
		name:   "leaderElection false drops --leader-elect except where a service turns it on",
		values: "leaderElection: false\nsyncController: {leaderElection: true}\n",
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			if args := stringsAt(t, manager(t, deployment(t, objs, "source-controller")), "args"); slices.Contains(args, "--leader-elect") {
				t.Errorf("source-controller args %v keep --leader-elect", args)
			}
			if args := stringsAt(t, manager(t, deployment(t, objs, "sync-controller")), "args"); !slices.Contains(args, "--leader-elect") {
				t.Errorf("sync-controller args %v lack --leader-elect", args)
			}
		},
	}, {
		name: "extraEnv reaches every service, before a service's own extraEnv",
		values: `extraEnv: [{name: OTEL_EXPORTER_OTLP_ENDPOINT, value: "http://otel.example.com:4317"}]
notifyController:
  extraEnv: [{name: OTEL_SERVICE_NAME, value: kuvryn-notify}]
`,
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			wantEqual(t, "source env", envOf(t, deployment(t, objs, "source-controller")),
				[]string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://otel.example.com:4317"})
			wantEqual(t, "notify env", envOf(t, deployment(t, objs, "notify-controller")),
				[]string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://otel.example.com:4317", "OTEL_SERVICE_NAME=kuvryn-notify"})
		},
	}, {
		name:   "extraArgs follow the chart's flags",
		values: "imageController: {extraArgs: [--zap-log-level=debug]}\n",
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			args := stringsAt(t, manager(t, deployment(t, objs, "image-controller")), "args")
			wantEqual(t, "last image-controller arg", args[len(args)-1], "--zap-log-level=debug")
		},
	}, {
		name: "a service's own scheduling wins over the chart-wide one",
		values: `nodeSelector: {disk: ssd}
tolerations: [{key: dedicated, operator: Exists, effect: NoSchedule}]
syncController:
  nodeSelector: {pool: control}
  affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app.kubernetes.io/component: sync-controller}}}}]}}
`,
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			src, syn := deployment(t, objs, "source-controller"), deployment(t, objs, "sync-controller")
			wantEqual(t, "source nodeSelector", field(src.Object, "spec", "template", "spec", "nodeSelector"), map[string]any{"disk": "ssd"})
			wantEqual(t, "sync nodeSelector", field(syn.Object, "spec", "template", "spec", "nodeSelector"), map[string]any{"pool": "control"})
			if field(syn.Object, "spec", "template", "spec", "tolerations") == nil || field(syn.Object, "spec", "template", "spec", "affinity") == nil {
				t.Errorf("sync-controller lost the chart-wide tolerations or its own affinity: %v", field(syn.Object, "spec", "template", "spec"))
			}
			if field(src.Object, "spec", "template", "spec", "affinity") != nil {
				t.Errorf("source-controller got the sync-controller's affinity")
			}
		},
	}, {
		name:   "the source cache takes a size limit and resources an ephemeral-storage limit",
		values: "sourceController:\n  resources: {limits: {ephemeral-storage: 2Gi}}\n  sourceCache: {sizeLimit: 1Gi}\n",
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			d := deployment(t, objs, "source-controller")
			wantEqual(t, "source-cache volume", volume(d, "source-cache"), map[string]any{"name": "source-cache", "emptyDir": map[string]any{"sizeLimit": "1Gi"}})
			wantEqual(t, "ephemeral-storage limit", field(manager(t, d), "resources", "limits", "ephemeral-storage"), "2Gi")
		},
	}, {
		name:   "the guide's top-level sync-controller values become its flags",
		values: "defaultServiceAccount: deployer\ndriftResyncInterval: \"0\"\nretryInterval: 1m\n",
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			args := stringsAt(t, manager(t, deployment(t, objs, "sync-controller")), "args")
			for _, want := range []string{"--default-service-account=deployer", "--drift-resync-interval=0", "--retry-interval=1m"} {
				if !slices.Contains(args, want) {
					t.Errorf("sync-controller args %v lack %s", args, want)
				}
			}
		},
	}, {
		name:   "the webhook certificate Secret is mounted at --webhook-cert-path",
		values: "syncController: {webhook: {certSecretName: my-webhook-cert}}\n",
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			d := deployment(t, objs, "sync-controller")
			wantEqual(t, "webhook-cert Secret", field(volume(d, "webhook-cert"), "secret", "secretName"), "my-webhook-cert")
			c := manager(t, d)
			mounts, _, _ := unstructured.NestedSlice(c, "volumeMounts")
			var path string
			for _, m := range mounts {
				if m := m.(map[string]any); m["name"] == "webhook-cert" {
					path = fmt.Sprint(m["mountPath"])
				}
			}
			if args := stringsAt(t, c, "args"); path == "" || !slices.Contains(args, "--webhook-cert-path="+path) {
				t.Errorf("webhook-cert mounted at %q, args %v", path, args)
			}
		},
	}, {
		name:   "webhook disabled sets ENABLE_WEBHOOKS=false and mounts no certificate",
		values: "syncController: {webhook: {enabled: false}}\n",
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			d := deployment(t, objs, "sync-controller")
			wantEqual(t, "sync env", envOf(t, d), []string{"ENABLE_WEBHOOKS=false"})
			if volume(d, "webhook-cert") != nil {
				t.Errorf("webhook-cert volume still mounted")
			}
			for _, a := range stringsAt(t, manager(t, d), "args") {
				if strings.HasPrefix(a, "--webhook-") {
					t.Errorf("sync-controller still passes %s", a)
				}
			}
		},
	}, {
		name: "caBundle and annotations reach both webhook configurations",
		values: fmt.Sprintf("syncController:\n  webhook:\n    caBundle: %q\n    annotations: {cert-manager.io/inject-ca-from: %s/kuvryn-sync-webhook}\n",
			caPEM, systemNamespace),
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
				w := find(objs, kind, chartPrefix+"-application")
				if w == nil {
					t.Fatalf("no %s rendered", kind)
				}
				wantEqual(t, kind+" annotation", w.GetAnnotations()["cert-manager.io/inject-ca-from"], systemNamespace+"/kuvryn-sync-webhook")
				hooks, _, _ := unstructured.NestedSlice(w.Object, "webhooks")
				wantEqual(t, kind+" caBundle", field(hooks[0].(map[string]any), "clientConfig", "caBundle"),
					base64.StdEncoding.EncodeToString([]byte(caPEM)))
			}
		},
	}, {
		name:   "imagePullSecrets reach every Pod",
		values: "imagePullSecrets: [{name: registry-credentials}]\n",
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			for _, d := range ofKind(objs, "Deployment") {
				wantEqual(t, d.GetName()+" imagePullSecrets", field(d.Object, "spec", "template", "spec", "imagePullSecrets"),
					[]any{map[string]any{"name": "registry-credentials"}})
			}
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, mustRenderChart(t, tc.values))
		})
	}
}

// TestChart_RefusesValuesTheSchemaDoesNotKnow: values.schema.json turns a
// misspelt or mistyped value into an error naming it, instead of a chart
// that silently ignores it.
func TestChart_RefusesValuesTheSchemaDoesNotKnow(t *testing.T) {
	checkRefused(t, []refusedValues{
		{"a misspelt service key", "syncController: {replica: 2}\n", "replica"},
		{"a webhookReceiver key the guide does not name", "webhookReceiver: {port: 9292}\n", "port"},
		{"resources that are not a map", "resources: 100m\n", "resources"},
		{"an interval given as a number, which would drop the flag", "driftResyncInterval: 0\n", "driftResyncInterval"},
		{"an interval that is not a Go duration", "retryInterval: 30 seconds\n", "retryInterval"},
		{"replicas given as a string", "replicaCount: \"2\"\n", "replicaCount"},
		{"an unknown image pull policy", "web: {image: {repository: registry.example.com/kuvryn-sync-web, pullPolicy: Sometimes}}\n", "pullPolicy"},
		{"an image registry ending in a slash, which would double it", "image: {registry: registry.example.com/}\n", "registry"},
		{"a misspelt key of the chart-wide image", "image: {repositoryPrefix: registry.example.com}\n", "repositoryPrefix"},
	})
}

// refusedValues are values the chart must refuse with an error saying
// wantInError.
type refusedValues struct{ name, values, wantInError string }

func checkRefused(t *testing.T, cases []refusedValues) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderChart(t, tc.values)
			if err == nil {
				t.Fatalf("values\n%s were accepted", tc.values)
			}
			if !strings.Contains(err.Error(), tc.wantInError) {
				t.Fatalf("error does not say %q: %v", tc.wantInError, err)
			}
		})
	}
}
