package scenarios_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/e2e/harness"
)

// The flood: bounded, loopback only, from floodSenders goroutines, each
// dialing from its own loopback address (127.0.0.2 ... 127.0.0.17), so
// that the receiver sees floodSenders remote hosts, each with its own
// per-address bucket, and enough signed pushes get through those to run
// the one Repository's bucket dry.
const (
	floodRequests = 3000
	floodSenders  = 16
	// The receiver's limits (docs/webhooks.md, "Refusals and limits").
	addressBurst    = 50
	repositoryBurst = 10
	repositoryRate  = 1.0
)

// floodKind is one kind of request in the flood.
type floodKind int

const (
	floodValid floodKind = iota
	floodUnsigned
	floodWrongSignature
	floodOversized
	floodMalformed
	floodKinds
)

func (k floodKind) String() string {
	return [...]string{"valid", "unsigned", "wrong-signature", "oversized", "malformed"}[k]
}

// floodAnswers are the documented answers (docs/webhooks.md, "Refusals and
// limits") to each kind; every kind may also be rate limited, since the
// per-address bucket is checked before anything else. Valid and malformed
// pushes are signed, so they also reach the per-Repository bucket.
var floodAnswers = map[floodKind][]int{
	floodValid:          {http.StatusAccepted, http.StatusTooManyRequests},
	floodUnsigned:       {http.StatusUnauthorized, http.StatusTooManyRequests},
	floodWrongSignature: {http.StatusUnauthorized, http.StatusTooManyRequests},
	floodOversized:      {http.StatusRequestEntityTooLarge, http.StatusTooManyRequests},
	floodMalformed:      {http.StatusBadRequest, http.StatusTooManyRequests},
}

// TestE2E_Chaos_FloodedReceiverDeploysEachCommitOnceAndStaysResponsive
// floods the web service's receiver with a mix of valid, unsigned, wrongly
// signed, oversized and malformed push events for a Repository that polls
// only hourly, right after a commit, from 16 loopback addresses. The
// receiver answers only as documented; the per-Repository limit answers
// (a signed push refused while its address had tokens left) and bounds the
// signed pushes let through to its burst and rate; the commit is rolled out
// once (one new Revision, no hook Job created twice as counted from the API
// server's watch), and once the Retry-After has passed one more commit and
// one signed push deploy again.
func TestE2E_Chaos_FloodedReceiverDeploysEachCommitOnceAndStaysResponsive(t *testing.T) {
	clientset, err := kubernetes.NewForConfig(env.CP.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := namespace(t, "e2e-chaos-flood")
	jobs := watchJobCreations(t, clientset, ns)
	files := chaosRepository()
	gitRepo := webhookRepository(t, ns, "platform", files)
	first := waitHealthy(t, ns, "shop", "")
	before := revisionsOf(t, ns, "shop")

	files["app/web-0.yaml"] = strings.ReplaceAll(files["app/web-0.yaml"], "web:1.0", "web:1.1")
	if _, err := gitRepo.Commit(files, "web-0 1.1"); err != nil {
		t.Fatal(err)
	}
	addr := receiver(t)
	limitedBefore, acceptedBefore := receiverCount(t, "rate_limited"), receiverCount(t, "accepted")
	floodStart := time.Now()
	fl := flood(t, addr, ns, "platform", gitRepo.URL())
	floodEnd := time.Now()
	for _, e := range fl.errs {
		t.Error(e)
	}
	counts := fl.counts
	statuses, perKind := map[int]int{}, map[string]map[int]int{}
	for kind := range floodKinds {
		perKind[kind.String()] = counts[kind]
		for status, n := range counts[kind] {
			statuses[status] += n
			if !slices.Contains(floodAnswers[kind], status) {
				t.Errorf("%d %s requests answered %d, want one of %v", n, kind, status, floodAnswers[kind])
			}
		}
	}
	if counts[floodValid][http.StatusAccepted] == 0 {
		t.Fatalf("no valid push was accepted during the flood: %v", counts[floodValid])
	}
	// The web service counted what the senders saw.
	if got := receiverCount(t, "rate_limited") - limitedBefore; got != statuses[http.StatusTooManyRequests] {
		t.Errorf("rate_limited rose by %d during the flood, the senders got %d 429s", got, statuses[http.StatusTooManyRequests])
	}
	if got := receiverCount(t, "accepted") - acceptedBefore; got != statuses[http.StatusAccepted] {
		t.Errorf("accepted rose by %d during the flood, the senders got %d 202s", got, statuses[http.StatusAccepted])
	}
	// Both limits answer 429 rate_limited with the same body, so which one
	// refused is deduced: an address's bucket starts with 50 tokens and a
	// refusal takes none, so within an address's first 50 requests only
	// the per-Repository bucket can refuse, and only signed requests reach
	// it.
	if fl.earlyUnsignedLimited > 0 {
		t.Errorf("%d unsigned, wrongly signed or oversized requests got 429 within their address's first %d: "+
			"the receiver did not see %d distinct addresses", fl.earlyUnsignedLimited, addressBurst, floodSenders)
	}
	if fl.byRepository == 0 {
		t.Errorf("no signed push was refused by the per-Repository limit (within its address's first %d requests): %v",
			addressBurst, counts[floodValid])
	}
	// Signed pushes let through the Repository's bucket, accepted or then
	// refused as malformed, are at most its burst and its refill over the
	// flood (plus one token for rounding).
	through := counts[floodValid][http.StatusAccepted] + counts[floodMalformed][http.StatusBadRequest]
	if bound := repositoryBurst + int(repositoryRate*floodEnd.Sub(floodStart).Seconds()) + 1; through > bound {
		t.Errorf("%d signed pushes passed the per-Repository limit in %s, want at most %d", through,
			floodEnd.Sub(floodStart).Round(time.Millisecond), bound)
	}

	second := waitHealthy(t, ns, "shop", first)
	deployAfterFlood := time.Since(floodEnd)
	checkHooked(t, ns, second, jobs, 2)
	if after := revisionsOf(t, ns, "shop"); len(after) != len(before)+1 {
		t.Fatalf("Revisions after %d accepted pushes of one commit: %v, want the %v before and one more",
			counts[floodValid][http.StatusAccepted], after, before)
	}

	// The receiver recovered: after Retry-After, one signed push is
	// accepted and its commit deployed.
	time.Sleep(time.Second)
	files["app/web-1.yaml"] = strings.ReplaceAll(files["app/web-1.yaml"], "web:1.0", "web:1.1")
	if _, err := gitRepo.Commit(files, "web-1 1.1"); err != nil {
		t.Fatal(err)
	}
	recoverStart := time.Now()
	if status, body := pushHook(t, ns, "platform", gitRepo.URL()); status != http.StatusAccepted {
		t.Fatalf("signed push a second after the flood: %d %q, want 202", status, body)
	}
	third := waitHealthy(t, ns, "shop", second)
	deployAfterRecovery := time.Since(recoverStart)
	checkHooked(t, ns, third, jobs, 3)
	if after := revisionsOf(t, ns, "shop"); len(after) != len(before)+2 {
		t.Fatalf("Revisions after the push that followed the flood: %v, want the %v before and two more", after, before)
	}

	rss := "not found"
	if kb, err := webPeakRSS(addr); err == nil {
		rss = kb
	} else {
		t.Logf("peak RSS of the web service: %v", err)
	}
	t.Logf("flood: %d requests in %s from %d addresses, answers %v, per kind %v; 429 by limit: per-Repository %d, "+
		"per-address %d, either (signed, past the address's first %d) %d; %d signed pushes passed the per-Repository limit; "+
		"deployed %s after the flood, %s after the push that followed it; web service peak RSS (VmHWM) %s",
		floodRequests, floodEnd.Sub(floodStart).Round(time.Millisecond), floodSenders, statuses, perKind,
		fl.byRepository, fl.byAddress, addressBurst, fl.byEither, through,
		deployAfterFlood.Round(time.Millisecond), deployAfterRecovery.Round(time.Millisecond), rss)
}

// checkHooked fails unless Revision rev ran both hooks to Succeeded and each
// hook Job was created exactly once per rollout so far.
func checkHooked(t *testing.T, ns, rev string, jobs *jobCreations, rollouts int) {
	t.Helper()
	r := get(t, &syncv1.Revision{}, ns, rev)
	for _, hook := range []string{"migrate", "smoke"} {
		if got := hookState(r, hook); got != syncv1.HookSucceeded {
			t.Errorf("Revision %s: hook %s is %q, want Succeeded", rev, hook, got)
		}
	}
	// Every rollout creates its hook Jobs under the same names, so a hook
	// run twice shows as more UIDs under one name than rollouts.
	created := jobs.created()
	for _, hook := range []string{"migrate", "smoke"} {
		if n := created[hook]; n != rollouts {
			t.Errorf("hook Job %s created %d times in %d rollouts", hook, n, rollouts)
		}
	}
}

// floodResult is what the flood's senders got.
type floodResult struct {
	// counts are the answers per kind and status.
	counts [floodKinds]map[int]int
	// byRepository counts 429s to signed requests within their address's
	// first addressBurst requests: only the per-Repository bucket can have
	// refused them.
	byRepository int
	// byAddress counts 429s to requests that never reach the
	// per-Repository bucket (unsigned, wrongly signed, oversized).
	byAddress int
	// byEither counts 429s to signed requests past their address's first
	// addressBurst: either bucket may have refused them.
	byEither int
	// earlyUnsignedLimited counts 429s to requests that never reach the
	// per-Repository bucket within their address's first addressBurst:
	// there should be none.
	earlyUnsignedLimited int
	// errs are transport errors and 5xx answers.
	errs []string
}

// flood sends floodRequests requests of all kinds, round robin, from
// floodSenders goroutines, the s-th dialing from its own loopback address
// and sending one request at a time, so the receiver sees that address's
// requests in the order sent. It counts the answers per kind and status
// and classifies each 429 by the limit that gave it.
func flood(t *testing.T, addr, ns, name, url string) floodResult {
	t.Helper()
	push := []byte(fmt.Sprintf(`{"ref":"refs/heads/main","repository":{"name":%q,"clone_url":%q,"html_url":%q}}`,
		name, url, strings.TrimSuffix(url, ".git")))
	// Just over the 1 MB limit, valid JSON, so only its size is wrong.
	oversized := append(append([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), 1<<20)...), `"}`...)
	malformed := []byte(`{"ref":"refs/heads/main","repository":`)
	endpoint := "http://" + addr + "/hooks/" + ns + "/" + name

	var (
		mu  sync.Mutex
		res floodResult
		wg  sync.WaitGroup
	)
	for k := range res.counts {
		res.counts[k] = map[int]int{}
	}
	for s := range floodSenders {
		src, err := harness.LoopbackSource(s)
		if err != nil {
			t.Fatal(err)
		}
		hc := harness.ClientFrom(src, 1, 30*time.Second)
		defer hc.CloseIdleConnections()
		wg.Add(1)
		go func() {
			defer wg.Done()
			// sent is how many requests this address has sent, this one
			// included.
			sent := 0
			for i := s; i < floodRequests; i += floodSenders {
				sent++
				kind := floodKind(i % int(floodKinds))
				body, token := push, webhookToken
				switch kind {
				case floodUnsigned:
					token = ""
				case floodWrongSignature:
					token = "a guess"
				case floodOversized:
					body = oversized
				case floodMalformed:
					body = malformed
				}
				status, err := floodSend(t, hc, endpoint, body, token)
				mu.Lock()
				if err == nil && status >= 500 {
					err = fmt.Errorf("answered %d", status)
				}
				if err != nil {
					res.errs = append(res.errs, fmt.Sprintf("request %d (%s) from %s: %v", i, kind, src, err))
				} else {
					res.counts[kind][status]++
				}
				if status == http.StatusTooManyRequests {
					signed := kind == floodValid || kind == floodMalformed
					early := sent <= addressBurst
					switch {
					case signed && early:
						res.byRepository++
					case signed:
						res.byEither++
					default:
						res.byAddress++
						if early {
							res.earlyUnsignedLimited++
						}
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return res
}

// floodSend posts one push event, signed with token unless it is empty.
func floodSend(t *testing.T, hc *http.Client, endpoint string, body []byte, token string) (int, error) {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "push")
	if token != "" {
		mac := hmac.New(sha256.New, []byte(token))
		mac.Write(body)
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "1" {
		return 0, fmt.Errorf("429 with Retry-After %q, want 1", resp.Header.Get("Retry-After"))
	}
	return resp.StatusCode, nil
}

// webPeakRSS is VmHWM of the web process serving the receiver at addr,
// found by its flag in /proc, as the harness does not keep its pid.
func webPeakRSS(addr string) (string, error) {
	cmdlines, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		return "", err
	}
	flag := []byte("--webhook-receiver-bind-address=" + addr)
	for _, c := range cmdlines {
		b, err := os.ReadFile(c)
		if err != nil || !bytes.Contains(b, flag) {
			continue
		}
		status, err := os.ReadFile(filepath.Join(filepath.Dir(c), "status"))
		if err != nil {
			return "", err
		}
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				return strings.TrimSpace(v), nil
			}
		}
	}
	return "", fmt.Errorf("no process with %s", flag)
}
