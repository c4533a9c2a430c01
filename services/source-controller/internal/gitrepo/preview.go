package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
)

// FetchRef fetches one ref of a preview, such as refs/pull/12/head, into the
// Repository's clone under the same name and returns the commit it points
// to. The clone must exist (Fetch makes it), so the ref's objects share the
// clone, its lock and its pruning with the followed revision.
func (c *Cache) FetchRef(ctx context.Context, key RepoKey, repoURL string, auth *Auth, ref string) (string, error) {
	if err := key.validate(); err != nil {
		return "", err
	}
	name := plumbing.ReferenceName(ref)
	if !strings.HasPrefix(ref, "refs/") || name.Validate() != nil {
		return "", fmt.Errorf("Repository %s: %q is not a Git ref", key, ref)
	}
	method, err := auth.method(key, repoURL)
	if err != nil {
		return "", err
	}
	unlock, err := c.lock(ctx, key)
	if err != nil {
		return "", err
	}
	defer unlock()

	repo, err := git.PlainOpen(c.cloneDir(key))
	if err != nil || remoteURL(repo) != repoURL {
		return "", fmt.Errorf("Repository %s has no clone of %s to fetch %s into; fetch it first: %w", key, redactURL(repoURL), ref, ErrNotFetched)
	}
	err = repo.FetchContext(ctx, &git.FetchOptions{
		RemoteName: remoteName,
		RefSpecs:   []config.RefSpec{config.RefSpec("+" + ref + ":" + ref)},
		Auth:       method,
		Tags:       git.NoTags,
		Force:      true,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return "", fmt.Errorf("Repository %s: fetching %s from %s: %w", key, ref, redactURL(repoURL), err)
	}
	c.touchClone(key)
	got, err := repo.Reference(name, true)
	if err != nil {
		return "", fmt.Errorf("Repository %s: reading %s: %w", key, ref, err)
	}
	commit, err := peel(repo, got.Hash())
	if err != nil {
		return "", fmt.Errorf("Repository %s: %s: %w", key, ref, err)
	}
	return commit.String(), nil
}

// ListBranches lists the remote's branch names, short (without
// refs/heads/), without fetching anything.
func (c *Cache) ListBranches(ctx context.Context, key RepoKey, repoURL string, auth *Auth) ([]string, error) {
	if err := key.validate(); err != nil {
		return nil, err
	}
	method, err := auth.method(key, repoURL)
	if err != nil {
		return nil, err
	}
	remote := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: remoteName, URLs: []string{repoURL}})
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: method})
	if err != nil {
		return nil, fmt.Errorf("Repository %s: listing the branches of %s: %w", key, redactURL(repoURL), err)
	}
	var branches []string
	for _, r := range refs {
		if r.Name().IsBranch() {
			branches = append(branches, r.Name().Short())
		}
	}
	return branches, nil
}
