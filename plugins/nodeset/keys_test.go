package nodeset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	slinkylisters "github.com/kubectl-vc/kubectl-vc/pkg/client/listers/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm/slinky"
)

// secretsOf answers GETs from the given Secrets and counts them.
func secretsOf(reads *int, secrets ...*corev1.Secret) func(context.Context, string, string) (*corev1.Secret, error) {
	return func(_ context.Context, ns, name string) (*corev1.Secret, error) {
		*reads++
		for _, s := range secrets {
			if s.Namespace == ns && s.Name == name {
				return s.DeepCopy(), nil
			}
		}
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
	}
}

func keySecret(name string, trusted bool, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Data: map[string][]byte{}}
	if trusted {
		s.Labels = map[string]string{slinky.KeyLabel: "true"}
	}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func controllersNaming(t *testing.T, refs map[string][2]string) slinkylisters.ControllerLister {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for name, ref := range refs {
		c := &slinkyv1beta1.Controller{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		c.Spec.JwtKeyRef = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: ref[0]}, Key: ref[1]}
		if err := idx.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	return slinkylisters.NewControllerLister(idx)
}

// A key Secret is kept as the one key used: of a trusted Secret its value,
// of any other nothing but that it is not to be used; the other keys of
// either, however large, are never kept.
func TestKeyCacheKeepsOnlyTheKeyUsed(t *testing.T) {
	big := strings.Repeat("x", 900<<10)
	var reads int
	k := newKeyCache(time.Minute, secretsOf(&reads,
		keySecret("trusted", true, map[string]string{"jwt.key": "0123456789abcdef0123456789abcdef", "other": big}),
		keySecret("plain", false, map[string]string{"jwt.key": "0123456789abcdef0123456789abcdef", "other": big})))
	got, err := k.read(context.Background(), keyID{"ns", "trusted", "jwt.key"})
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Value) != "0123456789abcdef0123456789abcdef" || !got.Trusted || !got.Present {
		t.Errorf("trusted Secret: got %+v", got)
	}
	got, err = k.read(context.Background(), keyID{"ns", "plain", "jwt.key"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Value != nil || got.Trusted || !got.Present {
		t.Errorf("unlabelled Secret: got present=%v trusted=%v and %d bytes of value, want its presence only", got.Present, got.Trusted, len(got.Value))
	}
	if n, b := k.size(); n != 2 || b != 32 {
		t.Errorf("kept %d keys of %d bytes, want 2 keys of 32 bytes (the one trusted value)", n, b)
	}
	// Within the TTL the kept key answers without a read.
	if _, err := k.read(context.Background(), keyID{"ns", "trusted", "jwt.key"}); err != nil {
		t.Fatal(err)
	}
	if reads != 2 {
		t.Errorf("%d Secret reads, want 2", reads)
	}
}

// A key longer than slinky.MaxKeyBytes is kept to one byte past it, and
// Find refuses it naming the bound.
func TestKeyCacheCutsLongKeys(t *testing.T) {
	var reads int
	k := newKeyCache(time.Minute, secretsOf(&reads, keySecret("long", true, map[string]string{"jwt.key": strings.Repeat("k", 1<<20)})))
	got, err := k.read(context.Background(), keyID{"ns", "long", "jwt.key"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Value) != slinky.MaxKeyBytes+1 {
		t.Errorf("kept %d bytes of a 1 MiB key, want %d", len(got.Value), slinky.MaxKeyBytes+1)
	}
	ep, err := slinky.Find(context.Background(), fixedLookup{keys: k}, &slinkyv1beta1.NodeSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"},
		Spec: slinkyv1beta1.NodeSetSpec{ControllerRef: corev1.LocalObjectReference{Name: "c"}}})
	var m *slinky.Missing
	if err == nil || !errors.As(err, &m) || m.Reason != "KeyTooLong" {
		t.Fatalf("Find of a 1 MiB key: %v, %v; want KeyTooLong", ep, err)
	}
}

// The keys are bounded in number and bytes, the oldest dropped first, and
// pruned to those a Controller names now.
func TestKeyCacheBoundsAndPrune(t *testing.T) {
	var secrets []*corev1.Secret
	for i := range maxKeptKeys + 10 {
		secrets = append(secrets, keySecret(keyName(i), true, map[string]string{"jwt.key": strings.Repeat("k", 8<<10)}))
	}
	var reads int
	k := newKeyCache(time.Hour, secretsOf(&reads, secrets...))
	for i := range secrets {
		if _, err := k.read(context.Background(), keyID{"ns", keyName(i), "jwt.key"}); err != nil {
			t.Fatal(err)
		}
	}
	n, b := k.size()
	if n > maxKeptKeys || b > maxKeptKeyBytes {
		t.Errorf("kept %d keys of %d bytes: past the bounds %d and %d", n, b, maxKeptKeys, maxKeptKeyBytes)
	}
	if _, ok := k.keys[keyID{"ns", keyName(len(secrets) - 1), "jwt.key"}]; !ok {
		t.Errorf("the key read last was dropped")
	}
	if _, ok := k.keys[keyID{"ns", keyName(0), "jwt.key"}]; ok {
		t.Errorf("the key read first is still kept past the bound")
	}
	// Two Controllers name two of the kept keys (one by another key of
	// its Secret, which is not what was read): pruning keeps one.
	last := keyName(len(secrets) - 1)
	k.prune(controllersNaming(t, map[string][2]string{"a": {last, "jwt.key"}, "b": {keyName(len(secrets) - 2), "other.key"}}))
	if n, _ := k.size(); n != 1 {
		t.Errorf("after pruning %d keys are kept, want the 1 a Controller names", n)
	}
	if _, ok := k.keys[keyID{"ns", last, "jwt.key"}]; !ok {
		t.Errorf("the key Controller a names was dropped")
	}
	// Without Slinky's kinds no Controller names any.
	k.prune(nil)
	if n, b := k.size(); n != 0 || b != 0 {
		t.Errorf("after pruning without Controllers: %d keys of %d bytes kept", n, b)
	}
}

func keyName(i int) string { return fmt.Sprintf("key-%04d", i) }

// fixedLookup is Slinky's objects of one NodeSet: Controller c naming key
// jwt.key of Secret long, its RestApi and Service; the key read through keys.
type fixedLookup struct{ keys *keyCache }

func (fixedLookup) Controller(_ context.Context, ns, name string) (*slinkyv1beta1.Controller, error) {
	c := &slinkyv1beta1.Controller{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	c.Spec.JwtKeyRef = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "long"}, Key: "jwt.key"}
	return c, nil
}

func (fixedLookup) RestApis(_ context.Context, ns string) ([]*slinkyv1beta1.RestApi, error) {
	a := &slinkyv1beta1.RestApi{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "r"}}
	a.Spec.ControllerRef.Name = "c"
	return []*slinkyv1beta1.RestApi{a}, nil
}

func (fixedLookup) Service(_ context.Context, ns, name string) (*corev1.Service, error) {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1"}}, nil
}

func (l fixedLookup) SecretKey(ctx context.Context, ns, name, key string) (slinky.SecretKey, error) {
	return l.keys.read(ctx, keyID{namespace: ns, secret: name, key: key})
}
