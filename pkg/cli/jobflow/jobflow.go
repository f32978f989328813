// Package jobflow implements 'kubectl vc jobflow' for Volcano's
// flow.volcano.sh JobFlows (create -f, list, describe, delete): steps
// naming JobTemplates, each run as a Volcano Job (<flow>-<template>) by
// Volcano's jobflow controller once the steps it depends on have
// completed. kubectl vc serve has no jobflow controller. The commands are
// pkg/cli/flowkind's, which 'jobtemplate' shares; this package says what
// a JobFlow has of its own.
package jobflow

import (
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/flowkind"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// kind is the JobFlow to pkg/cli/flowkind's commands.
var kind = &flowkind.Kind[flowv1alpha1.JobFlow, *flowv1alpha1.JobFlow, *flowv1alpha1.JobFlowList]{
	Name: "jobflow", Words: "job flow", Example: "pipeline",
	GVK: flowv1alpha1.SchemeGroupVersion.WithKind("JobFlow"),
	Client: func(c versioned.Interface, ns string) flowkind.Client[*flowv1alpha1.JobFlow, *flowv1alpha1.JobFlowList] {
		return c.FlowV1alpha1().JobFlows(ns)
	},
	Check: Check,
	Reset: func(jf *flowv1alpha1.JobFlow) { jf.Status = flowv1alpha1.JobFlowStatus{} },
	AsList: func(items []flowv1alpha1.JobFlow, rv string) runtime.Object {
		return &flowv1alpha1.JobFlowList{ListMeta: metav1.ListMeta{ResourceVersion: rv}, Items: items}
	},
	Table:    Table,
	Describe: describe,
	Help:     flowkind.Helps{Create: createHelp, List: listHelp, Describe: describeHelp, Delete: deleteHelp},
}

// Commands returns the commands of the 'jobflow' group (its name, aliases
// and help are in pkg/cli's groups.go).
func Commands(f util.Factory, streams genericiooptions.IOStreams) []*cobra.Command {
	return kind.Commands(f, streams)
}

// phaseOf is the flow's phase; one the controller has not written yet is
// Pending.
func phaseOf(jf *flowv1alpha1.JobFlow) flowv1alpha1.Phase {
	if jf.Status.State.Phase == "" {
		return flowv1alpha1.Pending
	}
	return jf.Status.State.Phase
}

// recorded are the phases of the flow's jobs as the jobflow controller
// recorded them in the flow's status (what list shows, without a request
// per flow).
func recorded(jf *flowv1alpha1.JobFlow) map[string]batchv1alpha1.JobPhase {
	out := map[string]batchv1alpha1.JobPhase{}
	for _, s := range jf.Status.JobStatusList {
		out[s.Name] = s.State
	}
	for name, c := range jf.Status.Conditions {
		if _, ok := out[name]; !ok {
			out[name] = c.Phase
		}
	}
	return out
}
