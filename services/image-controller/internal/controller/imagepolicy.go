package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/google/go-containerregistry/pkg/authn"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/retry"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/policy"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/scan"
)

// DefaultInterval applies when an ImagePolicy sets none.
const DefaultInterval = 5 * time.Minute

// ImagePolicyReconciler scans the registry of each ImagePolicy and records
// the selected image in its status.
type ImagePolicyReconciler struct {
	Client client.Client
	// APIReader reads registry credential Secrets without caching every Secret.
	APIReader client.Reader
	Scanner   *scan.Scanner
	Events    events.EventRecorder
	// Retry spaces out scans after a failure that may heal by itself, from
	// seconds up to the policy's interval; nil means the default backoff.
	Retry *retry.Backoff
}

// SetupWithManager rescans on spec and annotation changes (the receiver's
// scan-requested-at among them), never on the controller's own status writes.
func (r *ImagePolicyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Retry == nil {
		r.Retry = &retry.Backoff{}
	}
	return ctrl.NewControllerManagedBy(mgr).
		WithOptions(manager.ControllerOptions()).
		For(&syncv1.ImagePolicy{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Named("imagepolicy").
		Complete(r)
}

// Reconcile scans once and asks to be called again after the interval.
func (r *ImagePolicyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ip syncv1.ImagePolicy
	if err := r.Client.Get(ctx, req.NamespacedName, &ip); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	interval := DefaultInterval
	if ip.Spec.Interval != nil && ip.Spec.Interval.Duration > 0 {
		interval = ip.Spec.Interval.Duration
	}
	st := syncv1.ImagePolicyStatus{
		ObservedGeneration: ip.Generation,
		LatestImage:        ip.Status.LatestImage,
		LastScanTime:       ip.Status.LastScanTime,
		LastHandledScanAt:  ip.Annotations[syncv1.ScanRequestedAtAnnotation],
	}
	id := "ImagePolicy " + req.String()

	ready, res, scanErr := r.scan(ctx, &ip)
	if contacted := ready.Reason != syncv1.ReasonCredentialsRefused && ready.Reason != syncv1.ReasonValidationFailure; contacted {
		now := metav1.Now()
		st.LastScanTime = &now
	}
	if scanErr == nil {
		if st.LatestImage != res.Image.String() {
			r.Events.Eventf(&ip, nil, corev1.EventTypeNormal, syncv1.ReasonSucceeded, "Scan",
				"%s selected %s", id, res.Image)
		}
		st.LatestImage = res.Image.String()
		msg := fmt.Sprintf("selected %s from %d tags", st.LatestImage, res.Tags)
		if spec := ip.Spec.Policy.Digest; spec != nil {
			msg = fmt.Sprintf("tag %s is at %s", spec.Tag, res.Image.Digest)
		}
		if res.Truncated {
			msg += fmt.Sprintf(" (tag list cut at the first %d)", res.Tags)
		}
		ready = ssa.Condition(syncv1.ConditionReady, true, syncv1.ReasonSucceeded, msg, ip.Generation)
	} else {
		r.Events.Eventf(&ip, nil, corev1.EventTypeWarning, ready.Reason, "Scan", "%s", ready.Message)
	}
	result := ctrl.Result{RequeueAfter: interval}
	var invalid *policy.InvalidError
	switch {
	case errors.As(scanErr, &invalid):
		// Only a spec change can fix it, and a spec change reconciles.
		result = ctrl.Result{}
	case scanErr != nil:
		// A registry that is down, or a credentials Secret not created yet,
		// heals without a spec change: try again soon, then less often.
		result.RequeueAfter = r.Retry.Failed(req.String(), interval)
		ready.Message = fmt.Sprintf("%s; retrying in %s", ready.Message, result.RequeueAfter)
	default:
		r.Retry.Succeeded(req.String())
	}
	st.Conditions = ssa.Conditions(ip.Status.Conditions, []string{syncv1.ConditionReady}, ready)
	if err := ssa.ApplyStatus(ctx, r.Client, &ip, syncv1.FieldManagerImage, st); err != nil {
		return ctrl.Result{}, fmt.Errorf("writing status of %s: %w", id, err)
	}
	return result, nil
}

// scan runs one scan and returns the Ready condition of a failure.
func (r *ImagePolicyReconciler) scan(ctx context.Context, ip *syncv1.ImagePolicy) (metav1.Condition, scan.Result, error) {
	id := fmt.Sprintf("ImagePolicy %s/%s", ip.Namespace, ip.Name)
	fail := func(reason string, err error) (metav1.Condition, scan.Result, error) {
		return ssa.Condition(syncv1.ConditionReady, false, reason, fmt.Sprintf("%s: %v", id, err), ip.Generation), scan.Result{}, err
	}
	var auth authn.Authenticator
	if ref := ip.Spec.SecretRef; ref != nil {
		var secret corev1.Secret
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ip.Namespace, Name: ref.Name}, &secret)
		switch {
		case apierrors.IsNotFound(err):
			return fail(syncv1.ReasonCredentialsRefused, fmt.Errorf("spec.secretRef: Secret %s/%s not found", ip.Namespace, ref.Name))
		case err != nil:
			return fail(syncv1.ReasonScanFailed, fmt.Errorf("reading spec.secretRef: %w", err))
		}
		if auth, err = scan.AuthFromSecret(&secret, ip.Spec.Image); err != nil {
			return fail(syncv1.ReasonCredentialsRefused, fmt.Errorf("spec.secretRef: %w", err))
		}
	}
	res, err := r.Scanner.Scan(ctx, ip.Spec, auth)
	var invalid *policy.InvalidError
	switch {
	case err == nil:
		return metav1.Condition{}, res, nil
	case errors.As(err, &invalid):
		return fail(syncv1.ReasonValidationFailure, err)
	case errors.Is(err, scan.ErrNoMatchingTag):
		return fail(syncv1.ReasonNoMatchingTag, fmt.Errorf("none of the %d tags of %s matches spec.policy", res.Tags, ip.Spec.Image))
	default:
		return fail(syncv1.ReasonScanFailed, err)
	}
}
