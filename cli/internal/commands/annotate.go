package commands

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// fieldManager records ksync's writes in managedFields.
const fieldManager = "ksync"

// annotateApplication sets annotations on an Application with a JSON merge
// patch through the API server. Annotations are the only writes ksync
// makes (on Applications, and a preview request on a Repository): status
// belongs to the controllers, and everything else to the user.
func annotateApplication(ctx context.Context, k8s client.Client, app *syncv1.Application, annotations map[string]string) error {
	return annotate(ctx, k8s, &syncv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}, annotations)
}

// annotate sets annotations on target, an object holding only its name and
// namespace, with a JSON merge patch of just those annotations, so ksync
// overwrites nothing else a controller or user wrote meanwhile.
func annotate(ctx context.Context, k8s client.Client, target client.Object, annotations map[string]string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return fmt.Errorf("encoding patch of %s/%s: %w", target.GetNamespace(), target.GetName(), err)
	}
	return k8s.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(fieldManager))
}

// refusal returns the API server's message when it turned a request down:
// an admission webhook or policy denying it, RBAC forbidding it, or
// validation failing. Not found and transient errors are not refusals.
func refusal(err error) (string, bool) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return "", false
	}
	s := status.Status()
	switch {
	case s.Code == http.StatusNotFound, s.Code == http.StatusRequestTimeout, s.Code == http.StatusTooManyRequests:
		return "", false
	case s.Code >= 400 && s.Code < 500:
		return s.Message, true
	}
	return "", false
}

// confirm asks a yes/no question on the terminal; anything but y or yes,
// including no answer at all, is no.
func (e *env) confirm(question string) (bool, error) {
	fmt.Fprintf(e.out, "%s [y/N] ", question)
	answer, err := bufio.NewReader(e.in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("reading the answer: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true, nil
	}
	if answer == "" {
		fmt.Fprintln(e.out)
	}
	return false, nil
}
