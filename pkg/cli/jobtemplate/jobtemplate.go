// Package jobtemplate implements 'kubectl vc jobtemplate' for Volcano's
// flow.volcano.sh JobTemplates (create -f, list, describe, delete): a
// Volcano Job's spec under a name, which a JobFlow's steps name. Volcano's
// jobtemplate controller records in each template's status the jobs made
// from it; kubectl vc serve has no such controller. The commands are
// pkg/cli/flowkind's, which 'jobflow' shares; this package says what a
// JobTemplate has of its own.
package jobtemplate

import (
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/flowkind"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// kind is the JobTemplate to pkg/cli/flowkind's commands.
var kind = &flowkind.Kind[flowv1alpha1.JobTemplate, *flowv1alpha1.JobTemplate, *flowv1alpha1.JobTemplateList]{
	Name: "jobtemplate", Words: "job template", Example: "preprocess",
	GVK: flowv1alpha1.SchemeGroupVersion.WithKind("JobTemplate"),
	Client: func(c versioned.Interface, ns string) flowkind.Client[*flowv1alpha1.JobTemplate, *flowv1alpha1.JobTemplateList] {
		return c.FlowV1alpha1().JobTemplates(ns)
	},
	Check: check,
	Reset: func(t *flowv1alpha1.JobTemplate) { t.Status = flowv1alpha1.JobTemplateStatus{} },
	AsList: func(items []flowv1alpha1.JobTemplate, rv string) runtime.Object {
		return &flowv1alpha1.JobTemplateList{ListMeta: metav1.ListMeta{ResourceVersion: rv}, Items: items}
	},
	Table:    Table,
	Describe: describe,
	Help:     flowkind.Helps{Create: createHelp, List: listHelp, Describe: describeHelp, Delete: deleteHelp},
}

// Commands returns the commands of the 'jobtemplate' group (its name,
// aliases and help are in pkg/cli's groups.go).
func Commands(f util.Factory, streams genericiooptions.IOStreams) []*cobra.Command {
	return kind.Commands(f, streams)
}
