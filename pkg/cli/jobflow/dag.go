package jobflow

import (
	"fmt"
	"sort"
	"strings"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
)

// State is where a step of a flow is.
type State string

// The states of a step: its job's progress, or Waiting when it has none.
const (
	// Waiting: no job was made for the step yet.
	Waiting State = "Waiting"
	// Running: its job exists and has not finished.
	Running State = "Running"
	// Done: its job Completed.
	Done State = "Done"
	// Failed: its job Failed, was Terminated or Aborted.
	Failed State = "Failed"
)

// Step is one step of a flow as describe and list show it.
type Step struct {
	// Name is the step's (and its JobTemplate's) name.
	Name string
	// DependsOn are the steps it waits for (dependsOn.targets).
	DependsOn []string
	// Job is the name of the Volcano Job made (or to be made) for it.
	Job string
	// Phase is that job's phase; empty when there is no job.
	Phase batchv1alpha1.JobPhase
	State State
	// Why says why a Waiting step has no job yet.
	Why string
	// Probe summarises dependsOn.probe ("" without one).
	Probe string
	// Depth is the length of the longest chain of dependencies before it.
	Depth int
}

// stateOf is the step state of a job phase.
func stateOf(p batchv1alpha1.JobPhase) State {
	switch p {
	case batchv1alpha1.JobCompleted:
		return Done
	case batchv1alpha1.JobFailed, batchv1alpha1.JobTerminated, batchv1alpha1.JobAborted:
		return Failed
	}
	return Running
}

// Input is what Steps reads: the flow, the phases of the jobs it made by
// job name (a job not there has not been made; a job made but not yet
// written by the job controller is Pending), and, when known, which of the
// step's JobTemplates exist (nil: not known).
type Input struct {
	Flow      *flowv1alpha1.JobFlow
	Jobs      map[string]batchv1alpha1.JobPhase
	Templates map[string]bool
}

// Steps works out each step of the flow, in an order where every step
// comes after the steps it depends on (by depth, then in the flow's
// order), with why each step without a job is still waiting, as Volcano's
// jobflow controller decides: a step's job is made once every target's job
// is Completed.
func Steps(in Input) []Step {
	flows := in.Flow.Spec.Flows
	index := map[string]int{}
	for i, f := range flows {
		index[f.Name] = i
	}
	depth := make([]int, len(flows))
	state := make([]int, len(flows)) // 0 new, 1 visiting, 2 done
	var visit func(i int) int
	visit = func(i int) int {
		switch state[i] {
		case 1: // a cycle (Volcano's admission refuses one): stop here
			return 0
		case 2:
			return depth[i]
		}
		state[i] = 1
		d := 0
		for _, t := range targets(flows[i]) {
			if k, ok := index[t]; ok {
				if v := visit(k) + 1; v > d {
					d = v
				}
			}
		}
		depth[i], state[i] = d, 2
		return d
	}
	steps := make([]Step, len(flows))
	for i, f := range flows {
		s := Step{Name: f.Name, DependsOn: targets(f), Job: flowv1alpha1.JobName(in.Flow.Name, f.Name), Depth: visit(i), Probe: probe(f.DependsOn)}
		if p, ok := in.Jobs[s.Job]; ok {
			if p == "" {
				p = batchv1alpha1.JobPending
			}
			s.Phase, s.State = p, stateOf(p)
		} else {
			s.State = Waiting
		}
		steps[i] = s
	}
	for i := range steps {
		if steps[i].State == Waiting {
			steps[i].Why = why(in, steps, index, i)
		}
	}
	order := make([]int, len(steps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return steps[order[a]].Depth < steps[order[b]].Depth })
	out := make([]Step, len(steps))
	for i, k := range order {
		out[i] = steps[k]
	}
	return out
}

func targets(f flowv1alpha1.Flow) []string {
	if f.DependsOn == nil {
		return nil
	}
	return f.DependsOn.Targets
}

// why says why step i has no job yet.
func why(in Input, steps []Step, index map[string]int, i int) string {
	s := steps[i]
	var blocking []string
	for _, t := range s.DependsOn {
		k, ok := index[t]
		switch {
		case !ok:
			blocking = append(blocking, t+" (no such step)")
		case steps[k].State == Waiting:
			blocking = append(blocking, t+" (no job yet)")
		case steps[k].Phase != batchv1alpha1.JobCompleted:
			blocking = append(blocking, fmt.Sprintf("%s (%s)", t, steps[k].Phase))
		}
	}
	if len(blocking) > 0 {
		return "waits for " + someOf(blocking, ", ")
	}
	if in.Templates != nil && !in.Templates[s.Name] {
		return fmt.Sprintf("JobTemplate %q not found: the jobflow controller cannot make its job", s.Name)
	}
	if in.Flow.Status.State.Phase == flowv1alpha1.Failed {
		return "the flow has failed"
	}
	if len(s.DependsOn) == 0 {
		return "nothing to wait for: waiting for Volcano's jobflow controller to make its job"
	}
	return "dependencies done: waiting for Volcano's jobflow controller to make its job"
}

// probe summarises a step's probe; Volcano's jobflow controller waits on
// the targets' jobs, the probe is shown as written.
func probe(d *flowv1alpha1.DependsOn) string {
	if d == nil || d.Probe == nil {
		return ""
	}
	var parts []string
	for _, h := range d.Probe.HTTPGetList {
		parts = append(parts, fmt.Sprintf("http %s:%d%s", h.TaskName, h.Port, h.Path))
	}
	for _, t := range d.Probe.TCPSocketList {
		parts = append(parts, fmt.Sprintf("tcp %s:%d", t.TaskName, t.Port))
	}
	for _, t := range d.Probe.TaskStatusList {
		parts = append(parts, fmt.Sprintf("task %s %s", t.TaskName, t.Phase))
	}
	return strings.Join(parts, ", ")
}

// Counts are a flow's steps by state.
type Counts struct{ Steps, Done, Running, Failed, Waiting int }

// Count counts steps by state.
func Count(steps []Step) Counts {
	c := Counts{Steps: len(steps)}
	for _, s := range steps {
		switch s.State {
		case Done:
			c.Done++
		case Running:
			c.Running++
		case Failed:
			c.Failed++
		default:
			c.Waiting++
		}
	}
	return c
}

// What describe draws of a step is bounded, so that its output grows
// linearly with the flow (issue 58): a chain of N steps was drawn N levels
// deep, each line indented three columns more than the last (a chain of
// 40 000 steps, which one JobFlow holds, drew gigabytes), and one step's
// long list of dependencies widened every line of its table.
const (
	// maxIndent is the deepest level drawn indented: a step below it is
	// drawn at that indentation, marked with its level.
	maxIndent = 32
	// maxListed is how many names a list of steps names (its other
	// dependencies, those it waits for); the others are counted.
	maxListed = 5
)

// someOf joins the first maxListed names with sep, counting the others.
func someOf(names []string, sep string) string {
	if len(names) <= maxListed {
		return strings.Join(names, sep)
	}
	return fmt.Sprintf("%s%s… and %d more", strings.Join(names[:maxListed], sep), sep, len(names)-maxListed)
}

// Draw draws the flow as a tree of tab-separated lines: each step under
// the dependency that finishes last before it (its deepest target; ties go
// to the first listed), with its other dependencies named ("also after
// x"). Columns: the drawn step, its state, its job and phase or why it
// waits. Levels past maxIndent are drawn at its indentation, marked
// "[level N]".
func Draw(steps []Step) []string {
	byName := map[string]int{}
	for i, s := range steps {
		byName[s.Name] = i
	}
	parent := make([]int, len(steps))
	children := map[int][]int{}
	var roots []int
	for i, s := range steps {
		parent[i] = -1
		for _, t := range s.DependsOn {
			if k, ok := byName[t]; ok && k != i && steps[k].Depth < s.Depth && (parent[i] < 0 || steps[k].Depth > steps[parent[i]].Depth) {
				parent[i] = k
			}
		}
		if parent[i] < 0 {
			roots = append(roots, i)
		} else {
			children[parent[i]] = append(children[parent[i]], i)
		}
	}
	var lines []string
	var walk func(i, level int, prefix, branch string)
	walk = func(i, level int, prefix, branch string) {
		s := steps[i]
		label := prefix + branch + s.Name
		if level > maxIndent {
			label += fmt.Sprintf(" [level %d]", level)
		}
		var also []string
		for _, t := range s.DependsOn {
			if k, ok := byName[t]; !ok || k != parent[i] {
				also = append(also, t)
			}
		}
		if len(also) > 0 {
			label += " (also after " + someOf(also, ", ") + ")"
		}
		detail := s.Job + " " + string(s.Phase)
		if s.State == Waiting {
			detail = s.Why
		}
		if s.Probe != "" {
			detail += "; probe: " + s.Probe
		}
		lines = append(lines, fmt.Sprintf("%s\t%s\t%s", label, s.State, detail))
		kids := children[i]
		next := prefix
		switch {
		case level >= maxIndent:
			// As deep as drawn: the children are drawn here too.
		case branch == "├─ ":
			next += "│  "
		case branch == "└─ ":
			next += "   "
		}
		for n, k := range kids {
			b := "├─ "
			if n == len(kids)-1 {
				b = "└─ "
			}
			walk(k, level+1, next, b)
		}
	}
	for _, r := range roots {
		walk(r, 0, "", "")
	}
	return lines
}
