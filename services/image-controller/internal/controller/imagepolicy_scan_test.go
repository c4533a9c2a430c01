package controller_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testregistry "github.com/kuvryn/kuvryn-sync/pkg/testkit/registry"
)

func TestImagePolicy_SelectsAndRescansOnRequest(t *testing.T) {
	ns := newNamespace(t)
	reg := testregistry.Start(t, testregistry.Options{})
	d := reg.Push(t, "acme/api", "1.0.0", "1.1.0", "2.0.0-rc.1")
	image := reg.Host() + "/acme/api"
	successes := scans(t, "success")
	create(t, semver(ns, "api", image, ">=1.0.0 <3.0.0"))

	want := image + ":1.1.0@" + d["1.1.0"].String()
	eventually(t, "latestImage "+want, func() bool { return policy(t, ns, "api").Status.LatestImage == want })
	ip := policy(t, ns, "api")
	if c := condition(ip.Status.Conditions, syncv1.ConditionReady); c.Status != metav1.ConditionTrue || c.Reason != syncv1.ReasonSucceeded {
		t.Errorf("Ready %+v, want True/Succeeded", c)
	}
	if scans(t, "success") <= successes {
		t.Errorf("kuvryn_sync_image_scans_total{result=success} did not grow")
	}

	// The interval is an hour: only the scan request can pick up 1.2.0.
	d = reg.Push(t, "acme/api", "1.2.0")
	requestScan(t, ip)
	want = image + ":1.2.0@" + d["1.2.0"].String()
	eventually(t, "latestImage "+want+" after a scan request", func() bool {
		p := policy(t, ns, "api")
		return p.Status.LatestImage == want && p.Status.LastHandledScanAt == p.Annotations[syncv1.ScanRequestedAtAnnotation]
	})
}

func TestImagePolicy_ReportsWhyNothingIsSelected(t *testing.T) {
	ns := newNamespace(t)
	reg := testregistry.Start(t, testregistry.Options{})
	private := testregistry.Start(t, testregistry.Options{Username: "robot", Password: "s3cret"})
	reg.Push(t, "acme/api", "1.0.0")
	private.Push(t, "acme/api", "1.0.0")
	dockerConfig := func(name string, labelled bool) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"` + private.Host() + `":{"username":"robot","password":"s3cret"}}}`)}}
		if labelled {
			s.Labels = map[string]string{syncv1.RegistryCredentialsLabel: "true"}
		}
		return s
	}
	create(t, dockerConfig("unlabelled", false))
	create(t, dockerConfig("labelled", true))
	errors := scans(t, "error")

	withSecret := func(ip *syncv1.ImagePolicy, secret string) *syncv1.ImagePolicy {
		ip.Spec.SecretRef = &syncv1.LocalObjectReference{Name: secret}
		return ip
	}
	badRegex := semver(ns, "bad-regex", reg.Host()+"/acme/api", "1.x")
	badRegex.Spec.Policy = syncv1.ImageSelectionPolicy{TagPattern: &syncv1.TagPatternPolicy{Regex: "(unclosed"}}
	for _, tc := range []struct {
		ip     *syncv1.ImagePolicy
		reason string
		says   []string
	}{
		{semver(ns, "no-match", reg.Host()+"/acme/api", ">=5"), syncv1.ReasonNoMatchingTag, []string{"none of the 1 tags", "spec.policy"}},
		{semver(ns, "missing", reg.Host()+"/acme/missing", "1.x"), syncv1.ReasonScanFailed, []string{"acme/missing"}},
		{withSecret(semver(ns, "unlabelled", private.Host()+"/acme/api", "1.x"), "unlabelled"), syncv1.ReasonCredentialsRefused,
			[]string{"spec.secretRef", ns + "/unlabelled", `is not labelled sync.kuvryn.io/registry-credentials: "true"`}},
		{withSecret(semver(ns, "no-secret", private.Host()+"/acme/api", "1.x"), "absent"), syncv1.ReasonCredentialsRefused, []string{"not found"}},
		{badRegex, syncv1.ReasonValidationFailure, []string{"spec.policy.tagPattern.regex"}},
	} {
		create(t, tc.ip)
		eventually(t, tc.ip.Name+" Ready False/"+tc.reason, func() bool {
			c := condition(policy(t, ns, tc.ip.Name).Status.Conditions, syncv1.ConditionReady)
			return c.Status == metav1.ConditionFalse && c.Reason == tc.reason
		})
		msg := condition(policy(t, ns, tc.ip.Name).Status.Conditions, syncv1.ConditionReady).Message
		for _, s := range append(tc.says, "ImagePolicy "+ns+"/"+tc.ip.Name) {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: message %q does not say %q", tc.ip.Name, msg, s)
			}
		}
		if strings.Contains(msg, "s3cret") {
			t.Errorf("%s: message %q leaks the password", tc.ip.Name, msg)
		}
	}
	// Registry requests refused (the missing repository's tag list) or
	// unanswered count as errors.
	if scans(t, "error") <= errors {
		t.Errorf("kuvryn_sync_image_scans_total{result=error} did not grow")
	}

	create(t, withSecret(semver(ns, "labelled", private.Host()+"/acme/api", "1.x"), "labelled"))
	eventually(t, "a scan with labelled credentials", func() bool {
		return strings.HasPrefix(policy(t, ns, "labelled").Status.LatestImage, private.Host()+"/acme/api:1.0.0@sha256:")
	})
}
