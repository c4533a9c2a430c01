package render

import (
	"bufio"
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
)

// Helm templates are executed in a child process of the running binary,
// never in the controller itself. Helm's engine takes no context, so a
// template that loops ({{ range until 100000000 }}), allocates without end
// (repeat, until) or nests include calls exponentially cannot be stopped in
// a goroutine, and one that recurses through tpl overflows the stack, which
// the Go runtime answers by aborting the whole process. A child is killed
// on a deadline, runs under a memory limit (RLIMIT_DATA: its heap, stacks
// and every private writable mapping; RLIMIT_AS would count the runtime's
// reserved address space, over 1 GiB before any work), and is read only up
// to an output limit; whatever it does, the controller keeps serving.

// Defaults for the zero values of HelmOptions' limits.
const (
	DefaultHelmTimeout              = 30 * time.Second
	DefaultHelmMaxOutputBytes int64 = desiredstate.MaxDecodedBytes
	DefaultHelmMaxMemoryBytes int64 = 1 << 30
)

// helmChildStack bounds the child's goroutine stacks well below its memory
// limit, so runaway recursion usually ends as a stack overflow the message
// can name.
const helmChildStack = 64 << 20

// helmChildEnv marks a process started to execute one chart's templates.
// The child's environment holds nothing else.
const helmChildEnv = "KUVRYN_SYNC_HELM_TEMPLATE_CHILD"

// stderrKept is how much of a child's stderr is kept to explain its death.
const stderrKept = 8 << 10

func init() {
	// Values are decoded YAML and JSON: nested maps and lists behind interfaces.
	gob.Register(map[string]any{})
	gob.Register([]any{})
	if os.Getenv(helmChildEnv) == "1" {
		os.Exit(serveTemplates(os.Stdin, os.Stdout, os.Stderr))
	}
}

// templateJob is everything the child needs to compute what the parent
// computed: the chart's files and the user's values before Helm merges them.
type templateJob struct {
	Files          []*loader.BufferedFile
	Values         map[string]any
	Release        ReleaseInfo
	KubeVersion    string
	MaxMemoryBytes int64
}

// ReleaseInfo is .Release as templates see it.
type ReleaseInfo struct {
	Name, Namespace string
}

type templateResult struct {
	Rendered map[string]string
	// Err is Helm's render error; gob carries no error values.
	Err string
}

// prepareTemplates loads the chart and computes the values its templates
// see, as helm install does. The parent runs it to validate; the child runs
// it again on the same input to render.
func prepareTemplates(files []*loader.BufferedFile, values map[string]any, rel ReleaseInfo, caps *chartutil.Capabilities) (*chart.Chart, chartutil.Values, error) {
	chrt, err := loader.LoadFiles(files)
	if err != nil {
		return nil, nil, fmt.Errorf("loading chart: %w", err)
	}
	// Disables subcharts by their conditions and tags, and imports values
	// from subcharts, as helm install does.
	if err := chartutil.ProcessDependenciesWithMerge(chrt, values); err != nil {
		return nil, nil, fmt.Errorf("processing chart dependencies: %w", err)
	}
	// Helm's own schema validation would fetch $ref URLs and read local
	// files; validateSchemas does the same checks with neither.
	top, err := chartutil.ToRenderValuesWithSchemaValidation(chrt, values, chartutil.ReleaseOptions{
		Name: rel.Name, Namespace: rel.Namespace, Revision: 1, IsInstall: true,
	}, caps, true)
	if err != nil {
		return nil, nil, fmt.Errorf("computing values: %w", err)
	}
	return chrt, top, nil
}

// serveTemplates is the child: it reads one job from in, writes one result
// to out and returns the exit code.
func serveTemplates(in io.Reader, out, errOut io.Writer) int {
	var job templateJob
	if err := gob.NewDecoder(in).Decode(&job); err != nil {
		fmt.Fprintf(errOut, "decoding the template job: %v\n", err)
		return 2
	}
	// Lowering a limit is always allowed; failing to means no limit, so
	// render nothing.
	limit := uint64(job.MaxMemoryBytes)
	if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		fmt.Fprintf(errOut, "limiting memory: %v\n", err)
		return 2
	}
	// Collect hard before the limit is reached, so a chart that fits is
	// not killed for garbage.
	debug.SetMemoryLimit(job.MaxMemoryBytes / 2)
	debug.SetMaxStack(helmChildStack)

	var res templateResult
	caps, err := capabilities(job.KubeVersion)
	if err == nil {
		var chrt *chart.Chart
		var top chartutil.Values
		if chrt, top, err = prepareTemplates(job.Files, job.Values, job.Release, caps); err == nil {
			var e engine.Engine
			res.Rendered, err = e.Render(chrt, top)
		}
	}
	if err != nil {
		res.Err = err.Error()
	}
	if err := gob.NewEncoder(out).Encode(&res); err != nil {
		fmt.Fprintf(errOut, "writing the rendered templates: %v\n", err)
		return 2
	}
	return 0
}

// encodeJob serializes a job before the parent's own Helm calls can touch
// values, so the child starts from exactly the parent's input.
func encodeJob(job templateJob) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&job); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// executeTemplates runs job in a child process under opts' limits. label
// names the chart in errors.
func executeTemplates(ctx context.Context, label string, job []byte, opts HelmOptions) (map[string]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, renderFailed(label, "rendering templates: finding the binary to run them in: %w", err)
	}
	timeout, maxOutput := opts.timeout(), opts.maxOutputBytes()
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, exe)
	cmd.Env = []string{helmChildEnv + "=1"}
	cmd.Dir = os.TempDir()
	cmd.Stdin = bytes.NewReader(job)
	stderr := &headBuffer{max: stderrKept}
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, renderFailed(label, "rendering templates: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, renderFailed(label, "rendering templates: starting %s: %w", exe, err)
	}
	data, readErr := io.ReadAll(io.LimitReader(stdout, maxOutput+1))
	tooLarge := int64(len(data)) > maxOutput
	if tooLarge {
		cancel()
	}
	waitErr := cmd.Wait()
	switch {
	case tooLarge:
		return nil, renderFailed(label, "rendering templates: the output exceeds the %d byte limit; refusing it", maxOutput)
	case ctx.Err() != nil:
		return nil, renderFailed("", "%w", ctx.Err())
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		return nil, renderFailed(label, "rendering templates took longer than the %s limit; refusing it (does a template loop without end?)", timeout)
	case waitErr != nil:
		return nil, childDied(label, stderr.String(), waitErr, opts)
	case readErr != nil:
		return nil, renderFailed(label, "rendering templates: reading the output: %w", readErr)
	}
	var res templateResult
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&res); err != nil {
		return nil, renderFailed(label, "rendering templates: decoding the output: %w", err)
	}
	if res.Err != "" {
		return nil, renderFailed(label, "rendering templates: %s", res.Err)
	}
	return res.Rendered, nil
}

// childDied explains a child that exited without a result, from the Go
// runtime's "fatal error:" line when there is one. Only that line is
// quoted: the stack trace after it is of no use to a chart's author.
func childDied(label, stderr string, waitErr error, opts HelmOptions) error {
	var fatal, first string
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if first == "" && line != "" {
			first = line
		}
		if rest, ok := strings.CutPrefix(line, "fatal error: "); ok {
			fatal = rest
			break
		}
	}
	switch {
	case strings.Contains(fatal, "stack overflow"):
		return renderFailed(label, "rendering templates: they recurse past the %d byte stack limit; refusing them (does a template include or tpl itself?)", helmChildStack)
	case outOfMemory(stderr):
		return renderFailed(label, "rendering templates: they need more than the %d byte memory limit; refusing them", opts.maxMemoryBytes())
	case fatal != "":
		return renderFailed(label, "rendering templates: the renderer failed (%v): %s", waitErr, fatal)
	case first != "":
		return renderFailed(label, "rendering templates: the renderer failed (%v): %s", waitErr, first)
	default:
		return renderFailed(label, "rendering templates: the renderer failed (%v)", waitErr)
	}
}

// outOfMemory reports whether a child's stderr shows it reached its
// memory limit: the Go runtime failing to map heap, or a new thread's stack.
func outOfMemory(stderr string) bool {
	for _, sign := range []string{"out of memory", "cannot allocate memory", "pthread_create failed"} {
		if strings.Contains(stderr, sign) {
			return true
		}
	}
	return false
}

// headBuffer keeps the first max bytes written to it and discards the rest.
type headBuffer struct {
	buf bytes.Buffer
	max int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := h.max - h.buf.Len(); room > 0 {
		h.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (h *headBuffer) String() string { return h.buf.String() }

func (o HelmOptions) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultHelmTimeout
}

func (o HelmOptions) maxOutputBytes() int64 {
	if o.MaxOutputBytes > 0 {
		return o.MaxOutputBytes
	}
	return DefaultHelmMaxOutputBytes
}

func (o HelmOptions) maxMemoryBytes() int64 {
	if o.MaxMemoryBytes > 0 {
		return o.MaxMemoryBytes
	}
	return DefaultHelmMaxMemoryBytes
}
