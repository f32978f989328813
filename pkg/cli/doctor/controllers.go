package doctor

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/tools/pager"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/leases"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
)

// How a controller manager that acts on Commands shows itself: its
// leader-election Lease (held and renewed while it runs; pkg/leases names
// them) and its Deployment (serve's: manifests.manifests.ServeDeployment).
const (
	VolcanoDeployment   = "volcano-controllers"
	volcanoQueueControl = "queue-controller"
)

// actor is what is known of one controller manager.
type actor struct {
	name string
	// active: it runs (a Lease renewed within its duration, or a ready
	// Deployment without a Lease).
	active bool
	// commands: it runs the controller that applies queue Commands.
	commands bool
	// deployment: its Deployment exists (so 'kubectl logs deployment/...'
	// and 'kubectl scale deployment ...' work).
	deployment bool
	// holder is the holder of its Lease, "" without one.
	holder   string
	evidence []string
	err      error
}

func (a actor) acts() bool { return a.active && a.commands }

func (a actor) String() string {
	return a.name + " (" + strings.Join(a.evidence, "; ") + ")"
}

// detect looks for a controller manager's Lease and Deployment;
// queueController says from a container's arguments whether it runs the
// queue controller.
func (o *Options) detect(ctx context.Context, name, lease, deployment string, queueController func(args []string) bool) actor {
	a := actor{name: name, commands: true}
	ns := o.ControllersNamespace
	leaseFresh, leaseFound := false, false
	l, err := o.kube.CoordinationV1().Leases(ns).Get(ctx, lease, metav1.GetOptions{})
	switch {
	case err == nil:
		leaseFound = true
		st := leases.Of(l)
		since := st.Since(o.now())
		leaseFresh = st.Held(o.now(), leases.Grace)
		if leaseFresh {
			a.holder = st.Holder
			a.evidence = append(a.evidence, fmt.Sprintf("Lease %s/%s held by %s, renewed %s ago", ns, lease, st.Holder, duration.HumanDuration(since)))
		} else if st.Renewed.IsZero() || st.Holder == "" {
			a.evidence = append(a.evidence, fmt.Sprintf("Lease %s/%s has no holder", ns, lease))
		} else {
			a.evidence = append(a.evidence, fmt.Sprintf("Lease %s/%s expired, last renewed %s ago", ns, lease, duration.HumanDuration(since)))
		}
	case !apierrors.IsNotFound(err):
		a.err = err
		return a
	}
	a.active = leaseFresh
	d, err := o.kube.AppsV1().Deployments(ns).Get(ctx, deployment, metav1.GetOptions{})
	switch {
	case err == nil:
		a.deployment = true
		a.evidence = append(a.evidence, fmt.Sprintf("Deployment %s/%s %d/%d ready", ns, deployment, d.Status.ReadyReplicas, d.Status.Replicas))
		if !leaseFound && d.Status.ReadyReplicas > 0 {
			a.active = true // no leader election: every replica acts
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if !queueController(append(append([]string{}, c.Command...), c.Args...)) {
				a.commands = false
				a.evidence = append(a.evidence, "its --controllers leave out the queue controller")
			}
		}
	case apierrors.IsNotFound(err):
	case apierrors.IsForbidden(err):
		// The Lease alone decides.
	default:
		a.err = err
	}
	if len(a.evidence) == 0 {
		a.evidence = append(a.evidence, fmt.Sprintf("no Lease %s/%s, no Deployment %s/%s", ns, lease, ns, deployment))
	}
	return a
}

// flagValues returns the comma-separated values of every --name=v or
// --name v in args.
func flagValues(args []string, name string) ([]string, bool) {
	var out []string
	found := false
	for i, a := range args {
		var v string
		switch {
		case strings.HasPrefix(a, "--"+name+"="):
			v = strings.TrimPrefix(a, "--"+name+"=")
		case a == "--"+name && i+1 < len(args):
			v = args[i+1]
		default:
			continue
		}
		found = true
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out, found
}

// serveRunsQueue: serve's --controllers lists the controllers it runs;
// without it, it runs them all.
func serveRunsQueue(args []string) bool {
	v, ok := flagValues(args, "controllers")
	if !ok || len(v) == 0 {
		return true
	}
	for _, c := range v {
		if c == "queue" {
			return true
		}
	}
	return false
}

// volcanoRunsQueue reads Volcano's --controllers as its controller
// manager does: '*' or nothing is every controller; "name" or "+name"
// turns one on, "-name" off; a list without '*' runs only what it names.
func volcanoRunsQueue(args []string) bool {
	v, ok := flagValues(args, "controllers")
	if !ok || len(v) == 0 {
		return true
	}
	star := false
	for _, c := range v {
		switch c {
		case volcanoQueueControl, "+" + volcanoQueueControl:
			return true
		case "-" + volcanoQueueControl:
			return false
		case "*":
			star = true
		}
	}
	return star
}

// checkCommands says who acts on Commands and whether Commands wait longer
// than they should.
func (o *Options) checkCommands(ctx context.Context) {
	ns := o.ControllersNamespace
	serve := o.detect(ctx, "serve", leases.Serve, manifests.ServeDeployment, serveRunsQueue)
	volcano := o.detect(ctx, "Volcano's controllers", leases.VolcanoControllers, VolcanoDeployment, volcanoRunsQueue)
	switch {
	case serve.err != nil || volcano.err != nil:
		err := serve.err
		if err == nil {
			err = volcano.err
		}
		o.cannot("controllers", "who acts on Commands (Leases and Deployments in "+ns+")", err)
	case serve.acts() && volcano.acts():
		stop := fmt.Sprintf("stop the 'kubectl vc serve' process that holds Lease %s/%s (%s)", ns, leases.Serve, serve.holder)
		if serve.deployment {
			stop = fmt.Sprintf("'kubectl -n %s scale deployment %s --replicas=0'", ns, manifests.ServeDeployment)
		}
		o.add("controllers", Fail, fmt.Sprintf("both %s and %s act on Commands and queues: two queue controllers race on every Command and queue status", serve, volcano),
			fmt.Sprintf("keep one: %s, or leave queue-controller out of Volcano's --controllers", stop))
	case serve.acts():
		o.add("controllers", OK, fmt.Sprintf("%s acts on Commands; Volcano's controllers do not (%s)", serve, strings.Join(volcano.evidence, "; ")), "")
	case volcano.acts():
		o.add("controllers", OK, fmt.Sprintf("%s act on Commands; serve does not (%s)", volcano, strings.Join(serve.evidence, "; ")), "")
	default:
		o.add("controllers", Warn, fmt.Sprintf("nobody acts on Commands: neither serve (%s) nor Volcano's controllers (%s); queue open and close will not take effect (a serve run without --leader-elect leaves no Lease to see)",
			strings.Join(serve.evidence, "; "), strings.Join(volcano.evidence, "; ")),
			o.startServeHint(ctx))
	}

	var all []busv1alpha1.Command
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return o.vc.BusV1alpha1().Commands(metav1.NamespaceAll).List(ctx, opts)
	})
	err := p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		all = append(all, *obj.(*busv1alpha1.Command))
		return nil
	})
	if err != nil {
		o.cannot("commands", "Commands", err)
		return
	}
	sort.Slice(all, func(i, j int) bool { return all[i].CreationTimestamp.Before(&all[j].CreationTimestamp) })
	var stuckQueue, stuckOther []string
	var stuckQueueCmds, stuckOtherCmds []busv1alpha1.Command
	for _, c := range all {
		waited := o.now().Sub(c.CreationTimestamp.Time)
		if waited <= o.StuckAfter {
			continue
		}
		target := "no target"
		kind := ""
		if c.TargetObject != nil {
			kind = c.TargetObject.Kind
			target = strings.ToLower(kind) + "/" + c.TargetObject.Name
		}
		s := fmt.Sprintf("%s/%s (%s %s, %s)", c.Namespace, c.Name, c.Action, target, duration.HumanDuration(waited))
		if kind == "Queue" {
			stuckQueue = append(stuckQueue, s)
			stuckQueueCmds = append(stuckQueueCmds, c)
		} else {
			stuckOther = append(stuckOther, s)
			stuckOtherCmds = append(stuckOtherCmds, c)
		}
	}
	if len(stuckQueue) == 0 && len(stuckOther) == 0 {
		o.add("commands", OK, fmt.Sprintf("no Command has waited longer than %s (%d pending)", o.StuckAfter, len(all)), "")
		return
	}
	if len(stuckQueue) > 0 {
		why := "see why each waits: 'kubectl vc command list -A -o wide'"
		fix := "start a controller that applies them (see the controllers line); " + why
		switch {
		case serve.acts() && serve.deployment:
			fix = fmt.Sprintf("serve holds its Lease but has not applied them: %s, and serve's log: 'kubectl -n %s logs deployment/%s'", why, ns, manifests.ServeDeployment)
		case serve.acts():
			fix = fmt.Sprintf("serve (%s) holds its Lease but has not applied them: %s, and that process's log", serve.holder, why)
		case volcano.acts() && volcano.deployment:
			fix = fmt.Sprintf("Volcano's controllers run but have not applied them: %s, and their log: 'kubectl -n %s logs deployment/%s'", why, ns, VolcanoDeployment)
		}
		fix += "; delete those that should not be applied: " + deleteHint(stuckQueueCmds)
		o.add("commands", Fail, fmt.Sprintf("%d queue Command(s) waiting longer than %s: %s", len(stuckQueue), o.StuckAfter, some(stuckQueue, 3)), fix, stuckQueue...)
	}
	if len(stuckOther) > 0 {
		fix := "Job Commands are applied by Volcano's job controller (serve has none): install Volcano, or delete them: " + deleteHint(stuckOtherCmds)
		if volcano.active && volcano.deployment {
			fix = fmt.Sprintf("Volcano's controllers run but have not applied them: see their log ('kubectl -n %s logs deployment/%s'), or delete them: %s", ns, VolcanoDeployment, deleteHint(stuckOtherCmds))
		}
		o.add("commands", Fail, fmt.Sprintf("%d other Command(s) waiting longer than %s: %s", len(stuckOther), o.StuckAfter, some(stuckOther, 3)), fix, stuckOther...)
	}
}

// deleteHint is the command line (one per namespace, joined by "; ") that
// deletes exactly these Commands: 'kubectl vc command delete -n NS A B'.
func deleteHint(cmds []busv1alpha1.Command) string {
	byNS := map[string][]string{}
	var namespaces []string
	for _, c := range cmds {
		if _, ok := byNS[c.Namespace]; !ok {
			namespaces = append(namespaces, c.Namespace)
		}
		byNS[c.Namespace] = append(byNS[c.Namespace], c.Name)
	}
	sort.Strings(namespaces)
	var lines []string
	for _, ns := range namespaces {
		lines = append(lines, fmt.Sprintf("'kubectl vc command delete -n %s %s'", ns, strings.Join(byNS[ns], " ")))
	}
	return strings.Join(lines, "; ")
}

// startServeHint says how to get a queue controller that doctor can see, as
// commands that run as printed: serve with leader election (its Lease is
// what shows it runs; its namespace must exist), as the quick start runs it;
// or serve in the cluster; or Volcano.
func (o *Options) startServeHint(ctx context.Context) string {
	ns := o.ControllersNamespace
	serve := "kubectl vc serve --leader-elect"
	if ns != keys.VolcanoNamespace {
		serve += " --leader-elect-resource-namespace=" + ns
	}
	run := fmt.Sprintf("'%s'", serve)
	if _, err := o.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		run = fmt.Sprintf("'kubectl create namespace %s' then '%s'", ns, serve)
	}
	return fmt.Sprintf("run serve with leader election, as the quick start does: %s; or in the cluster: 'kubectl vc install --serve'; or install Volcano", run)
}
