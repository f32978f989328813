package queue

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// parseResources parses "cpu=4,memory=8Gi" for the flag named flag
// (rules.ParseResourceList), as a usage error.
func parseResources(flag, s string) (corev1.ResourceList, error) {
	l, err := rules.ParseResourceList(flag, s)
	if err != nil {
		return nil, util.UsageErrorf("%s", err)
	}
	return l, nil
}

func validateWeight(w int32) error {
	if w < 1 || w > 65535 {
		return util.UsageErrorf("invalid --weight %d: must be between 1 and 65535", w)
	}
	return nil
}

func validatePriority(p int32) error {
	if p < 0 {
		return util.UsageErrorf("invalid --priority %d: must not be negative", p)
	}
	return nil
}
