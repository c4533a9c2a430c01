package console

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// browser starts headless Debian chromium for the test, with extra
// options, or skips it when chromium is not installed.
func browser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install -y chromium): skipping the browser test")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900), chromedp.UserDataDir(t.TempDir()))
	opts = append(opts, extra...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return ctx
}

// TestBrowser_ViewerSignsInAndReads drives chromium against the console on
// loopback: a viewer signs in with a ServiceAccount token, sees the
// Applications, opens one and sees its plan, history and graph picture; hostile
// annotations stay inert (no dialog, no script but the console's own
// static/live.js, no javascript: link); after
// signing out, a token without rights sees the refusal page. Screenshots
// land in the test's temp dir and must not be blank.
func TestBrowser_ViewerSignsInAndReads(t *testing.T) {
	ctx := browser(t)
	f := start(t)
	f.waitingApplication("shop", map[string]string{
		"example.com/runbook": "javascript:alert(1)",
		"example.com/script":  "<script>alert(2)</script>",
		"example.com/docs":    "https://example.com/docs",
	})
	f.application("billing", nil, nil)
	repo := &syncv1.Repository{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "platform"},
		Spec: syncv1.RepositorySpec{Git: syncv1.GitSource{URL: "https://git.example.com/acme/platform.git", Revision: "main"}}}
	f.create(repo, func() {
		repo.Status.Artifact = &syncv1.Artifact{Revision: "refs/heads/main", Commit: strings.Repeat("a1", 20), FetchedAt: metav1.Now()}
	})
	viewer, nobody := f.token("viewer", true), f.token("nobody", false)

	var dialogs atomic.Int32
	events := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range events {
			if err != nil {
				return
			}
			dialogs.Add(1)
		}
	}()
	dir := t.TempDir()
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		must(t, err)
		return s
	}
	signIn := func(token string) {
		t.Helper()
		f.browserSignIn(ctx, token)
	}

	signIn(viewer)
	must(t, chromedp.Do(ctx, chromedp.Navigate(f.url+"/applications?namespace="+f.ns), chromedp.WaitVisible(chromedp.ID("applications"))))
	list := text("#applications")
	for _, want := range []string{"shop", "billing", "AwaitingApproval", "shop-0123456789"} {
		if !strings.Contains(list, want) {
			t.Errorf("the Applications table lacks %q:\n%s", want, list)
		}
	}
	if u := text("#user"); u != "system:serviceaccount:"+f.ns+":viewer" {
		t.Errorf("signed in as %q", u)
	}
	screenshot(t, ctx, filepath.Join(dir, "applications.png"))

	must(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`a[href="/applications/`+f.ns+`/shop"]`)),
		chromedp.WaitVisible(chromedp.ID("plan")),
	))
	for sel, want := range map[string]string{
		"#plan-digest":     "sha256:" + strings.Repeat("cd", 32),
		"#plan":            "level: debug",
		"#approve-command": "ksync approve shop -n " + f.ns + " --revision shop-0123456789",
		"#history":         "alice@example.com",
		"#diagnosis":       "ImagePullBackOff",
		"#annotations":     "javascript:alert(1)",
	} {
		if got := text(sel); !strings.Contains(got, want) {
			t.Errorf("%s lacks %q:\n%s", sel, want, got)
		}
	}
	unsafe, err := chromedp.Run(ctx, chromedp.Evaluate[int](
		`document.querySelectorAll('script:not([src="/static/live.js"]), a[href^="javascript:" i], [onerror], [onclick]').length`))
	must(t, err)
	if unsafe != 0 {
		t.Errorf("%d scripts, javascript: links or handlers in the page", unsafe)
	}
	links, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll('#annotations a')).map(a => a.href)`))
	must(t, err)
	if len(links) != 1 || links[0] != "https://example.com/docs" {
		t.Errorf("annotation links %q, want only https://example.com/docs", links)
	}
	graphWidth, err := chromedp.Run(ctx, chromedp.Evaluate[int](
		`new Promise(done => { const g = document.getElementById('graph'); if (g.complete) done(g.naturalWidth); else g.onload = () => done(g.naturalWidth), g.onerror = () => done(0); })`,
		chromedp.EvalAwaitPromise))
	must(t, err)
	if graphWidth < 200 {
		t.Errorf("the live graph picture is %d pixels wide: not drawn", graphWidth)
	}
	screenshot(t, ctx, filepath.Join(dir, "application.png"))

	must(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("revisions-link")), chromedp.WaitVisible(chromedp.ID("revisions"))))
	if got := text("#revisions"); !strings.Contains(got, "shop-0123456789") || !strings.Contains(got, "AwaitingApproval") ||
		!strings.Contains(got, "sha256:"+strings.Repeat("cd", 6)) {
		t.Errorf("the Revisions of shop lack its waiting Revision and plan digest:\n%s", got)
	}
	screenshot(t, ctx, filepath.Join(dir, "revisions.png"))
	must(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`header a[href="/repositories"]`)), chromedp.WaitVisible(chromedp.ID("repositories"))))
	if got := text("#repositories"); !strings.Contains(got, "https://git.example.com/acme/platform.git") || !strings.Contains(got, strings.Repeat("a1", 20)) {
		t.Errorf("the Repositories table lacks platform's URL and commit:\n%s", got)
	}
	screenshot(t, ctx, filepath.Join(dir, "repositories.png"))

	must(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".signout button")), chromedp.WaitVisible(chromedp.ID("token"))))
	signIn(nobody)
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("refused"))))
	if msg := text("#message"); !strings.Contains(msg, "system:serviceaccount:"+f.ns+":nobody") || !strings.Contains(msg, "forbidden") {
		t.Errorf("refusal page says %q", msg)
	}
	screenshot(t, ctx, filepath.Join(dir, "refused.png"))

	if n := dialogs.Load(); n != 0 {
		t.Errorf("%d JavaScript dialogs opened", n)
	}
}

// browserSignIn signs the browser in with token.
func (f *fixture) browserSignIn(ctx context.Context, token string) {
	f.t.Helper()
	must(f.t, chromedp.Do(ctx,
		chromedp.Navigate(f.url+"/sign-in"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SetValue(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("submit")),
		// Only signed-in pages name the user: waiting for it waits for
		// the form's navigation to end, not for the form page itself.
		chromedp.WaitVisible(chromedp.ID("user")),
	))
}

// screenshot saves a full-page PNG to path and checks it is a real page:
// a sensible size and more than one colour.
func screenshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	must(t, err)
	must(t, os.WriteFile(path, b, 0o600))
	img, err := png.Decode(bytes.NewReader(b))
	must(t, err)
	bounds := img.Bounds()
	if bounds.Dx() < 800 || bounds.Dy() < 300 {
		t.Errorf("%s is %dx%d", path, bounds.Dx(), bounds.Dy())
	}
	if colours(img) < 3 {
		t.Errorf("%s is blank", path)
	}
	t.Logf("screenshot %s: %dx%d, %d bytes", path, bounds.Dx(), bounds.Dy(), len(b))
}

// colours counts distinct colours on a grid of sample points.
func colours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen)
}
