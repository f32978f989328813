package queue

import (
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// validateNewName checks the name of a queue to be created
// (rules.ValidateNewQueueName), as a usage error.
func validateNewName(name string) error {
	if err := rules.ValidateNewQueueName(name); err != nil {
		return util.UsageErrorf("%s", err)
	}
	return nil
}

// validateName checks the name of an existing queue
// (rules.ValidateQueueName), as a usage error.
func validateName(name string) error { return Kind.ValidateName(name) }
