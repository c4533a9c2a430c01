package packaging_test

import (
	"bytes"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// dockerfile is one of the repository's Dockerfiles as BuildKit's parser
// reads it.
type dockerfile struct {
	name string
	// args are the ARGs before the first FROM, with their defaults: the
	// only ones a FROM line can use.
	args   map[string]string
	stages []*stage
}

type stage struct {
	line           int
	from, platform string // the FROM image and --platform, as written
	name           string
	workdir        string
	stageArgs      []string
	copies         []copyFrom
	runs           []runInstr
	user           string // the last USER, as written
}

// copyFrom is one COPY or ADD: from is its --from stage, empty for the
// build context.
type copyFrom struct {
	line       int
	from, dest string
	srcs       []string
}

// runInstr is one RUN, its command split into words as a shell would, variables
// left as written.
type runInstr struct {
	line  int
	words []string
}

// unexpanded leaves every ${NAME} as it is written, so that a RUN's words
// show the variables the build passes.
type unexpanded struct{}

func (unexpanded) Get(name string) (string, bool) { return "${" + name + "}", true }
func (unexpanded) Keys() []string                 { return nil }

// defaults expands variables to the ARG defaults, and to nothing when an
// ARG has none, as a build without --build-arg does.
type defaults map[string]string

func (d defaults) Get(name string) (string, bool) { return d[name], true }
func (d defaults) Keys() []string                 { return nil }

func parseDockerfile(t *testing.T, name string) *dockerfile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	res, err := parser.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: BuildKit's parser refuses it: %v", name, err)
	}
	lex := shell.NewLex(res.EscapeToken)
	df := &dockerfile{name: name, args: map[string]string{}}
	var cur *stage
	for _, n := range res.AST.Children {
		var words []string
		for w := n.Next; w != nil; w = w.Next {
			words = append(words, w.Value)
		}
		switch strings.ToLower(n.Value) {
		case "arg":
			for _, w := range words {
				k, v, _ := strings.Cut(w, "=")
				if cur == nil {
					df.args[k] = v
				} else {
					cur.stageArgs = append(cur.stageArgs, k)
				}
			}
		case "from":
			cur = &stage{line: n.StartLine, from: words[0], workdir: "/"}
			if len(words) == 3 && strings.EqualFold(words[1], "as") {
				cur.name = words[2]
			}
			for _, f := range n.Flags {
				if p, ok := strings.CutPrefix(f, "--platform="); ok {
					cur.platform = p
				}
			}
			df.stages = append(df.stages, cur)
		case "workdir":
			cur.workdir = path.Join(cur.workdir, words[0])
		case "copy", "add":
			c := copyFrom{line: n.StartLine, srcs: words[:len(words)-1], dest: words[len(words)-1]}
			for _, f := range n.Flags {
				if from, ok := strings.CutPrefix(f, "--from="); ok {
					c.from = from
				}
			}
			cur.copies = append(cur.copies, c)
		case "run":
			w, err := lex.ProcessWords(strings.Join(words, " "), unexpanded{})
			if err != nil {
				t.Fatalf("%s:%d: RUN: %v", name, n.StartLine, err)
			}
			cur.runs = append(cur.runs, runInstr{line: n.StartLine, words: w})
		case "user":
			cur.user = words[0]
		}
	}
	if len(df.stages) == 0 {
		t.Fatalf("%s has no FROM", name)
	}
	return df
}

func (df *dockerfile) final() *stage { return df.stages[len(df.stages)-1] }

// base is the image a stage starts from with the default build arguments.
func (df *dockerfile) base(s *stage) string {
	img, _, err := shell.NewLex('\\').ProcessWord(s.from, defaults(df.args))
	if err != nil {
		return s.from
	}
	return img
}

// goBuild is a `go build` of a stage: its environment assignments, the
// packages it names and the line it is on.
type goBuild struct {
	line     int
	env      []string
	packages []string
}

func (s *stage) goBuilds() []goBuild {
	var builds []goBuild
	for _, r := range s.runs {
		for i := 0; i+1 < len(r.words); i++ {
			if r.words[i] != "go" || r.words[i+1] != "build" {
				continue
			}
			b := goBuild{line: r.line}
			for j := i - 1; j >= 0 && strings.Contains(r.words[j], "="); j-- {
				b.env = append(b.env, r.words[j])
			}
			for _, w := range r.words[i+2:] {
				if w == "&&" || w == ";" || w == "||" {
					break
				}
				if strings.HasPrefix(w, "./") {
					b.packages = append(b.packages, w)
				}
			}
			builds = append(builds, b)
		}
	}
	return builds
}

// copied reports whether a file or directory of the repository (a path
// relative to its root) is copied from the build context into the stage at
// the same path under the stage's WORKDIR, where the workspace expects it.
func (s *stage) copied(rel string) bool {
	for _, c := range s.copies {
		if c.from != "" {
			continue
		}
		dest := c.dest
		if !path.IsAbs(dest) {
			dest = path.Join(s.workdir, dest)
		}
		for _, src := range c.srcs {
			src = path.Clean(src)
			if info, err := os.Stat(filepath.Join(root, src)); err == nil && info.IsDir() {
				// A directory's contents land in the destination.
				if (rel == src || strings.HasPrefix(rel, src+"/")) && path.Clean(dest) == path.Join(s.workdir, src) {
					return true
				}
				continue
			}
			target := dest
			if strings.HasSuffix(c.dest, "/") || len(c.srcs) > 1 {
				target = path.Join(dest, path.Base(src))
			}
			if rel == src && target == path.Join(s.workdir, src) {
				return true
			}
		}
	}
	return false
}

func dockerfileNames(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "Dockerfile.*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no Dockerfile.* in the repository")
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	return names
}

// dockerignore is the build context's filter, read as BuildKit reads it.
func dockerignore(t *testing.T) *patternmatcher.PatternMatcher {
	t.Helper()
	f, err := os.Open(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		t.Fatalf(".dockerignore: %v", err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatalf(".dockerignore: %v", err)
	}
	return pm
}

func excluded(t *testing.T, pm *patternmatcher.PatternMatcher, rel string) bool {
	t.Helper()
	out, err := pm.MatchesOrParentMatches(filepath.ToSlash(rel))
	if err != nil {
		t.Fatalf(".dockerignore against %s: %v", rel, err)
	}
	return out
}

// TestDockerfiles_BuildTheBinaryEachDeploymentRuns: for every Deployment of
// deploy/default, the Dockerfile of its image (…/kuvryn-sync-<x> is built by
// Dockerfile.<x>) builds the binary the Deployment runs in a stage and
// copies it from that stage into the image. The images themselves are not
// built here: there is no container engine.
func TestDockerfiles_BuildTheBinaryEachDeploymentRuns(t *testing.T) {
	for _, d := range ofKind(deployDefaultAll(t), "Deployment") {
		c := manager(t, d)
		image := imageRepository(c["image"].(string))
		file := "Dockerfile." + strings.TrimPrefix(path.Base(image), "kuvryn-sync-")
		if _, err := os.Stat(filepath.Join(root, file)); err != nil {
			t.Errorf("%s runs image %s, which no %s builds: %v", idOf(d), image, file, err)
			continue
		}
		df := parseDockerfile(t, file)
		binary := path.Base(stringsAt(t, c, "command")[0])
		var builder *stage
		for _, s := range df.stages {
			for _, b := range s.goBuilds() {
				if slices.Contains(b.packages, "./services/"+binary) {
					builder = s
				}
			}
		}
		if builder == nil {
			t.Errorf("%s does not go build ./services/%s, which %s runs", file, binary, idOf(d))
			continue
		}
		found := false
		for _, cp := range df.final().copies {
			if cp.from == builder.name && slices.ContainsFunc(cp.srcs, func(s string) bool { return path.Base(s) == binary }) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: the final stage does not COPY --from=%s the %s binary that %s runs", file, builder.name, binary, idOf(d))
		}
	}
}

// TestDockerfiles_CopyEverythingTheirBuildReads: every COPY source of every
// Dockerfile exists in the repository and is not left out of the build
// context by .dockerignore; every package a `go build` names exists; and
// every file that build compiles or embeds, with every go.mod of the
// workspace, is in the context and copied into the build stage at its own
// path, so the workspace loads as it does here.
func TestDockerfiles_CopyEverythingTheirBuildReads(t *testing.T) {
	ignore := dockerignore(t)
	modules := goList(t, []string{"-m", "-f", "{{.Dir}}"}, nil)
	for _, name := range dockerfileNames(t) {
		df := parseDockerfile(t, name)
		for _, s := range df.stages {
			for _, c := range s.copies {
				if c.from != "" {
					continue
				}
				for _, src := range c.srcs {
					matches, err := filepath.Glob(filepath.Join(root, src))
					if err != nil || len(matches) == 0 {
						t.Errorf("%s:%d: COPY %s: no such file in the repository", name, c.line, src)
						continue
					}
					for _, m := range matches {
						if rel := relToRoot(t, m); excluded(t, ignore, rel) {
							t.Errorf("%s:%d: COPY %s: .dockerignore leaves %s out of the build context", name, c.line, src, rel)
						}
					}
				}
			}
			builds := s.goBuilds()
			if len(builds) == 0 {
				continue
			}
			// The workspace: go.work, and every module's go.mod.
			need := []string{"go.work", "go.work.sum"}
			for _, dir := range modules {
				need = append(need, path.Join(relToRoot(t, dir), "go.mod"))
			}
			for _, b := range builds {
				for _, p := range b.packages {
					files, _ := filepath.Glob(filepath.Join(root, p, "*.go"))
					if len(files) == 0 {
						t.Errorf("%s:%d: go build %s: no Go package in the repository there", name, b.line, p)
					}
				}
				// What the build reads, for the platform the images run on.
				deps := goList(t, append([]string{"-deps", "-f", "{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}\n{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}\n{{end}}"}, b.packages...),
					[]string{"GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0"})
				for _, f := range deps {
					if rel, err := filepath.Rel(root, f); err == nil && !strings.HasPrefix(rel, "..") {
						need = append(need, filepath.ToSlash(rel))
					}
				}
			}
			// One error per directory: a missing COPY leaves out every file
			// under it.
			reported := map[string]bool{}
			for _, rel := range slices.Compact(slices.Sorted(slices.Values(need))) {
				if reported[path.Dir(rel)] {
					continue
				}
				switch {
				case excluded(t, ignore, rel):
					t.Errorf("%s: the build stage at line %d reads %s, which .dockerignore leaves out of the build context", name, s.line, rel)
				case !s.copied(rel):
					t.Errorf("%s: the build stage at line %d reads %s, which no COPY puts at %s", name, s.line, rel, path.Join(s.workdir, rel))
				default:
					continue
				}
				reported[path.Dir(rel)] = true
			}
		}
	}
}

// TestDockerfiles_RunAsNonRootFromAStaticBase: every image starts from base
// images given as build arguments; by default the final stage is scratch or
// distroless static, where only static binaries run, so every go build
// sets CGO_ENABLED=0; the final stage runs as a numeric non-root user,
// which the Pods' runAsNonRoot can verify; and the build stage runs on the
// build machine's platform and compiles for the target's, so the arm64
// image holds arm64 binaries.
func TestDockerfiles_RunAsNonRootFromAStaticBase(t *testing.T) {
	staticBase := regexp.MustCompile(`^(scratch|gcr\.io/distroless/static(-debian[0-9]+)?(:[\w.-]+)?(@sha256:[0-9a-f]{64})?)$`)
	nonRoot := regexp.MustCompile(`^[1-9][0-9]*(:[0-9]+)?$`)
	for _, name := range dockerfileNames(t) {
		df := parseDockerfile(t, name)
		for _, s := range df.stages {
			if !regexp.MustCompile(`^\$\{?\w+\}?$`).MatchString(s.from) {
				t.Errorf("%s:%d: FROM %s, want a base image from a build argument", name, s.line, s.from)
			}
			for _, b := range s.goBuilds() {
				for _, want := range []string{"CGO_ENABLED=0", "GOOS=${TARGETOS}", "GOARCH=${TARGETARCH}"} {
					if !slices.Contains(b.env, want) {
						t.Errorf("%s:%d: go build without %s", name, b.line, want)
					}
				}
				if s.platform != "${BUILDPLATFORM}" {
					t.Errorf("%s:%d: the build stage runs on platform %q, want ${BUILDPLATFORM}", name, s.line, s.platform)
				}
				for _, arg := range []string{"TARGETOS", "TARGETARCH"} {
					if !slices.Contains(s.stageArgs, arg) {
						t.Errorf("%s:%d: the build stage does not declare ARG %s", name, s.line, arg)
					}
				}
			}
		}
		final := df.final()
		if base := df.base(final); !staticBase.MatchString(base) {
			t.Errorf("%s:%d: the final stage starts from %q by default, want scratch or gcr.io/distroless/static", name, final.line, base)
		}
		if !nonRoot.MatchString(final.user) {
			t.Errorf("%s: the final stage runs as USER %q, want a numeric non-root user such as 65532:65532", name, final.user)
		}
	}
}

func relToRoot(t *testing.T, p string) string {
	t.Helper()
	rel, err := filepath.Rel(root, p)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(rel)
}

// goList runs go list in the repository's workspace and returns its
// non-empty output lines.
func goList(t *testing.T, args, env []string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work")), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		t.Fatalf("go list %s printed nothing", strings.Join(args, " "))
	}
	return lines
}
