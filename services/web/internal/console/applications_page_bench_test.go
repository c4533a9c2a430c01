package console

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// BenchmarkApplicationsPage_1000 renders one page of 1000 Applications,
// read from the real API server with a viewer's token, and prints the
// server time per page (the handler, without the network to the browser).
func BenchmarkApplicationsPage_1000(b *testing.B) {
	f := start(b)
	ctx := context.Background()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range 1000 {
		g.Go(func() error {
			app := &syncv1.Application{
				ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: fmt.Sprintf("app-%04d", i)},
				Spec:       syncv1.ApplicationSpec{Source: syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "platform"}}},
			}
			if err := admin.Create(gctx, app); err != nil {
				return err
			}
			app.Status = syncv1.ApplicationStatus{Sync: syncv1.SyncStateSynced, Health: syncv1.HealthHealthy, Phase: syncv1.PhaseHealthy,
				DesiredRevision: app.Name + "-0123456789", DeployedRevision: app.Name + "-0123456789"}
			return admin.Status().Update(gctx, app)
		})
	}
	must(b, g.Wait())
	s := f.signIn(f.token("viewer", true))
	path := "/applications?limit=1000&namespace=" + f.ns

	var total time.Duration
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.AddCookie(s)
		rec := httptest.NewRecorder()
		start := time.Now()
		f.console.Handler().ServeHTTP(rec, req)
		total += time.Since(start)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
		if rows := strings.Count(rec.Body.String(), `<a href="/applications/`+f.ns+"/"); rows != 1000 {
			b.Fatalf("%d rows, want 1000", rows)
		}
	}
	perPage := total / time.Duration(b.N)
	b.ReportMetric(float64(perPage.Microseconds())/1000, "server-ms/page")
	fmt.Printf("a page of 1000 Applications: %s server time (List from the API server and render), %d pages\n", perPage, b.N)
}
