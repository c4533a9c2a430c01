// Package render turns one Application's source, at one checked-out commit,
// into Kubernetes objects: a directory of YAML, a kustomization or a Helm
// chart.
//
// Renders read the repository only through a file system rooted at the
// checkout, which refuses paths and symlinks that leave it, and pass every
// file they read (manifests, every file Kustomize reads, Helm valuesFiles and
// the values.yaml of charts from Git) through a Decryptor in memory, so
// decrypted plaintext never touches the disk and files a render does not
// read are never decrypted. Renders make no network calls: Kustomize remote
// resources are refused and Helm templates render without a cluster.
package render

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Decryptor decrypts files as renders read them.
type Decryptor interface {
	// Decrypt returns data unchanged when it is not SOPS-encrypted, the
	// plaintext when it is, or an error when it cannot be decrypted (for
	// example, encrypted while the Application has no keys). path is the
	// repository-relative, slash-separated path of the file.
	Decrypt(path string, data []byte) ([]byte, error)
}

// Request is one render of one Application at one commit.
type Request struct {
	// Root is the absolute path of the checked-out commit.
	Root string
	// Path is the source path inside the repository, relative; empty is
	// the repository's top.
	Path string
	// Type picks the renderer; empty is yaml.
	Type syncv1.RenderType
	// Application is the Application's name, the default Helm release name.
	Application string
	// Helm configures the helm renderer.
	Helm HelmOptions
	// Decryptor sees every file a render reads. Required.
	Decryptor Decryptor
	// Inputs, when set, receives every path of the repository the render
	// asks for.
	Inputs *Inputs
}

// Render renders req into objects. Every error is an *Error whose Reason is
// the condition reason to report and whose message names the file and what
// is wrong; no message repeats decrypted data or valuesFrom values.
func Render(ctx context.Context, req Request) ([]*unstructured.Unstructured, error) {
	secrets := newRedactor(req.Root)
	objs, err := render(ctx, req, secrets)
	if err != nil {
		// Collapsing comes after scrubbing, so no cut ever splits a value
		// the redactor would have recognised whole.
		return nil, collapseNesting(secrets.scrubError(asError("", err)))
	}
	return objs, nil
}

func render(ctx context.Context, req Request, secrets *redactor) ([]*unstructured.Unstructured, error) {
	if req.Decryptor == nil {
		return nil, renderFailed("", "no Decryptor: every render needs one to refuse encrypted files it cannot decrypt")
	}
	if !filepath.IsAbs(req.Root) {
		return nil, renderFailed("", "repository checkout %q is not an absolute path", req.Root)
	}
	dir, err := cleanRelative(req.Path)
	if err != nil {
		return nil, validationFailure(req.Path, "source path %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, renderFailed("", "%w", err)
	}

	repo, err := openRepo(req.Root, req.Decryptor, secrets)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	repo.inputs = req.Inputs
	secrets.addRoot(repo.root)

	var objs []object
	switch req.Type {
	case "", syncv1.RenderYAML:
		objs, err = renderYAML(repo, dir)
	case syncv1.RenderKustomize:
		objs, err = renderKustomize(repo, dir)
	case syncv1.RenderHelm:
		objs, err = renderHelm(ctx, repo, req, dir)
	default:
		return nil, validationFailure("", "unknown render type %q; want yaml, kustomize or helm", req.Type)
	}
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, renderFailed("", "%w", err)
	}
	if err := checkDuplicates(objs); err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o.u
	}
	return out, nil
}

// cleanRelative validates a path from an Application (source path,
// valuesFiles entry) and returns it cleaned, slash-separated; "" is ".".
func cleanRelative(p string) (string, error) {
	if p == "" {
		return ".", nil
	}
	if strings.HasPrefix(p, "/") || filepath.IsAbs(p) {
		return "", errors.New("must be a relative path")
	}
	for _, seg := range strings.Split(filepath.ToSlash(p), "/") {
		if seg == ".." {
			return "", errors.New("must not contain '..'")
		}
	}
	return path.Clean(filepath.ToSlash(p)), nil
}

// requireDir fails unless dir (repository-relative) is a directory.
func requireDir(repo *repoFS, dir string) error {
	fi, rel, err := repo.stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return renderFailed(dir, "path does not exist in the repository")
	}
	if err != nil {
		return relabel(err, dir)
	}
	if !fi.IsDir() {
		return renderFailed(rel, "path is not a directory")
	}
	return nil
}

// manifestExtensions are the files the yaml renderer reads.
var manifestExtensions = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// renderYAML reads every manifest file below dir, in lexical order of path.
// Hidden files and directories (.git, .github, .ksync.yaml) are not
// manifests and are skipped.
func renderYAML(repo *repoFS, dir string) ([]object, error) {
	if err := requireDir(repo, dir); err != nil {
		return nil, err
	}
	var out []object
	skipHidden := func(rel string, _ fs.FileInfo) bool { return strings.HasPrefix(path.Base(rel), ".") }
	err := repo.walkFiles(dir, skipHidden, func(rel string) error {
		if !manifestExtensions[strings.ToLower(path.Ext(rel))] {
			return nil
		}
		data, file, decrypted, err := repo.readFile(rel)
		if err != nil {
			return err
		}
		objs, err := decodeObjects(file, data, decrypted)
		if err != nil {
			return err
		}
		out = append(out, objs...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
