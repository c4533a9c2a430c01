package receiver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/web/internal/receiver/prpayload"
)

// MaxPreviewRequests is how many preview request annotations a Repository
// may hold before the receiver refuses to add another, so that a flood of
// pull requests cannot grow the object without bound.
const MaxPreviewRequests = 100

// defaultKeepAfterClose is spec.previews.keepAfterClose's default.
const defaultKeepAfterClose = time.Hour

var errTooManyPreviews = errors.New("too many preview requests")

// pullRequest stamps the preview request a pull or merge request event
// asks for, when repo previews the pull or merge requests of the provider
// that signed it; otherwise the event is one the receiver does not act on.
func (rc *Receiver) pullRequest(w http.ResponseWriter, ctx context.Context, log logr.Logger, repo *syncv1.Repository, p provider, body []byte) {
	host, parse := syncv1.PreviewProviderGitHub, prpayload.GitHub
	if p == providerGitLab {
		host, parse = syncv1.PreviewProviderGitLab, prpayload.GitLab
	}
	if repo.Spec.Previews == nil || repo.Spec.Previews.PullRequests != host {
		rc.respond(w, resultIgnored)
		return
	}
	if res := namesRepository(log, body, repo); res != "" {
		rc.respond(w, res)
		return
	}
	ev, acts, err := parse(body)
	if err != nil {
		log.Info("webhook payload refused: not a JSON pull or merge request event", "error", err.Error())
		rc.respond(w, resultBadRequest)
		return
	}
	if !acts {
		rc.respond(w, resultIgnored)
		return
	}
	key, value, err := prpayload.Annotation(host, ev, rc.now())
	if err != nil {
		log.Info("pull or merge request event refused: " + err.Error())
		rc.respond(w, resultBadRequest)
		return
	}
	log = log.WithValues("annotation", key)
	err = onTransient(func() error {
		return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			patch, err := previewPatch(repo, key, value, rc.now())
			if err != nil {
				return err
			}
			err = rc.client.Patch(ctx, repo, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(syncv1.FieldManagerWeb))
			if apierrors.IsConflict(err) {
				// The cache lags behind another write: read the Repository
				// itself before trying again.
				if gerr := rc.secrets.Get(ctx, client.ObjectKeyFromObject(repo), repo); gerr != nil {
					return gerr
				}
			}
			return err
		})
	})
	switch {
	case errors.Is(err, errTooManyPreviews):
		log.Info("pull or merge request event refused: the Repository already holds the most preview requests", "max", MaxPreviewRequests)
		rc.respond(w, resultTooManyPreviews)
	case err != nil:
		log.Error(err, "stamping the preview request")
		rc.respond(w, resultError)
	default:
		log.V(1).Info("stamped the preview request")
		rc.respond(w, resultAccepted)
	}
}

// previewPatch is the merge patch that sets annotation key to value on repo
// and, in the same write, removes the pull and merge request previews
// closed for longer than spec.previews.keepAfterClose, which the
// source-controller has dropped by then. It is a merge patch under the
// field manager kuvryn-web rather than an apply, since an apply of one
// annotation would remove the others kuvryn-web applied; its
// resourceVersion makes it fail, rather than count stale annotations, when
// repo is not the latest. errTooManyPreviews: key is new and repo already
// holds MaxPreviewRequests others.
func previewPatch(repo *syncv1.Repository, key, value string, now time.Time) ([]byte, error) {
	keep := defaultKeepAfterClose
	if repo.Spec.Previews != nil && repo.Spec.Previews.KeepAfterClose != nil {
		keep = repo.Spec.Previews.KeepAfterClose.Duration
	}
	annotations := map[string]*string{key: &value}
	held := 0
	for k, v := range repo.GetAnnotations() {
		name, req, ok, err := syncv1.ParsePreviewRequest(k, v)
		switch {
		case !ok || k == key:
		case err == nil && req.Closed && (strings.HasPrefix(name, "pr-") || strings.HasPrefix(name, "mr-")) &&
			!now.Before(req.At.Add(keep)):
			annotations[k] = nil
		default:
			held++
		}
	}
	if _, replaces := repo.GetAnnotations()[key]; !replaces && held >= MaxPreviewRequests {
		return nil, errTooManyPreviews
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": repo.GetResourceVersion(),
		"annotations":     annotations,
	}})
}
