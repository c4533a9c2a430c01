package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A name a person typed is checked against the rule the API server applies
// to it before anything is read: client-go refuses a name holding "/" or
// "%" (or "." and "..") before sending, and any other name that breaks the
// rule can only find nothing, so either way the answer is the person's
// mistake (400), not the API server's failure (502).

// echoRunes bounds how much of a refused value an answer repeats.
const echoRunes = 80

// quoted is s as a Go string literal, clipped to echoRunes, for messages:
// control characters and invalid UTF-8 show escaped, and a huge value does
// not make a huge page. Templates escape it again as HTML.
func quoted(s string) string {
	if r := []rune(s); len(r) > echoRunes {
		return strconv.Quote(string(r[:echoRunes])) + "…"
	}
	return strconv.Quote(s)
}

// clipped is s cut to n runes: the API server's reasons can quote a part
// of what it was sent.
func clipped(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// namespaceProblem is why ns is not a namespace name, or "": the API server
// names namespaces by DNS-1123 labels.
func namespaceProblem(ns string) string {
	return strings.Join(validation.IsDNS1123Label(ns), "; ")
}

// objectNameProblem is why name is not the name of an Application,
// Repository or Revision, or "": the API server names custom resources by
// DNS-1123 subdomains.
func objectNameProblem(name string) string {
	return strings.Join(validation.IsDNS1123Subdomain(name), "; ")
}

// pathParam is the route parameter as the URL means it. chi matches on
// r.URL.RawPath when the path holds an escape its decoded form would not
// give back (such as %2F or %2e), and then hands parameters over still
// percent-encoded; otherwise they are decoded already.
func pathParam(r *http.Request, key string) string {
	v := chi.URLParam(r, key)
	if r.URL.RawPath == "" {
		return v
	}
	if d, err := url.PathUnescape(v); err == nil {
		return d
	}
	// Not reached for a path net/http parsed; the raw value then fails
	// the name rules, which is the right answer.
	return v
}

// applicationKey is the Application the path names, or an error naming
// the part of the path that cannot be one.
func applicationKey(r *http.Request) (client.ObjectKey, error) {
	key := client.ObjectKey{Namespace: pathParam(r, "namespace"), Name: pathParam(r, "name")}
	if p := namespaceProblem(key.Namespace); p != "" {
		return key, fmt.Errorf("the namespace %s in the path is not a namespace name: %s", quoted(key.Namespace), p)
	}
	if p := objectNameProblem(key.Name); p != "" {
		return key, fmt.Errorf("the name %s in the path is not an Application name: %s", quoted(key.Name), p)
	}
	return key, nil
}
