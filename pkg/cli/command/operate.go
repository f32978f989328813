package command

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Create writes cm in its namespace (nothing on a client dry run, a
// server dry run with dryServer) and returns it as written.
func Create(ctx context.Context, c versioned.Interface, cm *busv1alpha1.Command, dryClient, dryServer bool) (*busv1alpha1.Command, error) {
	if dryClient {
		return cm, nil
	}
	return c.BusV1alpha1().Commands(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{DryRun: util.DryRunOpts(dryServer)})
}
