package repository

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// MinPollInterval is the shortest poll the API server accepts; a Repository
// stored before that rule existed polls no faster.
const MinPollInterval = 5 * time.Second

// The source-controller watches and reads Repositories unstructured: a
// typed informer fails to decode its whole list when one Repository holds a
// value its Go type cannot parse (a pollInterval of "soon", stored before
// the API server refused it), and then sees no Repository in any namespace.
// Decoding one object at a time confines the damage to that object.

// Unstructured returns an empty Repository to read or watch unstructured.
func Unstructured() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(syncv1.GroupVersion.WithKind("Repository"))
	return u
}

// UnstructuredList returns an empty RepositoryList to list unstructured.
func UnstructuredList() *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(syncv1.GroupVersion.WithKind("RepositoryList"))
	return l
}

// SpecError is a Repository whose stored spec cannot be decoded.
type SpecError struct {
	Namespace, Name string
	Field           string
	Err             error
}

func (e *SpecError) Error() string {
	return fmt.Sprintf("Repository %s/%s: %s: %v", e.Namespace, e.Name, e.Field, e.Err)
}

func (e *SpecError) Unwrap() error { return e.Err }

// Get reads one Repository through r, unstructured, and decodes it. A spec
// that does not decode returns the Repository without that field, with a
// *SpecError, so its status can still say what is wrong.
func Get(ctx context.Context, r client.Reader, key client.ObjectKey) (*syncv1.Repository, error) {
	u := Unstructured()
	if err := r.Get(ctx, key, u); err != nil {
		return nil, err
	}
	return Decode(u)
}

// Decode converts u into a Repository; see Get for a spec that does not decode.
func Decode(u *unstructured.Unstructured) (*syncv1.Repository, error) {
	repo := &syncv1.Repository{}
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, repo)
	if err == nil {
		return repo, nil
	}
	// Drop the duration that does not parse, which is the one field whose
	// Go type is stricter than its schema used to be, and decode the rest.
	specErr := &SpecError{Namespace: u.GetNamespace(), Name: u.GetName(), Field: "spec", Err: err}
	if v, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "pollInterval"); found {
		s, ok := v.(string)
		if _, perr := time.ParseDuration(s); !ok || perr != nil {
			specErr.Field = "spec.pollInterval"
			specErr.Err = fmt.Errorf("%q is not a duration such as 30s, 5m or 1h", fmt.Sprint(v))
			c := u.DeepCopy()
			unstructured.RemoveNestedField(c.Object, "spec", "pollInterval")
			repo = &syncv1.Repository{}
			if runtime.DefaultUnstructuredConverter.FromUnstructured(c.Object, repo) == nil {
				return repo, specErr
			}
		}
	}
	repo = &syncv1.Repository{}
	repo.SetGroupVersionKind(u.GroupVersionKind())
	repo.SetNamespace(u.GetNamespace())
	repo.SetName(u.GetName())
	repo.SetUID(u.GetUID())
	repo.SetGeneration(u.GetGeneration())
	return repo, specErr
}
