package controller_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/retry"
	testregistry "github.com/kuvryn/kuvryn-sync/pkg/testkit/registry"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/controller"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/scan"
)

// The guide: a policy rescans on its interval. spec.interval is at least a
// minute, so the test reconciles itself, as the manager would, and reads
// when the scan asks to be called again: after spec.interval, 5m when unset.
func TestImagePolicy_RescansOnItsInterval(t *testing.T) {
	ns := newNamespace(t)
	reg := testregistry.Start(t, testregistry.Options{})
	reg.Push(t, "acme/api", "1.0.0")
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	stop := make(chan struct{})
	broadcaster.StartRecordingToSink(stop)
	t.Cleanup(func() { close(stop); broadcaster.Shutdown() })
	r := &controller.ImagePolicyReconciler{
		Client: k8s, APIReader: k8s, Scanner: scan.New(scan.Options{QPS: 100, Burst: 50}),
		Events: broadcaster.NewRecorder(k8s.Scheme(), syncv1.FieldManagerImage), Retry: &retry.Backoff{},
	}

	for _, tc := range []struct {
		name     string
		interval *metav1.Duration
		want     time.Duration
	}{
		{name: "unset", want: 5 * time.Minute},
		{name: "minute", interval: &metav1.Duration{Duration: time.Minute}, want: time.Minute},
		{name: "hours", interval: &metav1.Duration{Duration: 3 * time.Hour}, want: 3 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ip := semver(ns, tc.name, reg.Host()+"/acme/api", "1.x")
			ip.Spec.Interval = tc.interval
			create(t, ip)
			res, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ip)})
			if err != nil {
				t.Fatal(err)
			}
			if res.RequeueAfter != tc.want {
				t.Errorf("a successful scan asks to run again after %s, want %s", res.RequeueAfter, tc.want)
			}
		})
	}
}

// The guide: a policy rescans when its spec changes. Its interval is an
// hour and nobody requests a scan: only the spec change can pick up 1.2.0.
func TestImagePolicy_RescansWhenItsSpecChanges(t *testing.T) {
	ns := newNamespace(t)
	reg := testregistry.Start(t, testregistry.Options{})
	d := reg.Push(t, "acme/api", "1.0.0", "1.1.0")
	image := reg.Host() + "/acme/api"
	create(t, semver(ns, "api", image, ">=1.0.0 <1.2.0"))
	want := image + ":1.1.0@" + d["1.1.0"].String()
	eventually(t, "latestImage "+want, func() bool { return policy(t, ns, "api").Status.LatestImage == want })

	d = reg.Push(t, "acme/api", "1.2.0")
	ip := policy(t, ns, "api")
	patch := client.MergeFrom(ip.DeepCopy())
	ip.Spec.Policy.SemVer.Range = ">=1.0.0 <2.0.0"
	if err := k8s.Patch(t.Context(), ip, patch); err != nil {
		t.Fatal(err)
	}
	want = image + ":1.2.0@" + d["1.2.0"].String()
	eventually(t, "latestImage "+want+" after the spec change", func() bool {
		p := policy(t, ns, "api")
		return p.Status.LatestImage == want && p.Status.ObservedGeneration == p.Generation
	})
}
