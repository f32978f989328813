package doctor

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/tools/pager"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
)

// How a controller manager that acts on Commands shows itself: its
// leader-election Lease (held and renewed while it runs) and its
// Deployment.
const (
	ServeLease          = "kubectl-vc-serve"
	ServeDeployment     = "kubectl-vc-serve"
	VolcanoLease        = "vc-controller-manager"
	VolcanoDeployment   = "volcano-controllers"
	volcanoQueueControl = "queue-controller"
	// leaseGrace allows for clock skew between this machine and the
	// holder when judging whether a Lease is still renewed.
	leaseGrace = 30 * time.Second
)

// actor is what is known of one controller manager.
type actor struct {
	name string
	// active: it runs (a Lease renewed within its duration, or a ready
	// Deployment without a Lease).
	active bool
	// commands: it runs the controller that applies queue Commands.
	commands bool
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
		holder := ""
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		var renewed time.Time
		if l.Spec.RenewTime != nil {
			renewed = l.Spec.RenewTime.Time
		}
		d := 15 * time.Second
		if l.Spec.LeaseDurationSeconds != nil {
			d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
		}
		since := o.now().Sub(renewed)
		leaseFresh = holder != "" && !renewed.IsZero() && since <= d+leaseGrace
		if leaseFresh {
			a.evidence = append(a.evidence, fmt.Sprintf("Lease %s/%s held by %s, renewed %s ago", ns, lease, holder, duration.HumanDuration(since)))
		} else if renewed.IsZero() || holder == "" {
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
	serve := o.detect(ctx, "serve", ServeLease, ServeDeployment, serveRunsQueue)
	volcano := o.detect(ctx, "Volcano's controllers", VolcanoLease, VolcanoDeployment, volcanoRunsQueue)
	switch {
	case serve.err != nil || volcano.err != nil:
		err := serve.err
		if err == nil {
			err = volcano.err
		}
		o.cannot("controllers", "who acts on Commands (Leases and Deployments in "+ns+")", err)
	case serve.acts() && volcano.acts():
		o.add("controllers", Fail, fmt.Sprintf("both %s and %s act on Commands and queues: two queue controllers race on every Command and queue status", serve, volcano),
			fmt.Sprintf("keep one: 'kubectl -n %s scale deployment %s --replicas=0' (or stop 'kubectl vc serve'), or leave queue-controller out of Volcano's --controllers", ns, ServeDeployment))
	case serve.acts():
		o.add("controllers", OK, fmt.Sprintf("%s acts on Commands; Volcano's controllers do not (%s)", serve, strings.Join(volcano.evidence, "; ")), "")
	case volcano.acts():
		o.add("controllers", OK, fmt.Sprintf("%s act on Commands; serve does not (%s)", volcano, strings.Join(serve.evidence, "; ")), "")
	default:
		o.add("controllers", Warn, fmt.Sprintf("nobody acts on Commands: neither serve (%s) nor Volcano's controllers (%s); queue open and close will not take effect",
			strings.Join(serve.evidence, "; "), strings.Join(volcano.evidence, "; ")),
			"'kubectl vc install --serve', or 'kubectl vc serve --leader-elect', or install Volcano (serve run without --leader-elect leaves no Lease to see)")
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
		} else {
			stuckOther = append(stuckOther, s)
		}
	}
	if len(stuckQueue) == 0 && len(stuckOther) == 0 {
		o.add("commands", OK, fmt.Sprintf("no Command has waited longer than %s (%d pending)", o.StuckAfter, len(all)), "")
		return
	}
	if len(stuckQueue) > 0 {
		fix := "start a controller that applies them (see the controllers line), then 'kubectl vc command list -A'"
		switch {
		case serve.acts():
			fix = fmt.Sprintf("serve holds its Lease but does not apply them: see its log ('kubectl -n %s logs deployment/%s') and its Warning events", ns, ServeDeployment)
		case volcano.acts():
			fix = fmt.Sprintf("Volcano's controllers run but do not apply them: see their log ('kubectl -n %s logs deployment/%s')", ns, VolcanoDeployment)
		}
		o.add("commands", Fail, fmt.Sprintf("%d queue Command(s) waiting longer than %s: %s", len(stuckQueue), o.StuckAfter, some(stuckQueue, 3)), fix, stuckQueue...)
	}
	if len(stuckOther) > 0 {
		fix := "Job Commands are applied by Volcano's job controller (serve has none): install Volcano, or delete them"
		if volcano.active {
			fix = fmt.Sprintf("Volcano's controllers run but do not apply them: see their log ('kubectl -n %s logs deployment/%s')", ns, VolcanoDeployment)
		}
		o.add("commands", Fail, fmt.Sprintf("%d other Command(s) waiting longer than %s: %s", len(stuckOther), o.StuckAfter, some(stuckOther, 3)), fix, stuckOther...)
	}
}
