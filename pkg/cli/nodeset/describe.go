package nodeset

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
	"github.com/spf13/pflag"
)

// describeHelp is the help of 'nodeset describe'.
var describeHelp = kind.Help{
	Short: "Show a NodeSet, its pods and their Slurm nodes",
	Long: `
			Show a NodeSet's spec and status, then one line per pod: ordinal, revision,
			Kubernetes state, cordon and drain deadline, and the Slurm node state and
			reason. The Slurm states are read live: from the NodeSet's slurmrestd as
			Slinky runs it (its Controller, RestApi and JWT key Secret), through the API
			server's service proxy, so from outside the cluster too; or from the
			slurmrestd --slurm-rest-url names; or with sinfo when a slurm.conf is given
			(--slurm-conf, default $SLURM_CONF). When none can be read, a warning says
			why and that column shows "-".`,
	Example: `
			# Live Slurm states from the NodeSet's slurmrestd (Slinky's Controller and RestApi)
			kubectl vc nodeset describe compute

			# From a slurmrestd of your own, with a token 'scontrol token' printed
			kubectl vc nodeset describe compute --slurm-rest-url http://slurm.example:6820 --slurm-token-file ~/.slurm-token

			# With sinfo, on a Slurm login node
			kubectl vc nodeset describe compute --slurm-conf /etc/slurm/slurm.conf`,
}

// describeHeader is a NodeSet's header: its Slurm controller where other
// kinds show labels and annotations, its creation in UTC.
func describeHeader(d *vcprinters.Describer, ns *slinkyv1beta1.NodeSet) {
	d.Line(0, "Name", ns.Name)
	d.Line(0, "Namespace", ns.Namespace)
	d.Line(0, "Controller", vcprinters.OrNone(ns.Spec.ControllerRef.Name))
	d.Line(0, "Created", ns.CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z")+" ("+vcprinters.Age(ns.CreationTimestamp)+" ago)")
}

// describePage is the body of 'nodeset describe': the NodeSet's status and
// one line per pod with its Slurm node's state, read live as the --slurm-*
// flags say (kind.Page).
type describePage struct {
	Slurm slurmFlags
}

func newDescribePage() kind.Page[*slinkyv1beta1.NodeSet] {
	return &describePage{Slurm: slurmFlags{Conf: os.Getenv("SLURM_CONF")}}
}

// AddFlags adds the --slurm-* flags.
func (p *describePage) AddFlags(fl *pflag.FlagSet) {
	fl.StringVar(&p.Slurm.Conf, "slurm-conf", p.Slurm.Conf, "slurm.conf of the cluster, to read live Slurm node states with sinfo")
	fl.StringVar(&p.Slurm.RESTURL, "slurm-rest-url", "", "slurmrestd to read live Slurm node states from (instead of the NodeSet's own)")
	fl.StringVar(&p.Slurm.JWTKeyFile, "slurm-jwt-key-file", "", "With --slurm-rest-url: the JWT HS256 key to sign a token with")
	fl.StringVar(&p.Slurm.TokenFile, "slurm-token-file", "", "With --slurm-rest-url: a file holding a token")
}

// Validate checks the Slurm flags.
func (p *describePage) Validate() error { return p.Slurm.validate() }

// Describe writes the NodeSet's status and its pods; a Slurm that cannot
// be read is a warning, the rest is still shown.
func (p *describePage) Describe(ctx context.Context, o *vcprinters.DescribeOptions, d *vcprinters.Describer, ns *slinkyv1beta1.NodeSet) error {
	pods, err := nodeSetPods(ctx, o.Kube, ns)
	if err != nil {
		return err
	}
	config, err := o.Factory.ToRESTConfig()
	if err != nil {
		return err
	}
	var sl slurm.Client
	var slurmHow string
	if r, err := p.Slurm.connect(ctx, config, o.Kube, o.Client, ns); err != nil {
		fmt.Fprintf(o.ErrOut, "warning: cannot read Slurm node states: %s\n", util.Message(err))
	} else if r != nil {
		if err := r.client.Refresh(ctx); err != nil {
			fmt.Fprintf(o.ErrOut, "warning: cannot read Slurm node states %s: %s\n", r.how, util.Message(err))
		} else {
			sl, slurmHow = r.client, r.how
		}
	}

	st := ns.Status
	d.Line(0, "Replicas", fmt.Sprintf("%d desired | %d current | %d ready | %d available | %d updated",
		desiredPods(ns), st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.UpdatedReplicas))
	d.Line(0, "Update Strategy", strategyString(ns))
	d.Line(0, "Revision", vcprinters.OrNone(revisionString(ns)))
	d.Line(0, "Slurm Nodes", fmt.Sprintf("%d idle | %d allocated | %d drain | %d down", st.SlurmIdle, st.SlurmAllocated, st.SlurmDrain, st.SlurmDown))
	if slurmHow != "" {
		d.Line(0, "Slurm States Read", slurmHow)
	}
	d.Line(0, "Observed Generation", fmt.Sprintf("%d (generation %d)", st.ObservedGeneration, ns.Generation))
	d.Section(0, "Pods")
	if len(pods) == 0 {
		d.Write(1, "<none>\n")
		return nil
	}
	sort.Slice(pods, func(i, j int) bool { return ordinal(&pods[i]) < ordinal(&pods[j]) })
	d.Write(1, "NAME\tORDINAL\tREVISION\tSTATUS\tNODE\tCORDONED\tDEADLINE\tSLURM\n")
	for i := range pods {
		p := &pods[i]
		cordoned := "no"
		if _, ok := p.Annotations[slinkyv1beta1.AnnotationPodCordon]; ok {
			cordoned = "yes"
		}
		slurmState := "-"
		if sl != nil {
			if s, ok := sl.Node(slinkyv1beta1.SlurmNodeName(p)); ok {
				slurmState = s.String()
			} else {
				slurmState = "<not in slurm>"
			}
		}
		d.Write(1, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Labels[slinkyv1beta1.LabelPodIndex],
			vcprinters.OrNone(podRevision(ns.Name, p)), podStatus(p), vcprinters.OrNone(p.Spec.NodeName),
			cordoned, vcprinters.OrNone(p.Annotations[slinkyv1beta1.AnnotationPodDeadline]), slurmState)
	}
	return nil
}

func ordinal(p *corev1.Pod) int {
	n, err := strconv.Atoi(p.Labels[slinkyv1beta1.LabelPodIndex])
	if err != nil {
		return 1 << 30
	}
	return n
}

func podStatus(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "Terminating"
	}
	phase := string(p.Status.Phase)
	if phase == "" {
		phase = "Pending"
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return phase + ",Ready"
		}
	}
	return phase
}

func strategyString(ns *slinkyv1beta1.NodeSet) string {
	t := ns.Spec.UpdateStrategy.Type
	if t == "" {
		t = slinkyv1beta1.RollingUpdateNodeSetStrategyType
	}
	s := string(t)
	if t == slinkyv1beta1.RollingUpdateNodeSetStrategyType {
		mu := "25%"
		if ru := ns.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
			mu = ru.MaxUnavailable.String()
		}
		s += " (maxUnavailable " + mu + ")"
	}
	if su := ns.Spec.UpdateStrategy.ScheduledUpdate; t == slinkyv1beta1.ScheduledUpdateNodeSetStrategyType && su != nil && su.StartTime != nil {
		d := su.Duration
		if d == "" {
			d = "30m" // the schema's default
		}
		s += fmt.Sprintf(" (from %s for %s, Slurm reservation %s%s)", su.StartTime.UTC().Format(time.RFC3339), d,
			slinkyv1beta1.ReservationPrefix, ns.Name)
	}
	return s
}

// podRevision names the revision the pod was made from; empty if unknown.
func podRevision(nodeSet string, p *corev1.Pod) string {
	if h := slinkyv1beta1.PodRevisionHash(nodeSet, p.Labels); h != "" {
		return slinkyv1beta1.RevisionName(nodeSet, h)
	}
	return ""
}

func revisionString(ns *slinkyv1beta1.NodeSet) string {
	if ns.Status.NodeSetHash == "" {
		return ""
	}
	s := ns.Name + "-" + ns.Status.NodeSetHash
	if c := ns.Status.CollisionCount; c != nil && *c > 0 {
		s += fmt.Sprintf(" (%d hash collisions)", *c)
	}
	return s
}
