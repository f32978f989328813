// Package jobflow implements 'kubectl vc jobflow' for Volcano's
// flow.volcano.sh JobFlows (create -f, list, describe, delete): steps
// naming JobTemplates, each run as a Volcano Job (<flow>-<template>) by
// Volcano's jobflow controller once the steps it depends on have
// completed. kubectl vc serve has no jobflow controller.
package jobflow

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/job"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// Commands returns the commands of the 'jobflow' group (its name, aliases
// and help are in pkg/cli's groups.go).
func Commands(f util.Factory, streams genericiooptions.IOStreams) []*cobra.Command {
	return []*cobra.Command{
		newCreateCmd(f, streams),
		newListCmd(f, streams),
		newDescribeCmd(f, streams),
		newDeleteCmd(f, streams),
	}
}

// Kind lists the JobFlows of a namespace, for name completion (the same
// as 'job list --flow' completes with).
var Kind = job.FlowNames

// Ref names a JobFlow the way kubectl prints it.
func Ref(name string) string { return "jobflow.flow.volcano.sh/" + name }

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
