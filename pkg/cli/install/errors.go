package install

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// objectError is an error about one object, its message made here. The
// command line shows an API error by its own message alone (util.Message:
// one line, without Go's error chain), so wrapping one with %w loses what
// it was about: a server dry run of install --serve failed with just
// `namespace "volcano-system" not found` (issue 29). An objectError is not
// unwrapped, so the object stays in the line the user reads.
type objectError struct{ msg string }

func (e *objectError) Error() string { return e.msg }

// objErr says what was done to which object and what the server answered,
// e.g. "apply role.rbac.authorization.k8s.io/x (namespace y): forbidden: ...".
func objErr(verb string, u *unstructured.Unstructured, err error) error {
	return &objectError{msg: fmt.Sprintf("%s %s: %s", verb, ref(u), util.Message(err))}
}

// namedErr is objErr for an object known by its name only.
func namedErr(verb, what string, err error) error {
	return &objectError{msg: fmt.Sprintf("%s %s: %s", verb, what, util.Message(err))}
}
