package console

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestApplicationPages_ShowEachApplicationsShard: the list and an
// Application's page name its shard, the sync.kuvryn.io/shard label, and
// "default" for an Application without it.
func TestApplicationPages_ShowEachApplicationsShard(t *testing.T) {
	f := start(t)
	tenant := f.application("tenant", nil, nil)
	patch := client.MergeFrom(tenant.DeepCopy())
	tenant.Labels = map[string]string{syncv1.ShardLabel: "tenant-a"}
	must(t, admin.Patch(context.Background(), tenant, patch))
	f.application("shared", nil, nil)
	s := f.signIn(f.token("viewer", true))

	for app, want := range map[string]string{"tenant": "tenant-a", "shared": "default"} {
		resp := f.do(http.MethodGet, "/applications/"+f.ns+"/"+app, []*http.Cookie{s}, nil)
		if resp.status != http.StatusOK || !strings.Contains(resp.body, `<td id="shard">`+want+`</td>`) {
			t.Errorf("page of %s (%d) does not show shard %s:\n%s", app, resp.status, want, resp.body)
		}
	}
	list := f.do(http.MethodGet, "/applications?namespace="+f.ns, []*http.Cookie{s}, nil)
	for _, want := range []string{`<td class="shard">tenant-a</td>`, `<td class="shard">default</td>`} {
		if !strings.Contains(list.body, want) {
			t.Errorf("the Applications list lacks %s:\n%s", want, list.body)
		}
	}
}
