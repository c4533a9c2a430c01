package receiver

import (
	"bytes"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestReceiver_GitHubPushSignedWithOpenSSLStampsRepository signs a GitHub
// push with openssl, as GitHub documents it, independently of the Go code
// that checks it: the receiver stamps reconcile-requested-at, owned by
// kuvryn-web alone, and leaves the Repository's other annotations alone.
func TestReceiver_GitHubPushSignedWithOpenSSLStampsRepository(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Fatalf("openssl is needed to compute the signature independently: %v", err)
	}
	f := start(t, fixtureOptions{})
	const token = "It's a Secret to Everybody"
	f.secret("platform-webhook", token)
	f.repository("platform", "git@github.com:Acme/Platform.git", "platform-webhook")
	repo := &syncv1.Repository{}
	must(t, admin.Get(t.Context(), client.ObjectKey{Namespace: f.ns, Name: "platform"}, repo))
	repo.Annotations = map[string]string{"team": "payments"}
	must(t, admin.Update(t.Context(), repo))

	body := githubPush("Acme/Platform")
	cmd := exec.Command(openssl, "dgst", "-sha256", "-hmac", token)
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("openssl dgst: %v", err)
	}
	// "HMAC-SHA2-256(stdin)= <hex>" or, in older releases, "(stdin)= <hex>".
	fields := strings.Fields(string(out))
	signature := "sha256=" + fields[len(fields)-1]

	before := time.Now().UTC()
	got := f.post("/hooks/"+f.ns+"/platform", map[string]string{
		"X-GitHub-Event": "push", "X-Hub-Signature-256": signature, "Content-Type": "application/json",
	}, body)
	if got.status != http.StatusAccepted {
		t.Fatalf("push signed by openssl: %d %q, want 202", got.status, got.body)
	}
	stamped := f.annotation(repo, "platform", syncv1.ReconcileRequestedAtAnnotation)
	at, err := time.Parse(time.RFC3339Nano, stamped)
	if err != nil || at.Before(before.Add(-time.Second)) {
		t.Fatalf("%s = %q, want a time after %s (%v)", syncv1.ReconcileRequestedAtAnnotation, stamped, before, err)
	}
	if repo.Annotations["team"] != "payments" {
		t.Fatalf("the receiver changed another annotation: %v", repo.Annotations)
	}
	owners := annotationOwners(t, repo, syncv1.ReconcileRequestedAtAnnotation)
	if len(owners) != 1 || owners[0] != syncv1.FieldManagerWeb {
		t.Fatalf("%s is owned by %v, want only %s", syncv1.ReconcileRequestedAtAnnotation, owners, syncv1.FieldManagerWeb)
	}
	if c := f.counts(); c["accepted"] != 1 {
		t.Fatalf("counts %v, want accepted 1", c)
	}
}

// annotationOwners lists the field managers that own annotation on obj.
func annotationOwners(t *testing.T, obj client.Object, annotation string) []string {
	t.Helper()
	var owners []string
	for _, mf := range obj.GetManagedFields() {
		if mf.FieldsV1 != nil && strings.Contains(mf.FieldsV1.GetRawString(), `"f:`+annotation+`"`) {
			owners = append(owners, mf.Manager)
		}
	}
	return owners
}
