package nodeset

import (
	"context"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm/slinky"
)

// slurmFlags say how 'nodeset describe' reads live Slurm node states: with
// sinfo (--slurm-conf), from a slurmrestd (--slurm-rest-url), or, with
// neither, from the NodeSet's slurmrestd as Slinky runs it, through the API
// server's service proxy (so from outside the cluster too).
type slurmFlags struct {
	Conf       string
	RESTURL    string
	JWTKeyFile string
	TokenFile  string
}

func (f *slurmFlags) validate() error {
	if f.RESTURL == "" && (f.JWTKeyFile != "" || f.TokenFile != "") {
		return fmt.Errorf("--slurm-jwt-key-file and --slurm-token-file need --slurm-rest-url")
	}
	if f.RESTURL != "" && (f.JWTKeyFile == "") == (f.TokenFile == "") {
		return fmt.Errorf("--slurm-rest-url needs exactly one of --slurm-jwt-key-file and --slurm-token-file")
	}
	return nil
}

// slurmReading is a Slurm client ready to read, and how it was reached.
type slurmReading struct {
	client slurm.Client
	how    string
}

// connect returns the Slurm client the flags or the NodeSet's Slinky
// objects lead to; nil, nil when there is none to try.
func (f *slurmFlags) connect(ctx context.Context, cfg *rest.Config, kc kubernetes.Interface, vc versioned.Interface,
	set *slinkyv1beta1.NodeSet) (*slurmReading, error) {
	switch {
	case f.Conf != "":
		return &slurmReading{client: slurm.NewCommands(slurm.CommandsConfig{Conf: f.Conf}), how: "with sinfo (" + f.Conf + ")"}, nil
	case f.RESTURL != "":
		var tok slurm.TokenSource
		if f.JWTKeyFile != "" {
			key, err := os.ReadFile(f.JWTKeyFile)
			if err != nil {
				return nil, err
			}
			if tok, err = slurm.NewSignedToken(key, ""); err != nil {
				return nil, err
			}
		} else {
			tok = slurm.NewFileToken(f.TokenFile)
		}
		cl, err := slurm.NewREST(slurm.RESTConfig{URL: f.RESTURL, Token: tok})
		if err != nil {
			return nil, err
		}
		return &slurmReading{client: cl, how: "over REST from " + f.RESTURL}, nil
	}
	if set.Spec.ControllerRef.Name == "" {
		return nil, nil
	}
	ep, err := slinky.Find(ctx, apiLookup{kc: kc, vc: vc}, set)
	if err != nil {
		return nil, err
	}
	tok, err := slurm.NewSignedToken(ep.Key, "")
	if err != nil {
		return nil, err
	}
	tr, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	cl, err := slurm.NewREST(slurm.RESTConfig{URL: strings.TrimRight(cfg.Host, "/") + ep.ProxyPath(), Token: tok, Transport: tr})
	if err != nil {
		return nil, err
	}
	return &slurmReading{client: cl, how: fmt.Sprintf("over REST through the API server's proxy to Service %s (%s)", ep.Service.Name, ep.Describe())}, nil
}

// apiLookup reads what slinky.Find follows with the user's credentials.
type apiLookup struct {
	kc kubernetes.Interface
	vc versioned.Interface
}

func (l apiLookup) Controller(ctx context.Context, ns, name string) (*slinkyv1beta1.Controller, error) {
	return l.vc.SlinkyV1beta1().Controllers(ns).Get(ctx, name, metav1.GetOptions{})
}

func (l apiLookup) RestApis(ctx context.Context, ns string) ([]*slinkyv1beta1.RestApi, error) {
	list, err := l.vc.SlinkyV1beta1().RestApis(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]*slinkyv1beta1.RestApi, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

func (l apiLookup) Service(ctx context.Context, ns, name string) (*corev1.Service, error) {
	return l.kc.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
}

func (l apiLookup) SecretKey(ctx context.Context, ns, name, key string) (slinky.SecretKey, error) {
	s, err := l.kc.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return slinky.SecretKey{}, err
	}
	// The user's own credentials read it: the value whatever its labels.
	return slinky.ReadSecretKey(s, key, true), nil
}
