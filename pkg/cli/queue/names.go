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
func validateName(name string) error {
	if err := rules.ValidateQueueName(name); err != nil {
		return util.UsageErrorf("%s", err)
	}
	return nil
}

// queueRef is how kubectl names a queue in what it did: kind.group/name.
func queueRef(name string) string { return "queue.scheduling.volcano.sh/" + name }
