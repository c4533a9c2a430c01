package console

import (
	"crypto/rand"
	"strings"
	"testing"
	"time"
)

func testSealer(t testing.TB) *sealer {
	t.Helper()
	key := make([]byte, KeySize)
	_, err := rand.Read(key)
	must(t, err)
	s, err := newSealer(key)
	must(t, err)
	return s
}

// TestSessionCookie_RefusesTamperedExpiredOrForeignValues: a session
// cookie opens only unchanged, before it expires, under the key and the
// cookie name it was sealed for.
func TestSessionCookie_RefusesTamperedExpiredOrForeignValues(t *testing.T) {
	now := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	s, other := testSealer(t), testSealer(t)
	good := session{Token: "secret-token", User: "alice", CSRF: "c", Expires: now.Add(time.Hour).Unix()}
	sealed, err := s.seal(sessionCookie, good)
	must(t, err)
	if strings.Contains(sealed, "secret-token") || strings.Contains(sealed, "alice") {
		t.Fatal("the sealed cookie holds the session in the clear")
	}
	foreign, err := other.seal(sessionCookie, good)
	must(t, err)
	asTicket, err := s.seal(csrfCookie, good)
	must(t, err)
	expired, err := s.seal(sessionCookie, session{Token: "t", CSRF: "c", Expires: now.Unix()})
	must(t, err)
	noToken, err := s.seal(sessionCookie, session{CSRF: "c", Expires: now.Add(time.Hour).Unix()})
	must(t, err)
	flipped := []byte(sealed)
	flipped[len(flipped)/2] ^= 1

	tests := []struct {
		name  string
		value string
		ok    bool
	}{
		{"as sealed", sealed, true},
		{"one bit changed", string(flipped), false},
		{"sealed with another key", foreign, false},
		{"sealed as another cookie", asTicket, false},
		{"expired", expired, false},
		{"no token", noToken, false},
		{"empty", "", false},
		{"not base64", "!!!", false},
		{"oversized", strings.Repeat("A", maxCookieBytes+1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.openSession(tt.value, now)
			if (err == nil) != tt.ok {
				t.Fatalf("open: %v, want ok=%v", err, tt.ok)
			}
			if tt.ok && got != good {
				t.Errorf("opened %+v, want %+v", got, good)
			}
		})
	}
	if _, err := newSealer(make([]byte, 16)); err == nil {
		t.Error("a 16-byte key was accepted")
	}
}

// FuzzOpenSession: any cookie value a browser sends is refused or opens to
// a session with a token, never a panic, and never opens as a cookie of
// another name.
func FuzzOpenSession(f *testing.F) {
	s := testSealer(f)
	now := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	sealed, err := s.seal(sessionCookie, session{Token: "t", CSRF: "c", Expires: now.Add(time.Hour).Unix()})
	must(f, err)
	for _, seed := range []string{sealed, "", "AAAA", "!!!", strings.Repeat("A", 40), sealed[:len(sealed)-2]} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		got, err := s.openSession(value, now)
		if err == nil && (got.Token == "" || got.CSRF == "") {
			t.Fatalf("opened a session without a token or CSRF value: %+v", got)
		}
		if _, err := s.openTicket(value, now); err == nil {
			t.Fatalf("%q opened as a sign-in form ticket", value)
		}
		if _, err := s.openFlow(value, now); err == nil {
			t.Fatalf("%q opened as an OIDC sign-in ticket", value)
		}
	})
}
