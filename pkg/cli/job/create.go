package job

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/jobspec"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/manifest"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// DefaultTaskName is the name of the one task of a job made from flags:
// the name Volcano gives an unnamed first task, as vcctl's 'job run' makes.
const DefaultTaskName = "default0"

// DefaultScheduler is the scheduler of a job made from flags.
const DefaultScheduler = keys.VolcanoScheduler

// specFlags are the flags that build a job, which -f cannot be combined with.
var specFlags = []string{"image", "replicas", "min", "queue", "requests", "limits", "scheduler-name", "command"}

// CreateOptions holds the input of 'job create'.
type CreateOptions struct {
	Write write.Options

	Name          string
	Filename      string
	Image         string
	Replicas      int32
	Min           int32
	Queue         string
	Requests      string
	Limits        string
	SchedulerName string
	// Args are the words after '--': the container's args, or its command
	// with --command (as 'kubectl run' takes them).
	Args    []string
	Command bool

	specFlagsSet []string
	job          *batchv1alpha1.Job
}

func newCreateCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &CreateOptions{Write: write.NewOptions(f, streams, "created")}
	cmd := &cobra.Command{
		Use:   "create NAME --image IMAGE [--replicas N] [--min N] [--queue Q] [--requests R] [--limits L] [--command] [-- ARG...] | create -f FILE",
		Short: "Create a job from flags or from a file",
		Long: templates.LongDesc(`
			Create a Volcano Job, what 'vcctl job run' does, with kubectl's conventions.

			From flags, the job has one task (named default0, as Volcano names an unnamed
			task) of --replicas pods running --image, of which --min must be able to run
			together (by default all of them). Words after '--' are the container's args,
			or with --command its command, as 'kubectl run' takes them.
			--requests and --limits are NAME=QUANTITY pairs for each pod, a request never
			above its limit. From a file (-f FILE, or -f - for standard input), the file
			holds one batch.volcano.sh/v1alpha1 Job in YAML or JSON; an unknown field is an
			error.

			The queue must exist and be Open (Volcano's admission refuses a job in any other
			queue), and cannot be root. Nothing is created when any of this fails.
			Volcano's job controller then makes the job's PodGroup and pods; kubectl vc serve
			has no job controller.`),
		Example: templates.Examples(`
			# Four pods of busybox in queue research, at least two running together
			kubectl vc job create train --image busybox --replicas 4 --min 2 --queue research \
			  --requests cpu=1,memory=1Gi --limits cpu=2,memory=1Gi --command -- sleep 3600

			# Create a job from a file
			kubectl vc job create -f train.yaml

			# Print the job without creating it
			kubectl vc job create train --image busybox --dry-run=client -o yaml`),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.specFlagsSet = nil
			for _, name := range specFlags {
				if cmd.Flags().Changed(name) {
					o.specFlagsSet = append(o.specFlagsSet, name)
				}
			}
			if err := o.Complete(args, cmd.ArgsLenAtDash()); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.Write.AddFlags(cmd)
	cmd.Flags().StringVarP(&o.Filename, "filename", "f", "", "File holding the job (YAML or JSON); - reads standard input")
	cmd.Flags().StringVar(&o.Image, "image", "", "Image of the task's container (required without -f)")
	cmd.Flags().Int32Var(&o.Replicas, "replicas", 1, "Number of pods of the task")
	cmd.Flags().Int32Var(&o.Min, "min", 0, "How many pods must be able to run together (minAvailable); 0 means all of them")
	cmd.Flags().StringVar(&o.Queue, "queue", keys.DefaultQueue, "Queue the job is scheduled from")
	cmd.Flags().StringVar(&o.Requests, "requests", "", "Resource requests of each pod, e.g. cpu=1,memory=1Gi")
	cmd.Flags().StringVar(&o.Limits, "limits", "", "Resource limits of each pod, e.g. cpu=2,memory=1Gi")
	cmd.Flags().StringVar(&o.SchedulerName, "scheduler-name", DefaultScheduler, "Scheduler of the job's pods")
	cmd.Flags().BoolVar(&o.Command, "command", false, "Use the words after '--' as the container's command instead of its args (as 'kubectl run --command')")
	_ = cmd.RegisterFlagCompletionFunc("queue", completion.Queues.Flag(f))
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	return cmd
}

// Complete splits the arguments (NAME before '--', the command after it)
// and resolves the namespace, dry-run mode, printer and client.
func (o *CreateOptions) Complete(args []string, argsLenAtDash int) error {
	names := args
	if argsLenAtDash >= 0 {
		names, o.Args = args[:argsLenAtDash], args[argsLenAtDash:]
	}
	if len(names) > 1 {
		return util.UsageErrorf("give one job name, got %d (%s); the container's args go after '--'", len(names), strings.Join(names, " "))
	}
	if len(names) == 1 {
		o.Name = names[0]
	}
	return o.Write.Complete()
}

// Validate checks every input and builds the job, before any request.
func (o *CreateOptions) Validate() error {
	var err error
	if o.Filename != "" {
		if o.Name != "" {
			return util.UsageErrorf("give a job NAME or -f FILE, not both (the file names the job)")
		}
		if len(o.specFlagsSet) > 0 {
			return util.UsageErrorf("--%s cannot be combined with -f: the file describes the whole job", o.specFlagsSet[0])
		}
		if len(o.Args) > 0 {
			return util.UsageErrorf("arguments after '--' cannot be combined with -f: the file describes the whole job")
		}
		o.job, err = o.readFile()
	} else {
		o.job, err = o.fromFlags()
	}
	if err != nil {
		return err
	}
	return validateJob(o.job)
}

// fromFlags builds a one-task job from the flags.
func (o *CreateOptions) fromFlags() (*batchv1alpha1.Job, error) {
	if o.Name == "" {
		return nil, util.UsageErrorf("name the job to create, e.g. 'kubectl vc job create train --image busybox', or give -f FILE")
	}
	if errs := validation.IsDNS1123Label(o.Name); len(errs) > 0 {
		return nil, util.UsageErrorf("invalid job name %q: %s", o.Name, errs[0])
	}
	if strings.TrimSpace(o.Image) == "" {
		return nil, util.UsageErrorf("--image is required, e.g. --image busybox")
	}
	if o.Replicas < 1 {
		return nil, util.UsageErrorf("invalid --replicas %d: must be 1 or more", o.Replicas)
	}
	if o.Min < 0 || o.Min > o.Replicas {
		return nil, util.UsageErrorf("invalid --min %d: must be between 0 (all pods) and --replicas %d", o.Min, o.Replicas)
	}
	if err := util.ValidateQueueFlag(o.Queue); err != nil {
		return nil, err
	}
	if o.SchedulerName == "" || len(o.SchedulerName) > 63 {
		return nil, util.UsageErrorf("invalid --scheduler-name %q: give a name of 1 to 63 characters", o.SchedulerName)
	}
	requests, err := rules.ParseResourceList("requests", o.Requests)
	if err != nil {
		return nil, util.UsageErrorf("%s", err)
	}
	limits, err := rules.ParseResourceList("limits", o.Limits)
	if err != nil {
		return nil, util.UsageErrorf("%s", err)
	}
	for name, r := range requests {
		if l, ok := limits[name]; ok && r.Cmp(l) > 0 {
			return nil, util.UsageErrorf("--requests %s=%s exceeds --limits %s=%s: a request cannot be above its limit", name, r.String(), name, l.String())
		}
	}
	if o.Command && len(o.Args) == 0 {
		return nil, util.UsageErrorf("--command needs the command after '--', e.g. --command -- sleep 3600")
	}
	var command, cargs []string
	if o.Command {
		command = o.Args
	} else {
		cargs = o.Args
	}
	return buildJob(o.Name, o.Write.Namespace, o.Image, command, cargs, o.Replicas, o.Min, o.Queue, o.SchedulerName, requests, limits), nil
}

// buildJob makes the job 'job create NAME --image ...' sends: one task of
// replicas pods, minAvailable min (0: all) for the job and the task.
func buildJob(name, ns, image string, command, args []string, replicas, min int32, queueName, scheduler string, requests, limits corev1.ResourceList) *batchv1alpha1.Job {
	if min == 0 {
		min = replicas
	}
	if len(requests) == 0 {
		requests = nil
	}
	if len(limits) == 0 {
		limits = nil
	}
	return &batchv1alpha1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: batchv1alpha1.JobSpec{
			SchedulerName: scheduler,
			MinAvailable:  min,
			Queue:         queueName,
			Tasks: []batchv1alpha1.TaskSpec{{
				Name:         DefaultTaskName,
				Replicas:     replicas,
				MinAvailable: ptr.To(min),
				Template: corev1.PodTemplateSpec{
					Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever,
						Containers: []corev1.Container{{
							Name:            name,
							Image:           image,
							Command:         command,
							Args:            args,
							ImagePullPolicy: corev1.PullIfNotPresent,
							Resources:       corev1.ResourceRequirements{Requests: requests, Limits: limits},
						}},
					},
				},
			}},
		},
	}
}

// readFile reads the one Job of -f.
func (o *CreateOptions) readFile() (*batchv1alpha1.Job, error) {
	docs, err := manifest.Read(o.Write.In, o.Filename)
	if err != nil {
		return nil, err
	}
	if len(docs) != 1 {
		return nil, util.UsageErrorf("%s holds %d objects: give one Job per file", o.Filename, len(docs))
	}
	j := &batchv1alpha1.Job{}
	if err := manifest.Decode(o.Filename, docs[0], batchv1alpha1.SchemeGroupVersion.WithKind("Job"), j); err != nil {
		return nil, err
	}
	if err := manifest.Prepare(j, "job", o.Filename, o.Write.Namespace, o.Write.NamespaceGiven, validation.IsDNS1123Label); err != nil {
		return nil, err
	}
	j.Status = batchv1alpha1.JobStatus{}
	return j, nil
}

// validateJob applies the rules Volcano's admission applies, so that a job
// it would refuse is refused here before any request: tasks with unique
// DNS-1123 names and sane replica counts, minAvailable within the replicas,
// a queue other than root.
func validateJob(j *batchv1alpha1.Job) error {
	if len(j.Spec.Tasks) == 0 {
		return util.UsageErrorf("job %q has no tasks", j.Name)
	}
	seen := map[string]bool{}
	var total int32
	for i, t := range j.Spec.Tasks {
		name := jobspec.TaskName(t, i)
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			return util.UsageErrorf("invalid task name %q: %s", name, errs[0])
		}
		if seen[name] {
			return util.UsageErrorf("task %q is named twice", name)
		}
		seen[name] = true
		if t.Replicas < 0 {
			return util.UsageErrorf("task %q: replicas %d must not be negative", name, t.Replicas)
		}
		if t.MinAvailable != nil && (*t.MinAvailable < 0 || *t.MinAvailable > t.Replicas) {
			return util.UsageErrorf("task %q: minAvailable %d must be between 0 and its replicas %d", name, *t.MinAvailable, t.Replicas)
		}
		if len(t.Template.Spec.Containers) == 0 {
			return util.UsageErrorf("task %q has no containers", name)
		}
		total += t.Replicas
	}
	if j.Spec.MinAvailable < 0 || j.Spec.MinAvailable > total {
		return util.UsageErrorf("job %q: minAvailable %d must be between 0 and its %d pods", j.Name, j.Spec.MinAvailable, total)
	}
	if queueOf(j) == keys.RootQueue {
		return util.UsageErrorf("a job cannot be submitted to the root queue: pick a leaf queue with --queue")
	}
	if err := util.ValidateQueueFlag(queueOf(j)); err != nil {
		return err
	}
	return nil
}

// Run checks the queue and creates the job (or prints it, for a client
// dry run, which sends nothing).
func (o *CreateOptions) Run(ctx context.Context) error {
	if o.Write.DryClient {
		return o.Write.Print(o.job)
	}
	if err := o.checkQueue(ctx, queueOf(o.job)); err != nil {
		return err
	}
	created, err := o.Write.Client.BatchV1alpha1().Jobs(o.job.Namespace).Create(ctx, o.job, metav1.CreateOptions{DryRun: o.Write.ServerDryRun()})
	if err != nil {
		if apierrors.IsAlreadyExists(err) {
			return util.UsageErrorf("job %q already exists in namespace %q", o.job.Name, o.job.Namespace)
		}
		return Kind.APIError(err)
	}
	return o.Write.Print(created)
}

// checkQueue refuses a queue that is missing or not Open, as Volcano's
// admission would. A user who may not read queues is left to the server.
func (o *CreateOptions) checkQueue(ctx context.Context, name string) error {
	q, err := o.Write.Client.SchedulingV1beta1().Queues().Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return util.UsageErrorf("queue %q not found: create it ('kubectl vc queue create %s') or pick another --queue", name, name)
	case apierrors.IsForbidden(err):
		return nil
	case err != nil:
		return err
	}
	if s := q.Status.State; s != "" && s != schedulingv1beta1.QueueStateOpen {
		return util.UsageErrorf("queue %q is %s: a job can only be created in an Open queue ('kubectl vc queue open %s')", name, s, name)
	}
	// Only a leaf queue takes jobs, as Volcano's job admission has it
	// (and our vc-workload-open-queue policy). A user who may not list
	// queues is left to the server.
	all, err := o.Write.Client.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsForbidden(err):
		return nil
	case err != nil:
		return err
	}
	if children := rules.ChildrenOf(name, all.Items); len(children) > 0 {
		return util.UsageErrorf("queue %q has child queues (%s): a job can only be submitted to a leaf queue (one without child queues): pick one with --queue (see 'kubectl vc queue tree')",
			name, strings.Join(children, ", "))
	}
	return nil
}
