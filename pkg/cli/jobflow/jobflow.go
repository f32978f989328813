// Package jobflow implements 'kubectl vc jobflow' for Volcano's
// flow.volcano.sh JobFlows (create -f, list, describe, delete): steps
// naming JobTemplates, each run as a Volcano Job (<flow>-<template>) by
// Volcano's jobflow controller once the steps it depends on have
// completed. kubectl vc serve has no jobflow controller. Its Kind (kind.go)
// says what a JobFlow has of its own; the commands are the shared ones of
// pkg/cli/write, list and describe.
package jobflow

import (
	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
)

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
