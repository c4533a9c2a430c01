package console

import (
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestBrowser_PagesFollowStatusWithoutReload drives chromium: with an
// Application's page open, a status change and a newly planned preview
// appear on it, and with the Applications page open, another
// Application's change appears there, each without the page reloading (a
// mark set on the window survives), keeping an unfolded diff unfolded, and
// without the browser reporting a Content-Security-Policy violation or a
// script error.
func TestBrowser_PagesFollowStatusWithoutReload(t *testing.T) {
	// The console first, so that the browser, and its open event streams,
	// are gone before the test server closes.
	f := start(t)
	ctx := browser(t)
	f.waitingApplication("shop", nil)
	f.application("billing", nil, nil)
	viewer := f.token("viewer", true)

	var mu sync.Mutex
	var problems []string
	report := func(p string) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, p)
	}
	// Subscribed here, one after the other: the first starts the browser.
	exceptions, entries := chromedp.Events(ctx, runtime.ExceptionThrown), chromedp.Events(ctx, log.EntryAdded)
	go func() {
		for e, err := range exceptions {
			if err != nil {
				return
			}
			report("exception: " + e.ExceptionDetails.Text)
		}
	}()
	go func() {
		// CSP violations and script errors; a failed network request (the
		// favicon the console does not serve) is not a problem of the page.
		for e, err := range entries {
			if err != nil {
				return
			}
			if e.Entry.Level == log.EntryLevelError && e.Entry.Source != log.EntrySourceNetwork {
				report(string(e.Entry.Source) + ": " + e.Entry.Text)
			}
		}
	}()
	f.browserSignIn(ctx, viewer)
	// follow opens path, waits until its stream is open and marks the
	// window, so that a reload would show.
	follow := func(path string) {
		t.Helper()
		must(t, chromedp.Do(ctx,
			chromedp.Navigate(f.url+path),
			chromedp.Poll[chromedp.Void](`document.getElementById('live').textContent.startsWith('Live')`),
			chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`),
		))
	}
	// await waits until the expression holds, then checks the page did
	// not reload.
	await := func(what, expr string) {
		t.Helper()
		must(t, chromedp.Do(ctx, chromedp.Poll[chromedp.Void](expr)))
		same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded === true`))
		must(t, err)
		if !same {
			t.Errorf("%s: the page reloaded", what)
		}
	}

	follow("/applications/" + f.ns + "/shop")
	setPhase(t, f.ns, "shop", syncv1.PhaseApplying)
	await("phase", `document.getElementById('phase').textContent === 'Applying'`)
	f.previewRevision("shop-pr-12", "shop", "pr-12", previewPlan(f.ns))
	await("preview", `document.getElementById('preview-shop-pr-12') !== null`)
	if got, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("previews"))); err != nil || !strings.Contains(got, "1 to create, 1 to update") {
		t.Errorf("previews after the update: %q, %v", got, err)
	}
	// A diff the person unfolded stays unfolded across updates.
	must(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#diff-shop-pr-12-0 summary"))))
	setPhase(t, f.ns, "shop", syncv1.PhaseHealthy)
	await("phase again", `document.getElementById('phase').textContent === 'Healthy'`)
	if open, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById('diff-shop-pr-12-0').open`)); err != nil || !open {
		t.Errorf("the unfolded diff folded on the update: open %v, %v", open, err)
	}

	follow("/applications?namespace=" + f.ns)
	setPhase(t, f.ns, "billing", syncv1.PhaseFailed)
	await("list", `Array.from(document.querySelectorAll('#applications tr')).some(r => r.textContent.includes('billing') && r.textContent.includes('Failed'))`)

	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("the browser reported: %q", problems)
	}
}
