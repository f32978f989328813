// Package jobtemplate implements 'kubectl vc jobtemplate' for Volcano's
// flow.volcano.sh JobTemplates (create -f, list, describe, delete): a
// Volcano Job's spec under a name, which a JobFlow's steps name. Volcano's
// jobtemplate controller records in each template's status the jobs made
// from it; kubectl vc serve has no such controller.
package jobtemplate

import (
	"context"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// Commands returns the commands of the 'jobtemplate' group (its name,
// aliases and help are in pkg/cli's groups.go).
func Commands(f util.Factory, streams genericiooptions.IOStreams) []*cobra.Command {
	return []*cobra.Command{
		newCreateCmd(f, streams),
		newListCmd(f, streams),
		newDescribeCmd(f, streams),
		newDeleteCmd(f, streams),
	}
}

// Kind lists the JobTemplates of a namespace, for name completion.
var Kind = completion.Kind{Namespaced: true, List: func(ctx context.Context, f util.Factory, ns string) (runtime.Object, error) {
	c, err := f.VolcanoClient()
	if err != nil {
		return nil, err
	}
	return c.FlowV1alpha1().JobTemplates(ns).List(ctx, metav1.ListOptions{})
}}

// ValidateName checks the name of a JobTemplate (any object name).
func ValidateName(name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return util.UsageErrorf("invalid jobtemplate name %q: %s", name, errs[0])
	}
	return nil
}

// Ref names a JobTemplate the way kubectl prints it.
func Ref(name string) string { return "jobtemplate.flow.volcano.sh/" + name }

// NoFlowKinds says what to do when the server has no flow.volcano.sh
// kinds: they are Volcano's, installed with its jobflow controllers.
const NoFlowKinds = "the server has no Volcano JobFlows and JobTemplates (flow.volcano.sh/v1alpha1): install Volcano with its jobflow controllers, which run them; 'kubectl vc install' leaves these CRDs to Volcano"

// APIError turns an error of a flow.volcano.sh request into one line,
// naming the missing kinds rather than a bare 404.
func APIError(err error) error { return util.NotServed(err, NoFlowKinds) }

// NotFound is the error of a Get of kind/name in ns: not found (or the
// kinds not served) in one line.
func NotFound(err error, kind, name, ns string) error {
	if err = APIError(err); apierrors.IsNotFound(err) {
		return util.UsageErrorf("%s %q not found in namespace %q", kind, name, ns)
	}
	return err
}
