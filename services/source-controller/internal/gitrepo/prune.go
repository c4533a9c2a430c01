package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Prune removes what the cache no longer needs and returns how many
// checkouts and clones it removed:
//
//   - a checkout whose commit is not in keep[key] (the commits Revisions and
//     Repositories still refer to) once unused for unusedFor. The grace
//     period protects a checkout made for a render whose Revision does not
//     exist yet.
//   - the clone of a Repository not in existing once unused for unusedFor.
//     Checkouts of a removed clone follow the rule above.
//   - work directories left by an interrupted operation of an earlier
//     process.
//
// A Repository's lock is held while its entries are examined, so Prune never
// removes what a concurrent Fetch or Checkout is using. It continues past
// errors and returns them joined.
func (c *Cache) Prune(ctx context.Context, keep map[RepoKey]map[string]bool, existing map[RepoKey]bool, unusedFor time.Duration, now time.Time) (checkouts, clones int, err error) {
	cutoff := now.Add(-unusedFor)
	var errs []error

	checkoutKeys, listErr := listKeys(filepath.Join(c.Dir, "checkouts"))
	errs = append(errs, listErr)
	for _, key := range checkoutKeys {
		n, err := c.pruneCheckouts(ctx, key, keep[key], cutoff)
		checkouts += n
		errs = append(errs, err)
	}

	cloneKeys, listErr := listKeys(filepath.Join(c.Dir, "repos"))
	errs = append(errs, listErr)
	for _, key := range cloneKeys {
		if existing[key] {
			continue
		}
		removed, err := c.pruneClone(ctx, key, cutoff)
		if removed {
			clones++
		}
		errs = append(errs, err)
	}

	errs = append(errs, c.pruneTemp())
	return checkouts, clones, errors.Join(errs...)
}

func (c *Cache) pruneCheckouts(ctx context.Context, key RepoKey, keep map[string]bool, cutoff time.Time) (int, error) {
	unlock, err := c.lock(ctx, key)
	if err != nil {
		return 0, err
	}
	defer unlock()

	dir := c.checkoutsDir(key)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("Repository %s: listing checkouts: %w", key, err)
	}
	removed := 0
	var errs []error
	for _, e := range entries {
		if keep[e.Name()] {
			continue
		}
		info, err := e.Info()
		if err != nil {
			errs = append(errs, fmt.Errorf("Repository %s: checkout %s: %w", key, e.Name(), err))
			continue
		}
		if info.ModTime().After(cutoff) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, fmt.Errorf("Repository %s: removing checkout %s: %w", key, e.Name(), err))
			continue
		}
		removed++
	}
	removeEmptyParents(dir)
	return removed, errors.Join(errs...)
}

func (c *Cache) pruneClone(ctx context.Context, key RepoKey, cutoff time.Time) (bool, error) {
	unlock, err := c.lock(ctx, key)
	if err != nil {
		return false, err
	}
	defer unlock()

	dir := c.cloneDir(key)
	info, err := os.Stat(filepath.Join(dir, lastUsedFile))
	if errors.Is(err, os.ErrNotExist) {
		info, err = os.Stat(dir)
	}
	if err != nil {
		return false, fmt.Errorf("Repository %s: reading last use of clone: %w", key, err)
	}
	if info.ModTime().After(cutoff) {
		return false, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return false, fmt.Errorf("Repository %s: removing clone: %w", key, err)
	}
	removeEmptyParents(dir)
	return true, nil
}

// pruneTemp removes work directories no operation of this Cache is writing,
// which only an interrupted earlier process leaves behind.
func (c *Cache) pruneTemp() error {
	entries, err := os.ReadDir(c.tmpDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing Git cache work directories: %w", err)
	}
	var errs []error
	for _, e := range entries {
		c.mu.Lock()
		busy := c.inflight[e.Name()]
		c.mu.Unlock()
		if busy {
			continue
		}
		if err := os.RemoveAll(filepath.Join(c.tmpDir(), e.Name())); err != nil {
			errs = append(errs, fmt.Errorf("removing Git cache work directory %s: %w", e.Name(), err))
		}
	}
	return errors.Join(errs...)
}

// listKeys lists <namespace>/<name> directories under dir, skipping entries
// that are not valid keys.
func listKeys(dir string) ([]RepoKey, error) {
	namespaces, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	var keys []RepoKey
	var errs []error
	for _, ns := range namespaces {
		if !ns.IsDir() {
			continue
		}
		names, err := os.ReadDir(filepath.Join(dir, ns.Name()))
		if err != nil {
			errs = append(errs, fmt.Errorf("listing %s: %w", filepath.Join(dir, ns.Name()), err))
			continue
		}
		for _, name := range names {
			key := RepoKey{Namespace: ns.Name(), Name: name.Name()}
			if name.IsDir() && key.validate() == nil {
				keys = append(keys, key)
			}
		}
	}
	return keys, errors.Join(errs...)
}

// removeEmptyParents drops dir and its namespace directory when empty;
// os.Remove refuses non-empty directories, which is the point.
func removeEmptyParents(dir string) {
	_ = os.Remove(dir)
	_ = os.Remove(filepath.Dir(dir))
}
