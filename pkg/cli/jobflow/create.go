package jobflow

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// Check refuses a flow Volcano's admission refuses, or whose jobs could
// never all be made: steps with a name each, named once, every target a
// step of the flow other than itself, no cycle.
func Check(jf *flowv1alpha1.JobFlow) error {
	if len(jf.Spec.Flows) == 0 {
		return util.UsageErrorf("jobflow %q has no steps (spec.flows)", jf.Name)
	}
	index := map[string]int{}
	for i, f := range jf.Spec.Flows {
		if f.Name == "" {
			return util.UsageErrorf("jobflow %q: step %d has no name (the JobTemplate it runs)", jf.Name, i+1)
		}
		if errs := validation.IsDNS1123Subdomain(f.Name); len(errs) > 0 {
			return util.UsageErrorf("jobflow %q: invalid step name %q: %s", jf.Name, f.Name, errs[0])
		}
		if _, ok := index[f.Name]; ok {
			return util.UsageErrorf("jobflow %q: step %q is named twice", jf.Name, f.Name)
		}
		index[f.Name] = i
	}
	for _, f := range jf.Spec.Flows {
		for _, t := range targets(f) {
			if t == f.Name {
				return util.UsageErrorf("jobflow %q: step %q depends on itself", jf.Name, f.Name)
			}
			if _, ok := index[t]; !ok {
				return util.UsageErrorf("jobflow %q: step %q depends on %q, which is not a step of the flow", jf.Name, f.Name, t)
			}
		}
	}
	if c := cycle(jf.Spec.Flows, index); c != nil {
		return util.UsageErrorf("jobflow %q: the steps depend on each other in a cycle: %s", jf.Name, strings.Join(c, " -> "))
	}
	return nil
}

// cycle returns a cycle of dependencies (first step repeated at the end),
// or nil.
func cycle(flows []flowv1alpha1.Flow, index map[string]int) []string {
	state := make([]int, len(flows))
	var path []string
	var visit func(i int) []string
	visit = func(i int) []string {
		state[i] = 1
		path = append(path, flows[i].Name)
		for _, t := range targets(flows[i]) {
			k := index[t]
			switch state[k] {
			case 1:
				for p, n := range path {
					if n == t {
						return append(append([]string{}, path[p:]...), t)
					}
				}
			case 0:
				if c := visit(k); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[i] = 2
		return nil
	}
	for i := range flows {
		if state[i] == 0 {
			if c := visit(i); c != nil {
				return c
			}
		}
	}
	return nil
}

// createHelp is the help of 'jobflow create'.
var createHelp = kind.Help{
	Short: "Create job flows from a file",
	Long: `
			Create Volcano JobFlows from a file (-f FILE, or -f - for standard input) of YAML
			or JSON: one or several flow.volcano.sh/v1alpha1 JobFlows separated by ---.
			Every object is read and checked first (another kind, an unknown field, a step
			named twice, a dependency on a step the flow does not have, a cycle, a namespace
			other than -n): then nothing is created. They are created in the file's order;
			the first one the server refuses ends the command, naming those created before
			it. Volcano's jobflow controller then makes a Volcano Job for each step whose
			dependencies have completed, from the JobTemplate of the step's name. vcctl's
			--file works too.`,
	Example: `
			# Create the flows of a file
			kubectl vc jobflow create -f pipeline.yaml

			# Check a flow without creating it
			kubectl vc jobflow create -f pipeline.yaml --dry-run=server`,
}
