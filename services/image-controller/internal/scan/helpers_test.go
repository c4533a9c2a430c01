package scan

import (
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
)

func basic(user, password string) authn.Authenticator {
	return authn.FromConfig(authn.AuthConfig{Username: user, Password: password})
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}
