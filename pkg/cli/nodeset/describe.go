package nodeset

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubectl/pkg/util/templates"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// DescribeOptions holds the input of 'nodeset describe'.
type DescribeOptions struct {
	genericiooptions.IOStreams
	Factory util.Factory

	Name  string
	Slurm slurmFlags

	namespace string
	config    *rest.Config
	vc        versioned.Interface
	kc        kubernetes.Interface
}

func newDescribeCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DescribeOptions{IOStreams: streams, Factory: f, Slurm: slurmFlags{Conf: os.Getenv("SLURM_CONF")}}
	cmd := &cobra.Command{
		Use:   "describe NAME",
		Short: "Show a NodeSet, its pods and their Slurm nodes",
		Long: templates.LongDesc(`
			Show a NodeSet's spec and status, then one line per pod: ordinal, revision,
			Kubernetes state, cordon and drain deadline, and the Slurm node state and
			reason. The Slurm states are read live: from the NodeSet's slurmrestd as
			Slinky runs it (its Controller, RestApi and JWT key Secret), through the API
			server's service proxy, so from outside the cluster too; or from the
			slurmrestd --slurm-rest-url names; or with sinfo when a slurm.conf is given
			(--slurm-conf, default $SLURM_CONF). When none can be read, a warning says
			why and that column shows "-".`),
		Example: templates.Examples(`
			# Live Slurm states from the NodeSet's slurmrestd (Slinky's Controller and RestApi)
			kubectl vc nodeset describe compute

			# From a slurmrestd of your own, with a token 'scontrol token' printed
			kubectl vc nodeset describe compute --slurm-rest-url http://slurm.example:6820 --slurm-token-file ~/.slurm-token

			# With sinfo, on a Slurm login node
			kubectl vc nodeset describe compute --slurm-conf /etc/slurm/slurm.conf`),
		Args:              util.NameArgs("NodeSet", 1, 1, "nodeset describe compute"),
		ValidArgsFunction: Kind.NameArg(f),
		RunE:              util.RunE(o),
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Slurm.Conf, "slurm-conf", o.Slurm.Conf, "slurm.conf of the cluster, to read live Slurm node states with sinfo")
	fl.StringVar(&o.Slurm.RESTURL, "slurm-rest-url", "", "slurmrestd to read live Slurm node states from (instead of the NodeSet's own)")
	fl.StringVar(&o.Slurm.JWTKeyFile, "slurm-jwt-key-file", "", "With --slurm-rest-url: the JWT HS256 key to sign a token with")
	fl.StringVar(&o.Slurm.TokenFile, "slurm-token-file", "", "With --slurm-rest-url: a file holding a token")
	return cmd
}

// Complete records the name and resolves the namespace and the clients.
func (o *DescribeOptions) Complete(args []string) error {
	o.Name = args[0]
	var err error
	if o.namespace, err = namespace(o.Factory); err != nil {
		return err
	}
	if o.vc, o.kc, err = util.Clients(o.Factory); err != nil {
		return err
	}
	o.config, err = o.Factory.ToRESTConfig()
	return err
}

// Validate checks the name and the Slurm flags.
func (o *DescribeOptions) Validate() error {
	if err := validateName("NodeSet", o.Name); err != nil {
		return err
	}
	return o.Slurm.validate()
}

// Run prints the description.
func (o *DescribeOptions) Run(ctx context.Context) error {
	ns, err := o.vc.SlinkyV1beta1().NodeSets(o.namespace).Get(ctx, o.Name, metav1.GetOptions{})
	if err != nil {
		return util.InNamespace(err, o.namespace)
	}
	pods, err := nodeSetPods(ctx, o.kc, ns)
	if err != nil {
		return err
	}
	// Live Slurm states: a failure is a warning, the rest is still shown.
	var sl slurm.Client
	var slurmHow string
	if r, err := o.Slurm.connect(ctx, o.config, o.kc, o.vc, ns); err != nil {
		fmt.Fprintf(o.ErrOut, "warning: cannot read Slurm node states: %s\n", util.Message(err))
	} else if r != nil {
		if err := r.client.Refresh(ctx); err != nil {
			fmt.Fprintf(o.ErrOut, "warning: cannot read Slurm node states %s: %s\n", r.how, util.Message(err))
		} else {
			sl, slurmHow = r.client, r.how
		}
	}

	w := tabwriter.NewWriter(o.Out, 0, 8, 2, ' ', 0)
	desired := desiredPods(ns)
	st := ns.Status
	fmt.Fprintf(w, "Name:\t%s\n", ns.Name)
	fmt.Fprintf(w, "Namespace:\t%s\n", ns.Namespace)
	fmt.Fprintf(w, "Controller:\t%s\n", vcprinters.OrNone(ns.Spec.ControllerRef.Name))
	fmt.Fprintf(w, "Created:\t%s (%s ago)\n", ns.CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z"), vcprinters.Age(ns.CreationTimestamp))
	fmt.Fprintf(w, "Replicas:\t%d desired | %d current | %d ready | %d available | %d updated\n",
		desired, st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.UpdatedReplicas)
	fmt.Fprintf(w, "Update Strategy:\t%s\n", strategyString(ns))
	fmt.Fprintf(w, "Revision:\t%s\n", vcprinters.OrNone(revisionString(ns)))
	fmt.Fprintf(w, "Slurm Nodes:\t%d idle | %d allocated | %d drain | %d down\n", st.SlurmIdle, st.SlurmAllocated, st.SlurmDrain, st.SlurmDown)
	if slurmHow != "" {
		fmt.Fprintf(w, "Slurm States Read:\t%s\n", slurmHow)
	}
	fmt.Fprintf(w, "Observed Generation:\t%d (generation %d)\n", st.ObservedGeneration, ns.Generation)
	fmt.Fprintf(w, "Pods:\n")
	if len(pods) == 0 {
		fmt.Fprintf(w, "  <none>\n")
	} else {
		sort.Slice(pods, func(i, j int) bool { return ordinal(&pods[i]) < ordinal(&pods[j]) })
		fmt.Fprintf(w, "  NAME\tORDINAL\tREVISION\tSTATUS\tNODE\tCORDONED\tDEADLINE\tSLURM\n")
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
			fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Labels[slinkyv1beta1.LabelPodIndex],
				vcprinters.OrNone(podRevision(ns.Name, p)), podStatus(p), vcprinters.OrNone(p.Spec.NodeName),
				cordoned, vcprinters.OrNone(p.Annotations[slinkyv1beta1.AnnotationPodDeadline]), slurmState)
		}
	}
	vcprinters.WriteEvents(ctx, w, o.kc, ns.Namespace, "NodeSet", ns.Name, ns.UID)
	return w.Flush()
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
