package render

// What a render read of the repository, so that a later commit which
// changes none of it need not be rendered again.

import (
	"path"
	"sort"
	"strings"
	"sync"
)

// Inputs are the repository paths one render asked for: every file or
// directory it named, whether it existed or not (a Kustomize probe for a
// kustomization.yaml counts), as named and as its symlinks resolve, and the
// directories whose entries it listed. Paths are repository-relative and
// slash-separated; the top is ".". The zero value is ready.
type Inputs struct {
	mu     sync.Mutex
	named  map[string]bool
	listed map[string]bool
}

// name records that the render asked for p.
func (in *Inputs) name(p string) {
	if in != nil {
		in.add(&in.named, p)
	}
}

// list records that the render read the entries of directory p: any file
// below it that appears, changes or goes may change what it renders.
func (in *Inputs) list(p string) {
	if in != nil {
		in.add(&in.listed, p)
	}
}

func (in *Inputs) add(set *map[string]bool, p string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if *set == nil {
		*set = map[string]bool{}
	}
	(*set)[cleanInput(p)] = true
}

func cleanInput(p string) string {
	p = path.Clean("/" + p)
	if p == "/" {
		return "."
	}
	return p[1:]
}

// Paths returns what was recorded, sorted: named paths, then listed
// directories, for logs and tests.
func (in *Inputs) Paths() (named, listed []string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for p := range in.named {
		named = append(named, p)
	}
	for p := range in.listed {
		listed = append(listed, p)
	}
	sort.Strings(named)
	sort.Strings(listed)
	return named, listed
}

// ChangedBy reports whether a commit that changed the files changed
// (repository-relative, slash-separated, sorted, as a Git diff lists them)
// may change what the render read: a changed file is a named path, lies
// above one (a file or symlink that became or replaced a directory), or
// lies below a listed directory.
func (in *Inputs) ChangedBy(changed []string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(changed) == 0 {
		return false
	}
	for p := range in.named {
		for a := p; a != "."; a = path.Dir(a) {
			if i := sort.SearchStrings(changed, a); i < len(changed) && changed[i] == a {
				return true
			}
		}
	}
	for d := range in.listed {
		if d == "." {
			return true
		}
		if i := sort.SearchStrings(changed, d+"/"); i < len(changed) && strings.HasPrefix(changed[i], d+"/") {
			return true
		}
	}
	return false
}
