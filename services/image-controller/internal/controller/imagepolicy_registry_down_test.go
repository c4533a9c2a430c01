package controller_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
	testregistry "github.com/kuvryn/kuvryn-sync/pkg/testkit/registry"
)

// A registry that is down heals by itself: the scan is retried within
// seconds, backing off, and not only after the policy's hour-long interval.
func TestImagePolicy_RegistryUpLateIsScannedWithinAMinute(t *testing.T) {
	ns := newNamespace(t)
	reg := testregistry.Start(t, testregistry.Options{})
	reg.Stop() // down from the start: its address refuses connections
	image := reg.Host() + "/acme/api"
	create(t, semver(ns, "api", image, "1.x"))

	// While it is down, Ready says the scan failed and when it is tried again.
	retries := retriesSaid(t, 20*time.Second, syncv1.ReasonScanFailed, func() metav1.Condition {
		return condition(policy(t, ns, "api").Status.Conditions, syncv1.ConditionReady)
	})
	for _, want := range []string{"5s", "10s"} {
		if !retries[want] {
			t.Errorf("Ready messages while down said retrying in %v, want %s among them (5s doubled)", keys(retries), want)
		}
	}

	if err := reg.Start(); err != nil {
		t.Fatal(err)
	}
	d := reg.Push(t, "acme/api", "1.0.0")
	up := time.Now()
	want := image + ":1.0.0@" + d["1.0.0"].String()
	eventually(t, "latestImage "+want+" within a minute of the registry coming up", func() bool {
		return policy(t, ns, "api").Status.LatestImage == want
	})
	c := condition(policy(t, ns, "api").Status.Conditions, syncv1.ConditionReady)
	if c.Status != metav1.ConditionTrue || strings.Contains(c.Message, "retrying") {
		t.Errorf("Ready %+v after the scan, want True without a retry", c)
	}
	t.Logf("scanned %s after the registry came up 20 s late", time.Since(up).Round(time.Second))
}

// retriesSaid reads a condition for d, fails the test if it turns True, and
// returns every "retrying in" delay its messages with reason gave.
func retriesSaid(t *testing.T, d time.Duration, reason string, read func() metav1.Condition) map[string]bool {
	t.Helper()
	retries := map[string]bool{}
	for start := time.Now(); time.Since(start) < d; time.Sleep(200 * time.Millisecond) {
		c := read()
		if c.Status == metav1.ConditionTrue {
			t.Fatalf("%s %+v while the server is down", c.Type, c)
		}
		if i := strings.LastIndex(c.Message, "; retrying in "); c.Reason == reason && i >= 0 {
			retries[c.Message[i+len("; retrying in "):]] = true
		}
	}
	return retries
}

// freePort is a loopback port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	port, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
