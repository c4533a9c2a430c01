// Package receiver is the push and image webhook receiver: it authenticates
// a Git host's or a registry's request against the webhook Secret of the
// Repository or ImagePolicy it names and stamps the annotation that makes
// the source-controller fetch, or the image-controller scan, now, or, for a
// pull or merge request, preview it.
package receiver

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/web/internal/receiver/pushpayload"
)

// MaxBodyBytes is the largest request body read: 1 MB.
const MaxBodyBytes = 1 << 20

// Rate limits of the guide: per remote address before authentication, per
// Repository or ImagePolicy after it.
const (
	addressBurst     = 50
	addressPerSecond = 5
	objectBurst      = 10
	objectPerSecond  = 1
	// maxLimiterKeys bounds each limiter's memory.
	maxLimiterKeys = 10000
)

// decoySecret is the Secret read when a request names no Secret: upper case
// makes it an invalid object name, so it never exists, yet the API server
// looks it up as it looks up any other.
const decoySecret = "Kuvryn-Sync-No-Webhook-Secret"

// TokenKey is the key of the webhook Secret holding the shared token.
const TokenKey = "token"

// Options configure New.
type Options struct {
	// Client reads Repositories and ImagePolicies, from a cache in the
	// service, and applies the request annotations.
	Client client.Client
	// Secrets reads webhook Secrets one by one, uncached, and a Repository
	// whose cached copy was stale when a preview request was stamped.
	Secrets client.Reader
	// Registerer receives the request counter.
	Registerer prometheus.Registerer
	Log        logr.Logger
	// Now defaults to time.Now.
	Now func() time.Time
	// Replicas is the number of replicas serving the receiver, whose
	// shares of the rate limits add up to the guide's; nil: 1.
	Replicas func() int
}

// Receiver serves POST /hooks/<namespace>/<repository> and
// POST /hooks/imagepolicies/<namespace>/<name>.
type Receiver struct {
	client   client.Client
	secrets  client.Reader
	log      logr.Logger
	now      func() time.Time
	requests *prometheus.CounterVec
	// decoy is a random key no caller knows, authenticated against when a
	// request names no token.
	decoy []byte

	pushByAddress  *keyedLimiter
	pushByRepo     *keyedLimiter
	imageByAddress *keyedLimiter
	imageByPolicy  *keyedLimiter
}

// New builds a Receiver and registers its request counter.
func New(o Options) (*Receiver, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Replicas == nil {
		o.Replicas = func() int { return 1 }
	}
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kuvryn_sync_webhook_receiver_requests_total",
		Help: "Requests to the push and image webhook receiver, by result.",
	}, []string{"result"})
	// Every result is exported from the start, at zero.
	for _, r := range results {
		requests.WithLabelValues(string(r))
	}
	if err := o.Registerer.Register(requests); err != nil {
		return nil, fmt.Errorf("registering the webhook receiver's metric: %w", err)
	}
	decoy := make([]byte, 32)
	if _, err := rand.Read(decoy); err != nil {
		return nil, fmt.Errorf("generating the webhook receiver's decoy key: %w", err)
	}
	return &Receiver{
		decoy:          decoy,
		client:         o.Client,
		secrets:        o.Secrets,
		log:            o.Log,
		now:            o.Now,
		requests:       requests,
		pushByAddress:  newKeyedLimiter(addressBurst, addressPerSecond, maxLimiterKeys, o.Replicas),
		pushByRepo:     newKeyedLimiter(objectBurst, objectPerSecond, maxLimiterKeys, o.Replicas),
		imageByAddress: newKeyedLimiter(addressBurst, addressPerSecond, maxLimiterKeys, o.Replicas),
		imageByPolicy:  newKeyedLimiter(objectBurst, objectPerSecond, maxLimiterKeys, o.Replicas),
	}, nil
}

// Informers are the kinds the receiver reads from the cache; the service
// waits for them before it listens.
func Informers(ctx context.Context, c cache.Cache) error {
	for _, obj := range []client.Object{&syncv1.Repository{}, &syncv1.ImagePolicy{}} {
		if _, err := c.GetInformer(ctx, obj); err != nil {
			return fmt.Errorf("watching %T: %w", obj, err)
		}
	}
	return nil
}

// Handler routes the receiver's endpoints.
func (rc *Receiver) Handler() http.Handler {
	r := chi.NewRouter()
	r.With(rc.limitAddress(rc.pushByAddress)).Post("/hooks/{namespace}/{repository}", rc.push)
	r.With(rc.limitAddress(rc.imageByAddress)).Post("/hooks/imagepolicies/{namespace}/{name}", rc.image)
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) {
		rc.respondStatus(w, http.StatusNotFound, resultBadRequest)
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		rc.respondStatus(w, http.StatusMethodNotAllowed, resultBadRequest)
	})
	return r
}

// limitAddress refuses a remote address beyond its bucket, before anything
// else is read. Behind an ingress every sender shares its address.
func (rc *Receiver) limitAddress(l *keyedLimiter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			addr, _, err := net.SplitHostPort(req.RemoteAddr)
			if err != nil {
				addr = req.RemoteAddr
			}
			if !l.allow(addr, rc.now()) {
				rc.respond(w, resultRateLimited)
				return
			}
			next.ServeHTTP(w, req)
		})
	}
}

// push handles a Git host's webhook for a Repository.
func (rc *Receiver) push(w http.ResponseWriter, req *http.Request) {
	key := client.ObjectKey{Namespace: chi.URLParam(req, "namespace"), Name: chi.URLParam(req, "repository")}
	log := rc.log.WithValues("Repository", key.String())
	repo := &syncv1.Repository{}
	body, p, ok := rc.admit(w, req, log, key, repo, func() *syncv1.WebhookSpec { return repo.Spec.Webhook }, rc.pushByRepo, false)
	if !ok {
		return
	}
	switch eventOf(p, req) {
	case eventPing:
		rc.respond(w, resultPing)
		return
	case eventPush:
	case eventPullRequest:
		rc.pullRequest(w, req.Context(), log, repo, p, body)
		return
	default:
		rc.respond(w, resultIgnored)
		return
	}
	if res := namesRepository(log, body, repo); res != "" {
		rc.respond(w, res)
		return
	}
	rc.stamp(w, req.Context(), log, repo, syncv1.ReconcileRequestedAtAnnotation)
}

// namesRepository checks that an event's payload names repo's spec.git.url,
// so that a hook shared by several repositories stamps only its own.
func namesRepository(log logr.Logger, body []byte, repo *syncv1.Repository) result {
	urls, err := pushpayload.URLs(body)
	if err != nil {
		log.Info("webhook payload refused: not a JSON event", "error", err.Error())
		return resultBadRequest
	}
	if !pushpayload.Names(urls, repo.Spec.Git.URL) {
		log.Info("webhook event ignored: its payload does not name spec.git.url", "url", repo.Spec.Git.URL)
		return resultRepositoryMismatch
	}
	return ""
}

// image handles a registry's or CI's webhook for an ImagePolicy.
func (rc *Receiver) image(w http.ResponseWriter, req *http.Request) {
	key := client.ObjectKey{Namespace: chi.URLParam(req, "namespace"), Name: chi.URLParam(req, "name")}
	log := rc.log.WithValues("ImagePolicy", key.String())
	policy := &syncv1.ImagePolicy{}
	_, p, ok := rc.admit(w, req, log, key, policy, func() *syncv1.WebhookSpec { return policy.Spec.Webhook }, rc.imageByPolicy, true)
	if !ok {
		return
	}
	// GitHub sends many events to one hook; only a published package asks
	// for a scan. A GitLab token or a bearer token is itself the request.
	if p == providerGitHub {
		switch eventOf(p, req) {
		case eventPing:
			rc.respond(w, resultPing)
			return
		case eventPackage:
		default:
			rc.respond(w, resultIgnored)
			return
		}
	}
	rc.stamp(w, req.Context(), log, policy, syncv1.ScanRequestedAtAnnotation)
}

// admit reads the body, reads obj at key and the token of the Secret its
// webhook names, authenticates req with it (bearer: also with
// Authorization: Bearer), and takes a token from obj's bucket. Unless ok,
// it has responded and the request goes no further.
func (rc *Receiver) admit(w http.ResponseWriter, req *http.Request, log logr.Logger, key client.ObjectKey,
	obj client.Object, webhook func() *syncv1.WebhookSpec, bucket *keyedLimiter, bearer bool) ([]byte, provider, bool) {
	body, res := rc.readBody(req)
	if res != "" {
		rc.respond(w, res)
		return nil, 0, false
	}
	token, known, res := rc.token(req.Context(), log, key, obj, webhook)
	if res != "" {
		rc.respond(w, res)
		return nil, 0, false
	}
	p, ok := authenticate(req, body, token, bearer)
	if !ok || !known {
		if known {
			log.Info("webhook request refused: its signature or token does not match the token of spec.webhook.secretRef")
		}
		rc.respond(w, resultUnauthorized)
		return nil, 0, false
	}
	if !bucket.allow(key.String(), rc.now()) {
		rc.respond(w, resultRateLimited)
		return nil, 0, false
	}
	return body, p, true
}

// readBody reads at most MaxBodyBytes+1 bytes of the body.
func (rc *Receiver) readBody(req *http.Request) ([]byte, result) {
	if req.ContentLength > MaxBodyBytes {
		return nil, resultTooLarge
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, resultBadRequest
	}
	if len(body) > MaxBodyBytes {
		return nil, resultTooLarge
	}
	return body, ""
}

// token reads obj (a Repository or an ImagePolicy) at key and the token of
// the Secret its webhook names; known is false when any of them is missing.
// Whatever is missing, the request does the same work as one with a bad
// signature, so that neither its answer nor its timing tells a caller which
// objects exist: the same cache read, one uncached Secret read (of
// decoySecret, which cannot exist, when there is no Secret to name), and an
// HMAC or token comparison against the process's random decoy key. The log
// says what is missing.
func (rc *Receiver) token(ctx context.Context, log logr.Logger, key client.ObjectKey, obj client.Object,
	webhook func() *syncv1.WebhookSpec) (token []byte, known bool, res result) {
	secretKey := client.ObjectKey{Namespace: key.Namespace, Name: decoySecret}
	missing := ""
	err := rc.client.Get(ctx, key, obj)
	switch {
	case apierrors.IsNotFound(err):
		missing = "the object does not exist"
	case err != nil:
		log.Error(err, "reading the webhook's object")
		return nil, false, resultError
	case webhook() == nil:
		missing = "spec.webhook is not set"
	default:
		secretKey.Name = webhook().SecretRef.Name
	}
	if len(validation.IsDNS1123Label(secretKey.Namespace)) > 0 {
		// No such namespace can exist; the API server would not even look.
		secretKey.Namespace = metav1.NamespaceDefault
	}
	secret := &corev1.Secret{}
	err = onTransient(func() error { return rc.secrets.Get(ctx, secretKey, secret) })
	switch {
	case err != nil && !apierrors.IsNotFound(err):
		// As for an existing object's Secret, so an outage tells nothing either.
		log.Error(err, "reading the Secret of spec.webhook.secretRef", "secret", secretKey.Name)
		return nil, false, resultError
	case missing != "":
		log.Info("webhook request refused: " + missing)
		return rc.decoy, false, ""
	case err != nil:
		log.Info("webhook request refused: spec.webhook.secretRef names a Secret that does not exist", "secret", secretKey.Name)
		return rc.decoy, false, ""
	}
	if len(secret.Data[TokenKey]) == 0 {
		log.Info("webhook request refused: the Secret of spec.webhook.secretRef has no key "+TokenKey, "secret", secretKey.Name)
		return rc.decoy, false, ""
	}
	return secret.Data[TokenKey], true, ""
}

// stamp applies annotation, set to now, on obj as field manager kuvryn-web,
// owning that one annotation and nothing else. The object's spec is
// required, so the apply can never create an object deleted meanwhile.
func (rc *Receiver) stamp(w http.ResponseWriter, ctx context.Context, log logr.Logger, obj client.Object, annotation string) {
	gvk, err := rc.client.GroupVersionKindFor(obj)
	if err != nil {
		log.Error(err, "stamping "+annotation)
		rc.respond(w, resultError)
		return
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(obj.GetNamespace())
	u.SetName(obj.GetName())
	u.SetAnnotations(map[string]string{annotation: rc.now().UTC().Format(time.RFC3339Nano)})
	err = onTransient(func() error {
		return rc.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
			client.FieldOwner(syncv1.FieldManagerWeb), client.ForceOwnership)
	})
	if err != nil {
		log.Error(err, "stamping "+annotation)
		rc.respond(w, resultError)
		return
	}
	log.V(1).Info("stamped " + annotation)
	rc.respond(w, resultAccepted)
}

// backoff spaces the retries of a transient API server failure; a webhook
// sender waits for the answer, so they are few and short.
var backoff = wait.Backoff{Steps: 4, Duration: 50 * time.Millisecond, Factor: 2, Jitter: 0.1}

// onTransient runs f, again with backoff while the API server fails in a
// way that may pass.
func onTransient(f func() error) error {
	return retry.OnError(backoff, transient, f)
}

func transient(err error) bool {
	var netErr net.Error
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) ||
		(errors.As(err, &netErr) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded))
}
