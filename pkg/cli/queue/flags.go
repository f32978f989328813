package queue

import (
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

func refuseRoot(verb string, names []string) error {
	for _, n := range names {
		if n == keys.RootQueue {
			return util.UsageErrorf("cannot %s queue %q: it is the top of the queue hierarchy and is always open", verb, n)
		}
	}
	return nil
}
