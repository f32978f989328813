package command

import (
	"fmt"
	"io"
	"strings"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
)

// noteJobCommands tells, on errOut, which of the listed Commands are for
// Volcano Jobs: only Volcano's job controller applies them ('kubectl vc
// serve' has none), so they are waiting for it rather than stuck in serve.
func noteJobCommands(errOut io.Writer, items []busv1alpha1.Command) {
	var names []string
	for i := range items {
		t := items[i].TargetObject
		if t != nil && t.Kind == "Job" && t.APIVersion == batchv1alpha1.SchemeGroupVersion.String() {
			names = append(names, items[i].Namespace+"/"+items[i].Name)
		}
	}
	if len(names) == 0 {
		return
	}
	fmt.Fprintf(errOut, "note: %d Command(s) on Volcano Jobs waiting for a job controller (Volcano's; kubectl vc serve has none): %s\n",
		len(names), strings.Join(names, ", "))
}
