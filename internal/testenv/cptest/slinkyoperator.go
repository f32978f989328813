package cptest

import (
	"context"
	"fmt"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds/slinkyoperator"
)

// InstallSlinkyOperatorCRDs applies the CRDs generated from our read-only
// Controller and RestApi types (pkg/crds/slinkyoperator), which Start and
// InstallCRDs leave out since kubectl-vc never installs them, and waits
// until both kinds are served: their CRDs Established and a list through
// our clientset answering. Tests call it to create Controller and RestApi
// fixtures; it has the shape of a controlplane.Options.BeforeControllers.
func InstallSlinkyOperatorCRDs(ctx context.Context, cp *controlplane.ControlPlane) error {
	list, err := slinkyoperator.CRDs()
	if err == nil {
		err = crds.Apply(ctx, apiextensionsclient.NewForConfigOrDie(cp.AdminConfig()), keys.CLIManager, list...)
	}
	if err != nil {
		return fmt.Errorf("install Slinky operator CRDs: %w", err)
	}
	vc, err := versioned.NewForConfig(cp.AdminConfig())
	if err != nil {
		return err
	}
	// Established can come a moment before the resource answers requests.
	var last error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		opts := metav1.ListOptions{Limit: 1}
		if _, last = vc.SlinkyV1beta1().Controllers("").List(ctx, opts); last != nil {
			return false, nil
		}
		_, last = vc.SlinkyV1beta1().RestApis("").List(ctx, opts)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("the Slinky operator CRDs are not served: %w (last: %v)", err, last)
	}
	return nil
}
