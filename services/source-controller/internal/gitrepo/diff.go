package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ChangedPaths lists, sorted and without repeats, the paths of the files
// that differ between commits from and to of a Repository's clone: added,
// deleted and modified files, and both names of a moved one. Both commits
// must have been fetched; a commit the clone lacks is ErrNotFetched.
func (c *Cache) ChangedPaths(ctx context.Context, key RepoKey, from, to string) ([]string, error) {
	if err := key.validate(); err != nil {
		return nil, err
	}
	for _, commit := range []string{from, to} {
		if !isCommitHash(commit) {
			return nil, fmt.Errorf("Repository %s: %q is not a full commit hash", key, commit)
		}
	}
	unlock, err := c.lock(ctx, key)
	if err != nil {
		return nil, err
	}
	defer unlock()

	repo, closeClone, err := c.openClone(key)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, fmt.Errorf("Repository %s has no clone to compare commits in; fetch it first: %w", key, ErrNotFetched)
	}
	if err != nil {
		return nil, fmt.Errorf("Repository %s: opening clone: %w", key, err)
	}
	defer closeClone()
	fromTree, err := commitTree(key, repo, from)
	if err != nil {
		return nil, err
	}
	toTree, err := commitTree(key, repo, to)
	if err != nil {
		return nil, err
	}
	// Renames need no detection: both names are reported either way.
	changes, err := object.DiffTreeWithOptions(ctx, fromTree, toTree, &object.DiffTreeOptions{})
	if err != nil {
		return nil, fmt.Errorf("Repository %s: comparing commit %s with %s: %w", key, from, to, err)
	}
	paths := make([]string, 0, 2*len(changes))
	for _, ch := range changes {
		for _, name := range []string{ch.From.Name, ch.To.Name} {
			if name != "" {
				paths = append(paths, name)
			}
		}
	}
	slices.Sort(paths)
	return slices.Compact(paths), nil
}
