package delivery

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
)

// describe says why an HTTP request failed in words of its own. Errors of
// net/http quote the request URL, and dial, DNS and certificate errors its
// host, so none of their text is passed on: a Slack URL is a credential.
func describe(err error) string {
	var (
		dnsErr      *net.DNSError
		unknownCA   x509.UnknownAuthorityError
		hostErr     x509.HostnameError
		invalidCert x509.CertificateInvalidError
		verifyErr   *tls.CertificateVerificationError
		recordErr   tls.RecordHeaderError
		netErr      net.Error
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "the sink did not answer in time"
	case errors.Is(err, context.Canceled):
		return "the delivery was cancelled as the controller stopped"
	case errors.As(err, &dnsErr):
		return "the sink's host name does not resolve"
	case errors.As(err, &unknownCA), errors.As(err, &verifyErr):
		return "the sink's TLS certificate is not signed by a trusted CA"
	case errors.As(err, &hostErr):
		return "the sink's TLS certificate is not valid for its host"
	case errors.As(err, &invalidCert):
		return "the sink's TLS certificate is invalid or expired"
	case errors.As(err, &recordErr):
		return "the sink does not speak TLS"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the sink refused the connection"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "the sink closed the connection"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "the sink's host is unreachable"
	}
	return "the request to the sink failed"
}

// statusError is an answer other than 2xx. Detail is the start of its
// body, read for what it means but never shown.
type statusError struct {
	code   int
	detail string
}

func (e *statusError) Error() string {
	if e.code == http.StatusUnauthorized {
		return "the sink answered HTTP 401 Unauthorized: it refused the credentials"
	}
	if e.code >= 300 && e.code < 400 {
		return fmt.Sprintf("the sink answered HTTP %d %s; redirects are not followed", e.code, http.StatusText(e.code))
	}
	return fmt.Sprintf("the sink answered HTTP %d %s", e.code, http.StatusText(e.code))
}

// scrub removes the URL and its parts from msg, should anything have
// carried them this far.
func scrub(msg string, u *url.URL) string {
	if u == nil {
		return msg
	}
	for _, s := range []string{u.String(), u.Host, u.Hostname(), u.RequestURI(), u.EscapedPath()} {
		if len(s) > 1 {
			msg = strings.ReplaceAll(msg, s, "<sink URL>")
		}
	}
	return msg
}
