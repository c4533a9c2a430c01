package console

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// SessionKeyField is the key of the session Secret's data holding the
// session key.
const SessionKeyField = "session-key"

// SessionKey reads the session key from the Secret key (namespace/name),
// creating the Secret with a random key when it is absent, so every replica
// and every restart seals and opens the same cookies. Creating (not
// applying) makes the first replica's key win a race between replicas.
func SessionKey(ctx context.Context, c client.Client, reader client.Reader, key types.NamespacedName) ([]byte, error) {
	var out []byte
	err := retry.OnError(retry.DefaultBackoff, transient, func() error {
		var s corev1.Secret
		err := reader.Get(ctx, key, &s)
		if apierrors.IsNotFound(err) {
			err = createSessionSecret(ctx, c, key)
			if err == nil || apierrors.IsAlreadyExists(err) {
				err = reader.Get(ctx, key, &s)
			}
		}
		if err != nil {
			return err
		}
		out = s.Data[SessionKeyField]
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the console session key from Secret %s: %w", key, err)
	}
	if len(out) != KeySize {
		return nil, fmt.Errorf("Secret %s: data[%s] holds %d bytes; want %d random bytes (delete the Secret to have the console generate one)",
			key, SessionKeyField, len(out), KeySize)
	}
	return out, nil
}

func createSessionSecret(ctx context.Context, c client.Client, key types.NamespacedName) error {
	k := make([]byte, KeySize)
	if _, err := rand.Read(k); err != nil {
		return err
	}
	return c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
			Labels: map[string]string{"app.kubernetes.io/component": "console"}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{SessionKeyField: k},
	}, client.FieldOwner(syncv1.FieldManagerWeb))
}

// transient reports errors worth retrying: the API server busy, timing out
// or unreachable.
func transient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err) ||
		apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsAlreadyExists(err) {
		return false
	}
	return true
}
