package harness

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ViewerRole is the ClusterRole deploy/rbac ships for people who use the
// read-only console.
const ViewerRole = "kuvryn-sync-viewer"

// ViewerToken makes a ServiceAccount name in namespace, binds it to the
// viewer ClusterRole and returns a token for it valid for ttl: what a
// person pastes into the console's sign-in page.
func (e *Env) ViewerToken(ctx context.Context, namespace, name string, ttl time.Duration) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := e.Client.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ViewerRole + "-" + namespace + "-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ViewerRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}},
	}
	if err := e.Client.Create(ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	clientset, err := kubernetes.NewForConfig(e.CP.Config)
	if err != nil {
		return "", err
	}
	seconds := int64(ttl.Seconds())
	tr, err := clientset.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return tr.Status.Token, nil
}
