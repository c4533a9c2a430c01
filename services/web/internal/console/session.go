package console

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// KeySize is the length in bytes of the session key: AES-256.
const KeySize = 32

// maxCookieBytes bounds what open decodes, so an oversized cookie costs
// nothing before it is refused.
const maxCookieBytes = 8 << 10

// session is what the session cookie carries, encrypted and authenticated.
// The token is the user's own bearer token: every read is made with it.
type session struct {
	Token   string `json:"t"`
	User    string `json:"u"`
	CSRF    string `json:"c"`
	Expires int64  `json:"e"`
}

// csrfTicket is what the sign-in form's cookie carries: the nonce the form
// must send back.
type csrfTicket struct {
	Nonce   string `json:"n"`
	Expires int64  `json:"e"`
}

// oidcTicket is what the OIDC sign-in's cookie carries from the redirect
// to the issuer to its answer.
type oidcTicket struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Expires  int64  `json:"e"`
}

var errBadCookie = errors.New("cookie is not one this console sealed, or has expired")

// sealer encrypts and authenticates cookie values with AES-GCM. The
// cookie's name is the additional data, so a value sealed for one cookie
// cannot be replayed as another.
type sealer struct {
	aead cipher.AEAD
}

func newSealer(key []byte) (*sealer, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("session key is %d bytes; want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead}, nil
}

func (s *sealer) seal(name string, v any) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, []byte(name))), nil
}

// open decrypts value into v and checks that expires (a Unix time read from
// v by the caller's expiry func) is after now.
func (s *sealer) open(name, value string, v any, expiry func() int64, now time.Time) error {
	if len(value) > maxCookieBytes {
		return errBadCookie
	}
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(raw) < s.aead.NonceSize() {
		return errBadCookie
	}
	plain, err := s.aead.Open(nil, raw[:s.aead.NonceSize()], raw[s.aead.NonceSize():], []byte(name))
	if err != nil {
		return errBadCookie
	}
	if err := json.Unmarshal(plain, v); err != nil {
		return errBadCookie
	}
	if !now.Before(time.Unix(expiry(), 0)) {
		return errBadCookie
	}
	return nil
}

func (s *sealer) openSession(value string, now time.Time) (session, error) {
	var ss session
	err := s.open(sessionCookie, value, &ss, func() int64 { return ss.Expires }, now)
	if err == nil && (ss.Token == "" || ss.CSRF == "") {
		err = errBadCookie
	}
	return ss, err
}

func (s *sealer) openTicket(value string, now time.Time) (csrfTicket, error) {
	var t csrfTicket
	err := s.open(csrfCookie, value, &t, func() int64 { return t.Expires }, now)
	if err == nil && t.Nonce == "" {
		err = errBadCookie
	}
	return t, err
}

func (s *sealer) openFlow(value string, now time.Time) (oidcTicket, error) {
	var t oidcTicket
	err := s.open(oidcCookie, value, &t, func() int64 { return t.Expires }, now)
	if err == nil && (t.State == "" || t.Nonce == "" || t.Verifier == "") {
		err = errBadCookie
	}
	return t, err
}

// randomString is 32 random bytes, URL-safe.
func randomString() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
