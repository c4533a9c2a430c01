package chart

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	testchart "github.com/kuvryn/kuvryn-sync/pkg/testkit/chart"
)

// clock is a settable Now for the Puller.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestPull_CacheHitMakesNoRequestAndMarksTheEntryUsed(t *testing.T) {
	r := newChartRepo(t, nil)
	archive := packageChart(t, "api", "1.0.0", nil)
	r.publish(t, indexEntry{name: "api", version: "1.0.0", url: "charts/api-1.0.0.tgz", archive: archive})
	c := &clock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	p := r.puller(t)
	p.Now = c.now

	first := mustPull(t, p, r.ref("api", "1.0.0"), "payments", nil)
	requests := r.requests()

	c.t = c.t.Add(3 * time.Hour)
	second := mustPull(t, p, r.ref("api", "1.0.0"), "payments", nil)
	if r.requests() != requests {
		t.Fatalf("cache hit made %d requests, want 0", r.requests()-requests)
	}
	if second.SHA256 != first.SHA256 || second.SHA256 != testchart.SHA256(archive) {
		t.Fatalf("cache hit SHA256 = %s, want %s", second.SHA256, first.SHA256)
	}
	entries := cachedArchives(t, p.Dir)
	if len(entries) != 1 {
		t.Fatalf("cache holds %d archives, want 1", len(entries))
	}
	info, err := os.Stat(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	if !info.ModTime().Equal(c.t) {
		t.Fatalf("entry last used %s, want %s", info.ModTime(), c.t)
	}
}

func TestPull_CacheIsKeptPerNamespaceAndCredentials(t *testing.T) {
	reg := newOCIRegistry(t, testCreds)
	reg.push(t, "api", "1.2.3", packageChart(t, "api", "1.2.3", nil))
	p := &Puller{Dir: t.TempDir()}
	other := &Credentials{Username: testCreds.Username, Password: testCreds.Password}

	steps := []struct {
		namespace string
		creds     *Credentials
		wantMiss  bool
	}{
		{namespace: "team-a", creds: testCreds, wantMiss: true},
		{namespace: "team-a", creds: other, wantMiss: false}, // equal credentials share the entry
		{namespace: "team-b", creds: testCreds, wantMiss: true},
		{namespace: "team-b", creds: &Credentials{Username: "robot", Password: "rotated"}, wantMiss: true},
	}
	for i, s := range steps {
		before := reg.requests()
		_, err := p.Pull(t.Context(), reg.ref("api", "1.2.3"), s.namespace, s.creds)
		if s.creds.Password == "rotated" {
			// The registry refuses these credentials: a private chart pulled
			// with other credentials must not be served from the cache.
			if err == nil {
				t.Fatalf("step %d: pull with wrong credentials succeeded from the cache", i)
			}
		} else if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if miss := reg.requests() > before; miss != s.wantMiss {
			t.Fatalf("step %d (%s): network used = %v, want %v", i, s.namespace, miss, s.wantMiss)
		}
	}
	if n := len(cachedArchives(t, p.Dir)); n != 2 {
		t.Fatalf("cache holds %d archives, want 2 (one per namespace)", n)
	}
}

func TestPull_VersionBumpChangesTheSHA256(t *testing.T) {
	reg := newOCIRegistry(t, nil)
	v1 := packageChart(t, "api", "1.0.0", nil)
	v2 := packageChart(t, "api", "1.0.1", nil)
	reg.push(t, "api", "1.0.0", v1)
	reg.push(t, "api", "1.0.1", v2)
	p := &Puller{Dir: t.TempDir()}

	a := mustPull(t, p, reg.ref("api", "1.0.0"), "payments", nil)
	b := mustPull(t, p, reg.ref("api", "1.0.1"), "payments", nil)
	if a.SHA256 == b.SHA256 {
		t.Fatal("two versions share a SHA256")
	}
	if a.SHA256 != testchart.SHA256(v1) || b.SHA256 != testchart.SHA256(v2) {
		t.Fatal("SHA256 is not the archive's")
	}
}

func TestPull_CorruptCacheEntryIsPulledAgain(t *testing.T) {
	r := newChartRepo(t, nil)
	r.publish(t, indexEntry{name: "api", version: "1.0.0", url: "charts/api-1.0.0.tgz", archive: packageChart(t, "api", "1.0.0", nil)})
	p := r.puller(t)
	mustPull(t, p, r.ref("api", "1.0.0"), "payments", nil)
	entry := cachedArchives(t, p.Dir)[0]
	if err := os.WriteFile(entry, []byte("not gzip"), 0o600); err != nil {
		t.Fatal(err)
	}

	before := r.requests()
	mustPull(t, p, r.ref("api", "1.0.0"), "payments", nil)
	if r.requests() == before {
		t.Fatal("a corrupt cache entry was served")
	}
}

func TestPrune_RemovesOnlyChartsUnusedLongerThanMaxUnused(t *testing.T) {
	reg := newOCIRegistry(t, nil)
	reg.push(t, "api", "1.0.0", packageChart(t, "api", "1.0.0", nil))
	reg.push(t, "worker", "1.0.0", packageChart(t, "worker", "1.0.0", nil))
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &clock{t: start}
	p := &Puller{Dir: t.TempDir(), Now: c.now}

	mustPull(t, p, reg.ref("api", "1.0.0"), "payments", nil)
	mustPull(t, p, reg.ref("worker", "1.0.0"), "payments", nil)
	interrupted := filepath.Join(p.Dir, tempPrefix+"123")
	foreign := filepath.Join(p.Dir, "README")
	for _, f := range []string{interrupted, foreign} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f, start, start); err != nil {
			t.Fatal(err)
		}
	}

	c.t = start.Add(20 * time.Hour)
	mustPull(t, p, reg.ref("api", "1.0.0"), "payments", nil) // a render uses api again

	c.t = start.Add(25 * time.Hour)
	removed, err := p.Prune(24 * time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if removed != 1 {
		t.Fatalf("Prune removed %d charts, want 1 (worker)", removed)
	}
	if _, err := os.Stat(interrupted); !os.IsNotExist(err) {
		t.Fatal("leftover of an interrupted pull was kept")
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Fatal("Prune removed a file it does not own")
	}

	before := reg.requests()
	mustPull(t, p, reg.ref("api", "1.0.0"), "payments", nil)
	if reg.requests() != before {
		t.Fatal("recently used chart was pruned")
	}
	mustPull(t, p, reg.ref("worker", "1.0.0"), "payments", nil)
	if reg.requests() == before {
		t.Fatal("pruned chart was still served from the cache")
	}
}

func TestPrune_MissingCacheDirectoryIsEmpty(t *testing.T) {
	p := &Puller{Dir: filepath.Join(t.TempDir(), "never-created")}
	if removed, err := p.Prune(time.Hour); removed != 0 || err != nil {
		t.Fatalf("Prune = %d, %v; want 0, nil", removed, err)
	}
}
