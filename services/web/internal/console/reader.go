package console

import (
	"context"
	"errors"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuvryn/kuvryn-sync/pkg/manager"
)

type tokenKey struct{}

// asUser returns ctx carrying the bearer token every read made with it
// sends, so the API server's RBAC decides what the person sees.
func asUser(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenKey{}, token)
}

var errNoUserToken = errors.New("console: a read without a signed-in user's token")

// userTransport sets the Authorization header from the request's context
// and refuses to send a request without one, so no read ever runs with the
// console's own rights or anonymously.
type userTransport struct{ next http.RoundTripper }

func (t userTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	token, _ := r.Context().Value(tokenKey{}).(string)
	if token == "" {
		return nil, errNoUserToken
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+token)
	return t.next.RoundTrip(r)
}

// userClient is one client for every user: the API server's address and CA
// from cfg, none of its credentials, the token from each call's context.
// It watches too, for the pages' live updates (live.go).
func userClient(cfg *rest.Config, mapper meta.RESTMapper) (client.WithWatch, error) {
	c := rest.AnonymousClientConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return userTransport{next: rt} })
	// The API server's priority and fairness limits each user; a
	// client-side limit would make one busy person slow everyone.
	c.QPS, c.Burst = -1, 0
	return client.NewWithWatch(c, client.Options{Scheme: manager.Scheme(), Mapper: mapper})
}

// reviewer authenticates a bearer token with a TokenReview, made with the
// console's own credentials.
type reviewer struct{ clientset kubernetes.Interface }

// errNotAuthenticated is a token the API server does not accept.
var errNotAuthenticated = errors.New("the API server does not accept this token")

// review returns the user name the token authenticates as.
func (r reviewer) review(ctx context.Context, token string) (string, error) {
	var out *authenticationv1.TokenReview
	err := retry.OnError(retry.DefaultBackoff, transient, func() error {
		var err error
		out, err = r.clientset.AuthenticationV1().TokenReviews().Create(ctx,
			&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return "", err
	}
	if !out.Status.Authenticated {
		return "", errNotAuthenticated
	}
	return out.Status.User.Username, nil
}
