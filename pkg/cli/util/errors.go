// Package util holds what every command shares: the client factory, error
// messages a user can act on, and name validation.
package util

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UsageError is an error in the command line itself (flags, arguments).
type UsageError struct{ msg string }

func (e UsageError) Error() string { return e.msg }

// UsageErrorf returns a UsageError.
func UsageErrorf(format string, a ...any) error { return UsageError{fmt.Sprintf(format, a...)} }

// Message turns any error into one line a user can act on: it names what
// happened and, where there is one, the fix. It never returns a wrapped
// chain of Go errors.
func Message(err error) string {
	if err == nil {
		return ""
	}
	var ue UsageError
	if errors.As(err, &ue) {
		return ue.msg
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out: " + firstLine(err.Error())
	}
	if status, ok := err.(apierrors.APIStatus); ok || errors.As(err, &status) {
		return apiMessage(status.Status())
	}
	var opErr *net.OpError
	var urlErr *url.Error
	isOp, isURL := errors.As(err, &opErr), errors.As(err, &urlErr)
	if isOp || isURL || errors.Is(err, syscall.ECONNREFUSED) {
		host := ""
		if urlErr != nil {
			if u, perr := url.Parse(urlErr.URL); perr == nil {
				host = u.Host
			}
		}
		if host != "" {
			return fmt.Sprintf("cannot reach the Kubernetes API server at %s: check your kubeconfig (--kubeconfig, --context) and that the cluster is running", host)
		}
		return "cannot reach the Kubernetes API server: check your kubeconfig (--kubeconfig, --context) and that the cluster is running"
	}
	return firstLine(err.Error())
}

func apiMessage(s metav1.Status) string {
	msg := firstLine(s.Message)
	// An admission policy's denial is neither an RBAC problem nor a bad
	// field: show the policy's own message, which says what to do.
	if _, after, ok := strings.Cut(msg, "denied request: "); ok && strings.Contains(msg, "ValidatingAdmissionPolicy") {
		return "rejected by admission policy: " + strings.TrimSpace(after)
	}
	switch s.Reason {
	case metav1.StatusReasonForbidden:
		return "forbidden: " + stripPrefix(msg) + " (ask a cluster admin for RBAC access, or check --context)"
	case metav1.StatusReasonUnauthorized:
		return "unauthorized: your credentials were rejected (check --kubeconfig, --context or --token)"
	case metav1.StatusReasonNotFound:
		if d := s.Details; d != nil && d.Name != "" {
			kind := d.Kind
			if kind == "" {
				kind = "object"
			}
			return fmt.Sprintf("%s %q not found", strings.TrimSuffix(kind, "s"), d.Name)
		}
		if strings.Contains(msg, "the server could not find the requested resource") {
			return "the server does not know this resource: install the CRDs with 'kubectl vc install'"
		}
		return msg
	case metav1.StatusReasonAlreadyExists:
		return msg
	case metav1.StatusReasonInvalid:
		return "invalid: " + msg
	case metav1.StatusReasonTimeout, metav1.StatusReasonServerTimeout:
		return "the API server timed out: " + msg + " (try again)"
	}
	return msg
}

// stripPrefix removes the API server's redundant "x is forbidden: " lead-in
// when the rest of the message already says it.
func stripPrefix(msg string) string {
	return strings.TrimSpace(msg)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// InNamespace names the namespace in a not-found error of an object read
// from ns ("podgroup \"x\" not found in namespace \"batch\""), as every
// command says it: the API server's own message leaves it out.
func InNamespace(err error, ns string) error {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Reason != metav1.StatusReasonNotFound {
		return err
	}
	d := status.Status().Details
	if d == nil || d.Name == "" || ns == "" {
		return err
	}
	kind := strings.TrimSuffix(d.Kind, "s")
	if kind == "" {
		kind = "object"
	}
	return UsageErrorf("%s %q not found in namespace %q", kind, d.Name, ns)
}

// NotServed turns the API server's answer for a kind it does not serve (a
// 404 "the server could not find the requested resource") into the one
// line missing says, for kinds that another project installs (Volcano's
// Jobs and flows); any other error is returned as it is.
func NotServed(err error, missing string) error {
	var status apierrors.APIStatus
	if apierrors.IsNotFound(err) && errors.As(err, &status) &&
		strings.Contains(status.Status().Message, "the server could not find the requested resource") {
		return UsageErrorf("%s", missing)
	}
	return err
}
