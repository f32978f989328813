package install

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
)

// CheckPolicyAPI refuses clusters whose API server cannot enforce the
// policies, rather than failing halfway through the apply.
func CheckPolicyAPI(disc discovery.DiscoveryInterface) error {
	list, err := disc.ServerResourcesForGroupVersion(vapGV.String())
	if err != nil && !apierrors.IsNotFound(err) && !errors.Is(err, memory.ErrCacheNotFound) {
		return fmt.Errorf("discover %s: %s", vapGV, util.Message(err))
	}
	found := map[string]bool{}
	if list != nil {
		for _, r := range list.APIResources {
			found[r.Kind] = true
		}
	}
	if !found["ValidatingAdmissionPolicy"] || !found["ValidatingAdmissionPolicyBinding"] {
		return fmt.Errorf("the API server does not serve %s ValidatingAdmissionPolicy (needs Kubernetes 1.30 or newer): upgrade the cluster, or install without --policies", vapGV)
	}
	return nil
}

// CheckServiceMonitorAPI refuses --service-monitor, before anything is
// applied, where the Prometheus Operator's ServiceMonitor kind is not
// served.
func CheckServiceMonitorAPI(disc discovery.DiscoveryInterface) error {
	list, err := disc.ServerResourcesForGroupVersion(serviceMonitorGV.String())
	// A cached discovery client says a group it does not have with an
	// error of its own.
	if err != nil && !apierrors.IsNotFound(err) && !errors.Is(err, memory.ErrCacheNotFound) {
		return fmt.Errorf("discover %s: %s", serviceMonitorGV, util.Message(err))
	}
	if list != nil {
		for _, r := range list.APIResources {
			if r.Kind == "ServiceMonitor" {
				return nil
			}
		}
	}
	return fmt.Errorf("the API server does not serve %s ServiceMonitor (the Prometheus Operator's CRD): install the Prometheus Operator first, or leave out --service-monitor and point your scraper at the Service %s (docs/security.md)", serviceMonitorGV, manifests.ServeMetricsService)
}
