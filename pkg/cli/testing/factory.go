// Package testing holds what command unit tests share: a util.Factory
// over fake clientsets, so that a test builds a command or its Options
// and runs Complete, Validate and Run without a cluster.
package testing

import (
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Factory is a util.Factory over the clients a test gives it (typically
// the fake clientsets of client-go and of our generated clientset). The
// kubeconfig methods of cli-runtime's RESTClientGetter are not
// implemented: a command under test that calls one panics, which says the
// test needs a real configuration.
type Factory struct {
	util.Factory

	// NS is what -n or the kubeconfig gives; NSGiven says -n was given;
	// NSErr, when set, is the error of reading the kubeconfig.
	NS      string
	NSGiven bool
	NSErr   error

	Volcano versioned.Interface
	Kube    kubernetes.Interface
}

var _ util.Factory = Factory{}

// Namespace returns NS, NSGiven and NSErr.
func (f Factory) Namespace() (string, bool, error) { return f.NS, f.NSGiven, f.NSErr }

// VolcanoClient returns Volcano.
func (f Factory) VolcanoClient() (versioned.Interface, error) { return f.Volcano, nil }

// KubeClient returns Kube.
func (f Factory) KubeClient() (kubernetes.Interface, error) { return f.Kube, nil }

// RESTConfig returns an empty configuration: the fakes need none.
func (f Factory) RESTConfig() (*rest.Config, error) { return &rest.Config{}, nil }
