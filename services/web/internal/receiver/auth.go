package receiver

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
)

// authenticate checks req's credentials against token: a GitHub
// X-Hub-Signature-256 over body, a GitLab X-Gitlab-Token, or, where bearer
// is allowed, Authorization: Bearer. The first of those headers present is
// the one checked; every comparison takes constant time.
func authenticate(req *http.Request, body, token []byte, bearer bool) (provider, bool) {
	if sig := req.Header.Get("X-Hub-Signature-256"); sig != "" {
		return providerGitHub, githubSignatureValid(sig, body, token)
	}
	if t := req.Header.Get("X-Gitlab-Token"); t != "" {
		return providerGitLab, tokenEqual(t, token)
	}
	if bearer {
		if t, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
			return providerBearer, tokenEqual(t, token)
		}
	}
	return 0, false
}

// githubSignatureValid reports whether header is "sha256=" and the hex
// HMAC-SHA256 of body keyed with token.
func githubSignatureValid(header string, body, token []byte) bool {
	sig, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, token)
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// tokenEqual compares a presented token with the Secret's. Both are hashed
// first, so the comparison takes the same time whatever their lengths.
func tokenEqual(got string, token []byte) bool {
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256(token)
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}
