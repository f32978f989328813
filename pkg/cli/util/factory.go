package util

import (
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Factory gives commands their clients. It wraps cli-runtime's
// RESTClientGetter, so --kubeconfig, --context, -n and friends behave as in kubectl.
type Factory interface {
	genericclioptions.RESTClientGetter
	// Namespace returns the namespace from -n or the kubeconfig, and whether -n was given.
	Namespace() (string, bool, error)
	// VolcanoClient returns the clientset of the Volcano API groups.
	VolcanoClient() (versioned.Interface, error)
	// KubeClient returns the clientset of the core Kubernetes API groups.
	KubeClient() (kubernetes.Interface, error)
	// RESTConfig is the configuration of those clients, for the others a
	// command needs (dynamic, apiextensions): the kubeconfig's, with
	// kubectl-vc's user agent and no client-side rate limit.
	RESTConfig() (*rest.Config, error)
}

type factory struct {
	genericclioptions.RESTClientGetter
}

// NewFactory returns a Factory over getter (usually *genericclioptions.ConfigFlags).
func NewFactory(getter genericclioptions.RESTClientGetter) Factory {
	return &factory{RESTClientGetter: getter}
}

func (f *factory) Namespace() (string, bool, error) {
	return f.ToRawKubeConfigLoader().Namespace()
}

func (f *factory) RESTConfig() (*rest.Config, error) {
	cfg, err := f.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "kubectl-vc"
	// No client-side rate limit, as in serve (docs/serve.md): a command
	// sends its requests one after another (a watch beside them at most),
	// so client-go's default limit of 5 per second after a burst of 10
	// only made users wait: 'podgroup list -A' over 20 000 podgroups, 40
	// pages of 500, spent 5 of its 7 seconds in it. Priority and Fairness
	// on the API server is what protects the server.
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS = -1
	}
	return cfg, nil
}

func (f *factory) VolcanoClient() (versioned.Interface, error) {
	cfg, err := f.RESTConfig()
	if err != nil {
		return nil, err
	}
	return versioned.NewForConfig(cfg)
}

func (f *factory) KubeClient() (kubernetes.Interface, error) {
	cfg, err := f.RESTConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// Clients returns both clientsets of f, for the commands that read
// Volcano's objects and the core ones beside them (pods, events, leases).
func Clients(f Factory) (versioned.Interface, kubernetes.Interface, error) {
	vc, err := f.VolcanoClient()
	if err != nil {
		return nil, nil, err
	}
	kc, err := f.KubeClient()
	if err != nil {
		return nil, nil, err
	}
	return vc, kc, nil
}
