package planner

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// GetLive reads obj's live state as the client's user; nil when it does not exist.
func GetLive(ctx context.Context, c client.Client, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), live)
	switch {
	case err == nil:
		return live, nil
	case apierrors.IsNotFound(err):
		return nil, nil
	default:
		return nil, FailureOf(obj, "read", err, syncv1.ReasonApplyFailed)
	}
}
