package slurm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TokenSource gives the token slurmrestd authenticates a request with
// (sent as X-SLURM-USER-TOKEN).
type TokenSource interface {
	Token(ctx context.Context) (string, error)
}

// Default lifetime of a signed token and how long before its end it is
// renewed: Slinky's operator signs tokens for 15 minutes and renews them
// after 12, so a token in flight never expires on the way.
const (
	DefaultTokenLifetime = 15 * time.Minute
	DefaultTokenRenew    = 3 * time.Minute
	// DefaultTokenUser is the Slurm user a signed token speaks for ("sun").
	DefaultTokenUser = "slurm"
)

// SignedToken signs HS256 JWTs with the cluster's key, as slurmctld's
// auth/jwt plugin expects (AuthAltParameters=jwt_key=...): claims sun (the
// Slurm user), iat, nbf and exp. A token is reused until it is within
// Renew of its expiry.
type SignedToken struct {
	key      []byte
	user     string
	lifetime time.Duration
	renew    time.Duration
	now      func() time.Time

	mu      sync.Mutex
	token   string
	expires time.Time
}

// NewSignedToken returns a TokenSource signing with key for user (empty:
// DefaultTokenUser).
func NewSignedToken(key []byte, user string) (*SignedToken, error) {
	if len(bytes.TrimSpace(key)) == 0 {
		return nil, errors.New("the JWT key is empty")
	}
	if user == "" {
		user = DefaultTokenUser
	}
	return &SignedToken{key: key, user: user, lifetime: DefaultTokenLifetime, renew: DefaultTokenRenew, now: time.Now}, nil
}

// SetLifetime changes how long a token lives and how long before its end
// it is renewed (tests use seconds to see renewal happen).
func (s *SignedToken) SetLifetime(lifetime, renew time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lifetime, s.renew = lifetime, renew
	s.token = ""
}

// KeyID identifies the key (a hash prefix, never the key), so that callers
// can tell whether a key changed without keeping it around.
func (s *SignedToken) KeyID() string { return KeyID(s.key) }

// KeyID is a short hash of a key, safe to log and compare.
func KeyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:6])
}

// Token implements TokenSource.
func (s *SignedToken) Token(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.token != "" && now.Before(s.expires.Add(-s.renew)) {
		return s.token, nil
	}
	// The token says its end in whole seconds, rounded down: renewal
	// counts from that, not from the exact time, or up to a second of the
	// renewal margin is lost.
	exp := now.Add(s.lifetime).Truncate(time.Second)
	// nbf a little in the past: slurmctld's clock may be behind ours.
	claims := jwt.MapClaims{
		"sun": s.user,
		"iat": now.Unix(),
		"nbf": now.Add(-10 * time.Second).Unix(),
		"exp": exp.Unix(),
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(s.key)
	if err != nil {
		return "", fmt.Errorf("signing a Slurm JWT: %w", err)
	}
	s.token, s.expires = tok, exp
	return tok, nil
}

// FileToken reads a token from a file (e.g. one 'scontrol token' wrote, or a
// mounted Secret) and reads it again whenever the file changes, so that a
// token renewed outside this process is picked up without a restart.
type FileToken struct {
	path string

	mu      sync.Mutex
	token   string
	modTime time.Time
	size    int64
}

// NewFileToken returns a TokenSource reading path.
func NewFileToken(path string) *FileToken { return &FileToken{path: path} }

// Token implements TokenSource.
func (f *FileToken) Token(context.Context) (string, error) {
	st, err := os.Stat(f.path)
	if err != nil {
		return "", fmt.Errorf("reading the Slurm token: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.token != "" && st.ModTime().Equal(f.modTime) && st.Size() == f.size {
		return f.token, nil
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		return "", fmt.Errorf("reading the Slurm token: %w", err)
	}
	tok := string(bytes.TrimSpace(b))
	// 'scontrol token' prints SLURM_JWT=<token>; accept that file as is.
	tok = string(bytes.TrimPrefix([]byte(tok), []byte("SLURM_JWT=")))
	if tok == "" {
		return "", fmt.Errorf("the Slurm token file %s is empty", f.path)
	}
	f.token, f.modTime, f.size = tok, st.ModTime(), st.Size()
	return tok, nil
}

// KeyFileToken signs tokens (as SignedToken) with the key in a file, and
// reads the file again when it changes, so that a rotated key (a mounted
// Secret updated in place) is used without a restart.
type KeyFileToken struct {
	path, user string
	lifetime   time.Duration

	mu      sync.Mutex
	signer  *SignedToken
	modTime time.Time
	size    int64
}

// NewKeyFileToken reads the key in path once, to fail early on a missing
// or empty file, and returns a TokenSource signing with it for user.
func NewKeyFileToken(path, user string) (*KeyFileToken, error) {
	k := &KeyFileToken{path: path, user: user}
	if _, err := k.current(); err != nil {
		return nil, err
	}
	return k, nil
}

// SetLifetime changes the lifetime of the tokens signed (see SignedToken).
func (k *KeyFileToken) SetLifetime(lifetime time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.lifetime = lifetime
	if k.signer != nil {
		k.signer.SetLifetime(lifetime, lifetime/5)
	}
}

func (k *KeyFileToken) current() (*SignedToken, error) {
	st, err := os.Stat(k.path)
	if err != nil {
		return nil, fmt.Errorf("reading the Slurm JWT key: %w", err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.signer != nil && st.ModTime().Equal(k.modTime) && st.Size() == k.size {
		return k.signer, nil
	}
	key, err := os.ReadFile(k.path)
	if err != nil {
		return nil, fmt.Errorf("reading the Slurm JWT key: %w", err)
	}
	signer, err := NewSignedToken(key, k.user)
	if err != nil {
		return nil, fmt.Errorf("the Slurm JWT key file %s: %w", k.path, err)
	}
	if k.lifetime > 0 {
		signer.SetLifetime(k.lifetime, k.lifetime/5)
	}
	k.signer, k.modTime, k.size = signer, st.ModTime(), st.Size()
	return signer, nil
}

// Token implements TokenSource.
func (k *KeyFileToken) Token(ctx context.Context) (string, error) {
	s, err := k.current()
	if err != nil {
		return "", err
	}
	return s.Token(ctx)
}
