package nodeset

import (
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	slinkylisters "github.com/kubectl-vc/kubectl-vc/pkg/client/listers/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm/slinky"
)

// The JWT keys serve signs Slurm tokens with, read from the Secrets that
// Slinky's Controllers name (slurmsource.go). serve never watches Secrets
// (a watch would cache every Secret of the cluster); it GETs the one a
// Controller names and keeps, for Config.KeyTTL, only what it uses:
//   - the one key the Controller selects, never the Secret's other keys,
//     its metadata or the Secret itself;
//   - its value only when the Secret opted in (slinky.KeyTrusted): of any
//     other Secret it keeps that it is not to be used;
//   - at most slinky.MaxKeyBytes+1 bytes of it (longer is refused);
//   - at most maxKeptKeys keys and maxKeptKeyBytes bytes of them, the
//     oldest read dropped first (read again when next needed);
//   - only while a Controller names it: pruneKeys, run every KeyTTL,
//     drops the keys no Controller selects any more (level-triggered: it
//     compares with the Controllers cached now, whatever events were
//     seen), and those past KeyTTL.
// A refused token drops them all (forget), the key may have been rotated.

const (
	// maxKeptKeys bounds how many keys are kept: far more Slurm clusters
	// than one serve acts on.
	maxKeptKeys = 1024
	// maxKeptKeyBytes bounds the bytes of the kept values (64 keys of
	// the largest size, 32 768 of the usual 32 bytes).
	maxKeptKeyBytes = 1 << 20
)

// keptKey is one key read from a Secret.
type keptKey struct {
	slinky.SecretKey
	fetched time.Time
}

// keyCache holds the keys read, by keyID.
type keyCache struct {
	// get reads one Secret by name: a GET, never a watch of them all.
	get func(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	ttl time.Duration

	mu    sync.Mutex
	keys  map[keyID]keptKey
	bytes int
}

// keyID is a key of a Secret: what a Controller's jwtKeyRef selects.
type keyID struct{ namespace, secret, key string }

func newKeyCache(ttl time.Duration, get func(ctx context.Context, namespace, name string) (*corev1.Secret, error)) *keyCache {
	return &keyCache{get: get, ttl: ttl, keys: map[keyID]keptKey{}}
}

// read returns the key, kept or read now.
func (k *keyCache) read(ctx context.Context, id keyID) (slinky.SecretKey, error) {
	k.mu.Lock()
	kept, ok := k.keys[id]
	k.mu.Unlock()
	if ok && time.Since(kept.fetched) < k.ttl {
		return kept.SecretKey, nil
	}
	secret, err := k.get(ctx, id.namespace, id.secret)
	if err != nil {
		return slinky.SecretKey{}, err
	}
	sk := slinky.ReadSecretKey(secret, id.key, false)
	k.put(id, keptKey{SecretKey: sk, fetched: time.Now()})
	return sk, nil
}

// put keeps a key, dropping the oldest ones past the bounds.
func (k *keyCache) put(id keyID, kept keptKey) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.dropLocked(id)
	k.keys[id] = kept
	k.bytes += len(kept.Value)
	for len(k.keys) > maxKeptKeys || k.bytes > maxKeptKeyBytes {
		oldest, first := keyID{}, true
		for i, v := range k.keys {
			if i != id && (first || v.fetched.Before(k.keys[oldest].fetched)) {
				oldest, first = i, false
			}
		}
		if first {
			return // only the key just read: kept whatever its size
		}
		k.dropLocked(oldest)
	}
}

func (k *keyCache) dropLocked(id keyID) {
	if v, ok := k.keys[id]; ok {
		k.bytes -= len(v.Value)
		delete(k.keys, id)
	}
}

// forget drops every key, so that the next sync reads the Secrets again.
func (k *keyCache) forget() {
	k.mu.Lock()
	defer k.mu.Unlock()
	clear(k.keys)
	k.bytes = 0
}

// prune drops the keys past their TTL and those no Controller of their
// namespace selects now. controllers nil (Slinky's kinds not served):
// none names any.
func (k *keyCache) prune(controllers slinkylisters.ControllerLister) {
	named := map[string][]keyID{}
	k.mu.Lock()
	var namespaces []string
	for id := range k.keys {
		namespaces = append(namespaces, id.namespace)
	}
	k.mu.Unlock()
	slices.Sort(namespaces)
	for _, ns := range slices.Compact(namespaces) {
		if controllers == nil {
			continue
		}
		list, err := controllers.Controllers(ns).List(labels.Everything())
		if err != nil {
			continue
		}
		for _, c := range list {
			if sel := jwtKeyOf(c); sel != nil {
				named[ns] = append(named[ns], keyID{namespace: ns, secret: sel.Name, key: sel.Key})
			}
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for id, v := range k.keys {
		if time.Since(v.fetched) >= k.ttl || !slices.Contains(named[id.namespace], id) {
			k.dropLocked(id)
		}
	}
}

// jwtKeyOf is the key selector of a Controller, or nil.
func jwtKeyOf(c *slinkyv1beta1.Controller) *corev1.SecretKeySelector {
	sel := c.JWTKeySelector()
	if sel == nil || sel.Name == "" || sel.Key == "" {
		return nil
	}
	return sel
}

// size is how many keys are kept and their bytes (tests).
func (k *keyCache) size() (int, int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.keys), k.bytes
}
