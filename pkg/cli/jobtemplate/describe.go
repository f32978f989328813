package jobtemplate

import (
	"context"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/jobspec"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
)

// describeHelp is the help of 'jobtemplate describe'.
var describeHelp = kind.Help{
	Short: "Show a job template in detail",
	Long: `
			Show a JobTemplate's job spec (queue, minAvailable, tasks with replicas, images
			and requests, policies), the Volcano Jobs made from it (labelled
			volcano.sh/createdByJobTemplate by Volcano's jobflow controller) with their
			JobFlow and phase, and its events.`,
	Example: `
			kubectl vc jobtemplate describe preprocess -n research

			# As vcctl names it
			kubectl vc jobtemplate describe -N preprocess`,
}

// describeTemplate writes a template's job spec and the jobs made from it; a
// failure to list them is said in place of the table.
func describeTemplate(ctx context.Context, o *vcprinters.DescribeOptions, d *vcprinters.Describer, t *flowv1alpha1.JobTemplate) {
	jobspec.WriteSpec(d, &t.Spec, t.Spec.MinAvailable)

	sel := flowv1alpha1.CreatedByJobTemplateKey + "=" + flowv1alpha1.ObjectString(t.Namespace, t.Name)
	jobs, err := o.Client.BatchV1alpha1().Jobs(t.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		d.CannotList(0, "Jobs", err)
	} else {
		d.Table(0, "Jobs", "Name\tJobFlow\tPhase\tAge", jobRows(t, jobs.Items))
	}
}

// jobRows are the jobs made from t: those listed, and those the
// template's status names that are gone.
func jobRows(t *flowv1alpha1.JobTemplate, jobs []batchv1alpha1.Job) []string {
	var rows []string
	seen := map[string]bool{}
	sort.Slice(jobs, func(i, k int) bool { return jobs[i].Name < jobs[k].Name })
	for i := range jobs {
		j := &jobs[i]
		seen[j.Name] = true
		phase := j.Status.State.Phase
		if phase == "" {
			phase = batchv1alpha1.JobPending
		}
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%s", j.Name, vcprinters.OrNone(FlowOf(j)), phase, vcprinters.Age(j.CreationTimestamp)))
	}
	for _, n := range t.Status.JobDependsOnList {
		if !seen[n] {
			rows = append(rows, fmt.Sprintf("%s\t<unknown>\t<deleted>\t", n))
		}
	}
	return rows
}

// FlowOf is the name of the JobFlow a job was made for ("" if none): its
// controller reference, else the flow named by its label.
func FlowOf(j *batchv1alpha1.Job) string {
	if ref := metav1.GetControllerOf(j); ref != nil && ref.Kind == "JobFlow" && ref.APIVersion == flowv1alpha1.SchemeGroupVersion.String() {
		return ref.Name
	}
	return flowv1alpha1.CreatedBy(j, flowv1alpha1.CreatedByJobFlowKey)
}
