// Package slinky finds the slurmrestd of a NodeSet the way Slinky's
// slurm-operator does (slinky.slurm.net/v1beta1): NodeSet.spec.controllerRef
// names a Controller in the NodeSet's namespace; the oldest RestApi whose
// spec.controllerRef names that Controller is served by the Service
// <restapi>-restapi on port 6820; the JWT HS256 key is in the Secret that
// the Controller's jwtKeyRef (older: jwtHs256KeyRef) selects. The NodeSet
// controller reads these objects from its caches, the CLI from the API:
// both go through Find.
package slinky

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// Lookup reads the objects Find follows.
type Lookup interface {
	Controller(ctx context.Context, namespace, name string) (*slinkyv1beta1.Controller, error)
	RestApis(ctx context.Context, namespace string) ([]*slinkyv1beta1.RestApi, error)
	Service(ctx context.Context, namespace, name string) (*corev1.Service, error)
	// SecretKey reads key of Secret namespace/name: a lookup that keeps
	// what it reads keeps that one value, never the Secret.
	SecretKey(ctx context.Context, namespace, name, key string) (SecretKey, error)
}

// SecretKey is what Find reads of the JWT key Secret.
type SecretKey struct {
	// Present: the Secret holds the key, and it is not blank.
	Present bool
	// Trusted: the Secret opted in to signing (KeyTrusted).
	Trusted bool
	// Value is the key's value; a lookup may leave it nil where the
	// Secret is not Trusted (serve never signs with it), and may cut it
	// to MaxKeyBytes+1 bytes (one past the bound says "too long").
	Value []byte
}

// MaxKeyBytes bounds a JWT key Find hands out. An HS256 key longer than
// SHA-256's block (64 bytes) is hashed down to 32 bytes before use, so a
// longer one adds nothing; Slurm's documentation makes 32 random bytes,
// the bound leaves room for keys written as text. serve keeps each key it
// uses until no Controller names it (docs/security.md): a tenant's Secret
// of 1 MiB under the key's name costs this, not the Secret.
const MaxKeyBytes = 16 << 10

// ReadSecretKey is SecretKey of a Secret read whole: the one value (nil
// unless trusted, when keepUntrusted is false), cut to one byte past
// MaxKeyBytes.
func ReadSecretKey(secret *corev1.Secret, key string, keepUntrusted bool) SecretKey {
	v := secret.Data[key]
	k := SecretKey{Present: strings.TrimSpace(string(v)) != "", Trusted: KeyTrusted(secret, key)}
	if k.Trusted || keepUntrusted {
		// A copy: the Secret's own bytes would keep the whole answer
		// they were decoded from.
		k.Value = append([]byte(nil), v[:min(len(v), MaxKeyBytes+1)]...)
	}
	return k
}

// Endpoint is where a NodeSet's slurmrestd is and the key to sign its
// tokens with.
type Endpoint struct {
	Namespace  string
	Controller string
	RestApi    string
	Service    *corev1.Service
	// Port is the Service's slurmrestd port.
	Port int32
	// Secret and SecretKey select the key; Key is its value.
	Secret    string
	SecretKey string
	Key       []byte
	// KeyTrusted: the Secret opted in to signing (KeyTrusted).
	KeyTrusted bool
}

// Missing says what stands between a NodeSet and its slurmrestd. Reason
// is a condition reason (ControllerNotFound, RestApiNotFound, ...).
type Missing struct {
	Reason  string
	Message string
}

func (e *Missing) Error() string { return e.Message }

func missing(reason, format string, args ...any) error {
	return &Missing{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Find follows the NodeSet's controllerRef to its slurmrestd and key.
func Find(ctx context.Context, l Lookup, set *slinkyv1beta1.NodeSet) (*Endpoint, error) {
	ns := set.Namespace
	name := set.Spec.ControllerRef.Name
	if name == "" {
		return nil, missing("NoControllerRef", "spec.controllerRef names no Slinky Controller")
	}
	ctrl, err := l.Controller(ctx, ns, name)
	if apierrors.IsNotFound(err) {
		return nil, missing("ControllerNotFound", "Slinky Controller %s/%s (spec.controllerRef) not found", ns, name)
	}
	if err != nil {
		return nil, err
	}
	all, err := l.RestApis(ctx, ns)
	if err != nil {
		return nil, err
	}
	var apis []*slinkyv1beta1.RestApi
	for _, a := range all {
		if a.Spec.ControllerRef.Name == name && a.DeletionTimestamp == nil {
			apis = append(apis, a)
		}
	}
	if len(apis) == 0 {
		return nil, missing("RestApiNotFound", "no Slinky RestApi in %s has spec.controllerRef %s: slurmrestd is how Slurm is reached", ns, name)
	}
	// The oldest, as Slinky's operator picks one of several.
	sort.Slice(apis, func(i, j int) bool {
		a, b := apis[i], apis[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	api := apis[0]
	svcName := api.Name + slinkyv1beta1.RestApiServiceSuffix
	svc, err := l.Service(ctx, ns, svcName)
	if apierrors.IsNotFound(err) {
		return nil, missing("ServiceNotFound", "Service %s/%s of RestApi %s not found", ns, svcName, api.Name)
	}
	if err != nil {
		return nil, err
	}
	ep := &Endpoint{Namespace: ns, Controller: name, RestApi: api.Name, Service: svc, Port: restPort(svc)}

	sel := ctrl.JWTKeySelector()
	if sel == nil || sel.Name == "" || sel.Key == "" {
		return nil, missing("NoJWTKey", "Slinky Controller %s/%s names no JWT key Secret (spec.jwtKeyRef)", ns, name)
	}
	ep.Secret, ep.SecretKey = sel.Name, sel.Key
	k, err := l.SecretKey(ctx, ns, sel.Name, sel.Key)
	switch {
	case apierrors.IsNotFound(err):
		return nil, missing("SecretNotFound", "JWT key Secret %s/%s not found", ns, sel.Name)
	case apierrors.IsForbidden(err):
		return nil, missing("SecretForbidden", "may not read the JWT key Secret %s/%s", ns, sel.Name)
	case err != nil:
		return nil, err
	}
	ep.Key, ep.KeyTrusted = k.Value, k.Trusted
	switch {
	case !k.Present:
		return nil, missing("NoJWTKey", "JWT key Secret %s/%s has no key %q", ns, sel.Name, sel.Key)
	case len(k.Value) > MaxKeyBytes:
		return nil, missing("KeyTooLong", "JWT key %q of Secret %s/%s is longer than %d bytes: an HS256 key needs 32", sel.Key, ns, sel.Name, MaxKeyBytes)
	}
	return ep, nil
}

// restPort is the Service's port for slurmrestd: the one numbered 6820
// (Slinky's), else the only one.
func restPort(svc *corev1.Service) int32 {
	for _, p := range svc.Spec.Ports {
		if p.Port == slinkyv1beta1.SlurmrestdPort {
			return p.Port
		}
	}
	if len(svc.Spec.Ports) == 1 {
		return svc.Spec.Ports[0].Port
	}
	return slinkyv1beta1.SlurmrestdPort
}

// ClusterURL is slurmrestd's URL at the Service's cluster IP. The IP is
// read through the API, not resolved from the Service's DNS name: serve
// may run where cluster DNS is not (outside the cluster, or with a DNS
// policy of its own).
func (e *Endpoint) ClusterURL() (string, error) {
	ip := e.Service.Spec.ClusterIP
	if ip == "" || ip == corev1.ClusterIPNone {
		return "", missing("ServiceNotFound", "Service %s/%s of RestApi %s has no cluster IP", e.Namespace, e.Service.Name, e.RestApi)
	}
	return "http://" + net.JoinHostPort(ip, strconv.Itoa(int(e.Port))), nil
}

// ProxyPath is the path, on the API server, of its proxy to slurmrestd
// through the Service: how a client outside the cluster reaches it.
func (e *Endpoint) ProxyPath() string {
	return fmt.Sprintf("/api/v1/namespaces/%s/services/http:%s:%d/proxy", e.Namespace, e.Service.Name, e.Port)
}

// Describe names the objects, for messages.
func (e *Endpoint) Describe() string {
	return fmt.Sprintf("RestApi %s, Controller %s, key in Secret %s", e.RestApi, e.Controller, e.Secret)
}
