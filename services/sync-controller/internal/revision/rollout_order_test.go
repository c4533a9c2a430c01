package revision

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

var (
	jobGVK        = schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}
	configMapGVK  = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	serviceGVK    = schema.GroupVersionKind{Version: "v1", Kind: "Service"}
)

const migrateJob = `
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    sync.kuvryn.io/hook: pre-sync
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: migrate:1
`

const smokeJob = `
apiVersion: batch/v1
kind: Job
metadata:
  name: smoke
  annotations:
    argocd.argoproj.io/hook: PostSync
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: smoke
        image: smoke:1
`

const settingsConfigMap = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations:
    sync.kuvryn.io/sync-wave: "-1"
data:
  mode: fast
`

const webDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: web:1
`

const webService = `
apiVersion: v1
kind: Service
metadata:
  name: web
  annotations:
    argocd.argoproj.io/sync-wave: "2"
spec:
  selector: {app: web}
  ports:
  - port: 80
`

// helmTestPod is a Helm test hook, which a sync never applies.
const helmTestPod = `
apiVersion: v1
kind: Pod
metadata:
  name: web-test
  annotations:
    helm.sh/hook: test
spec:
  containers:
  - name: test
    image: test:1
`

func TestRollout_AppliesHooksAndWavesInOrderEachHealthyBeforeTheNext(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := watchKinds(t, e.ns, jobGVK, configMapGVK, deploymentGVK, serviceGVK)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	name := e.publish("shop",
		object(t, migrateJob), object(t, smokeJob), object(t, settingsConfigMap), object(t, webDeployment), object(t, webService),
		object(t, helmTestPod))

	rev := e.waitForPhase(name, syncv1.PhaseHealthy)

	migrateCreated := rec.created("Job", "migrate")
	migrateDone := rec.first("Job", "migrate", "completed", func(o observation) bool { return hasCondition(o.obj, "Complete") })
	settingsCreated := rec.created("ConfigMap", "settings")
	webCreated := rec.created("Deployment", "web")
	webAvailable := rec.first("Deployment", "web", "became Available", func(o observation) bool { return hasCondition(o.obj, "Available") })
	serviceCreated := rec.created("Service", "web")
	smokeCreated := rec.created("Job", "smoke")
	order := []struct {
		name string
		rv   uint64
	}{
		{"pre-sync Job migrate created", migrateCreated},
		{"pre-sync Job migrate complete", migrateDone},
		{"wave -1 ConfigMap settings created", settingsCreated},
		{"wave 0 Deployment web created", webCreated},
		{"wave 0 Deployment web Available", webAvailable},
		{"wave 2 Service web created", serviceCreated},
		{"post-sync Job smoke created", smokeCreated},
	}
	for i := 1; i < len(order); i++ {
		if order[i-1].rv >= order[i].rv {
			t.Errorf("%s (resourceVersion %d) did not come before %s (resourceVersion %d)\nobserved:\n%s",
				order[i-1].name, order[i-1].rv, order[i].name, order[i].rv, rec)
		}
	}

	if c := condition(rev.Status.Conditions, syncv1.ConditionRolloutComplete); c.Status != "True" {
		t.Errorf("RolloutComplete = %+v, want True", c)
	}
	for _, h := range []string{"migrate", "smoke"} {
		if got := hookState(rev, h); got.State != syncv1.HookSucceeded || got.UID == "" {
			t.Errorf("status.hooks %s = %+v, want Succeeded with a UID", h, got)
		}
	}
	if got := hookState(rev, "migrate").Stage; got != syncv1.HookPreSync {
		t.Errorf("hook migrate stage = %q, want pre-sync", got)
	}
	if got := hookState(rev, "smoke").Stage; got != syncv1.HookPostSync {
		t.Errorf("hook smoke stage = %q, want post-sync", got)
	}
	var waves []int32
	for _, w := range rev.Status.Waves {
		waves = append(waves, w.Wave)
		if w.State != syncv1.WaveHealthy {
			t.Errorf("wave %d state = %s, want Healthy", w.Wave, w.State)
		}
	}
	if len(waves) != 3 || waves[0] != -1 || waves[1] != 0 || waves[2] != 2 {
		t.Errorf("status.waves = %v, want -1, 0, 2", waves)
	}
	if rev.Status.Inventory == nil || len(rev.Status.Inventory.Entries) != 5 {
		t.Errorf("status.inventory = %+v, want the 5 applied objects", rev.Status.Inventory)
	}
	if rev.Status.Plan == nil || rev.Status.Plan.Summary.Create != 5 {
		t.Errorf("status.plan = %+v, want 5 creates and the skipped Helm test left out", rev.Status.Plan)
	}
	if e.get("v1", "Pod", "web-test") != nil {
		t.Error("the Helm test hook Pod web-test was applied")
	}

	app := e.application("shop")
	if app.Status.DeployedRevision != name || app.Status.LastKnownGoodRevision != name {
		t.Errorf("deployed %q, last known good %q, want %q", app.Status.DeployedRevision, app.Status.LastKnownGoodRevision, name)
	}
	if app.Status.Sync != syncv1.SyncStateSynced || app.Status.Health != syncv1.HealthHealthy || app.Status.Phase != syncv1.PhaseHealthy {
		t.Errorf("Application sync %q health %q phase %q, want Synced, Healthy, Healthy", app.Status.Sync, app.Status.Health, app.Status.Phase)
	}
	for _, typ := range []string{syncv1.ConditionReady, syncv1.ConditionSynced, syncv1.ConditionHealthy} {
		if c := condition(app.Status.Conditions, typ); c.Status != "True" {
			t.Errorf("Application %s = %+v, want True", typ, c)
		}
	}
	if len(app.Status.History) != 1 || app.Status.History[0].Result != syncv1.PhaseHealthy ||
		app.Status.History[0].PlanDigest != rev.Status.Plan.Digest || app.Status.History[0].FinishedAt == nil {
		t.Errorf("history = %+v, want one finished Healthy attempt with the plan digest", app.Status.History)
	}
	eventually(t, "Progressing and Succeeded Events", func() bool {
		return len(e.events("shop", syncv1.ReasonProgressing)) > 0 && len(e.events("shop", syncv1.ReasonSucceeded)) == 1
	}, nil)

	healthy := map[string]string{"namespace": e.ns, "sync": "Synced", "health": "Healthy", "phase": "Healthy"}
	if n := metricValue(t, "kuvryn_sync_application_reconcile_total", healthy); n < 1 {
		t.Errorf("kuvryn_sync_application_reconcile_total%v = %v, want at least one reconcile", healthy, n)
	}
	if n := metricValue(t, "kuvryn_sync_lifecycle_events_total", map[string]string{"namespace": e.ns, "reason": syncv1.ReasonSucceeded}); n != 1 {
		t.Errorf("kuvryn_sync_lifecycle_events_total{reason=Succeeded} = %v, want 1", n)
	}
}

// metricValue sums the counters and histogram counts of name whose labels include labels.
func metricValue(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	must(t, err)
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue metrics
				}
			}
			total += m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	return total
}
