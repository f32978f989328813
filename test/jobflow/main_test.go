// Package jobflow runs 'kubectl vc jobflow', 'jobtemplate' and 'job list
// --flow' as a user runs them (the built binary) against the real local
// API server serving Volcano's own JobFlow and JobTemplate CRDs (found by
// cptest.UpstreamCRDs, as the compatibility tests find them). No jobflow
// controller runs here:
// the tests play Volcano's, as it behaves (a Job <flow>-<step> labelled
// and annotated volcano.sh/createdByJobFlow and createdByJobTemplate,
// controlled by the flow, and the flow's and templates' status written
// through the status subresource).
package jobflow

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/binary"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/namespaces"
	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
)

var env struct {
	cp   *controlplane.ControlPlane
	cli  *binary.CLI
	vc   versioned.Interface
	kube kubernetes.Interface

	once sync.Once
	err  error
}

func TestMain(m *testing.M) {
	cptest.Main(m, cptest.Options{Binary: true, Setup: func(e *cptest.Env) error {
		env.cp = e.CP
		var err error
		if env.cli, err = binary.NewCLI(e); err != nil {
			return err
		}
		env.vc = versioned.NewForConfigOrDie(e.CP.AdminConfig())
		env.kube = kubernetes.NewForConfigOrDie(e.CP.AdminConfig())
		return nil
	}})
}

// flowCRDs installs Volcano's own JobFlow and JobTemplate CRDs once; the
// test is skipped (failed under CI=true) without them, saying why.
func flowCRDs(t *testing.T) {
	t.Helper()
	dir := cptest.UpstreamCRDs(t, "volcano-flow-crds")
	env.once.Do(func() {
		list, err := crds.LoadDir(dir)
		if err != nil {
			env.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		env.err = crds.Apply(ctx, apiextensionsclient.NewForConfigOrDie(env.cp.AdminConfig()), "volcano-installer", list...)
	})
	if env.err != nil {
		t.Fatal(env.err)
	}
}

func vc(t *testing.T, args ...string) binary.Result { t.Helper(); return env.cli.VC(t, args...) }

func mustVC(t *testing.T, args ...string) binary.Result {
	t.Helper()
	return env.cli.MustVC(t, args...)
}

// namespace is a namespace of this run of the test, emptied and deleted
// after it (internal/testenv/namespaces); the first run keeps the plain name,
// the one docs/jobflow.md shows.
func namespace(t *testing.T, name string) string {
	t.Helper()
	return namespaces.PerRun(t, env.kube, env.vc, name)
}

// writeFile writes content to a file of the test and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// templateYAML is a JobTemplate of one busybox task.
func templateYAML(name string) string {
	return `apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata:
  name: ` + name + `
spec:
  schedulerName: volcano
  minAvailable: 1
  queue: default
  tasks:
    - name: main
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: main
              image: busybox:1.36
              command: ["sh", "-c", "echo ` + name + `"]
`
}

// flowYAML is a JobFlow: "step" or "step<-a,b".
func flowYAML(name string, steps ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata:\n  name: " + name + "\nspec:\n  jobRetainPolicy: retain\n  flows:\n")
	for _, s := range steps {
		n, deps, _ := strings.Cut(s, "<-")
		b.WriteString("    - name: " + n + "\n")
		if deps != "" {
			b.WriteString("      dependsOn:\n        targets: [" + deps + "]\n")
		}
	}
	return b.String()
}

// playJob makes the Job Volcano's jobflow controller makes for step of
// flow jf, from its template, with the job controller's phase.
func playJob(t *testing.T, jf *flowv1alpha1.JobFlow, step string, phase batchv1alpha1.JobPhase) *batchv1alpha1.Job {
	t.Helper()
	ctx := context.Background()
	tmpl, err := env.vc.FlowV1alpha1().JobTemplates(jf.Namespace).Get(ctx, step, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{
		flowv1alpha1.CreatedByJobTemplateKey: flowv1alpha1.ObjectString(jf.Namespace, step),
		flowv1alpha1.CreatedByJobFlowKey:     flowv1alpha1.ObjectString(jf.Namespace, jf.Name),
	}
	j := &batchv1alpha1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: flowv1alpha1.JobName(jf.Name, step), Namespace: jf.Namespace, Labels: keys, Annotations: keys,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "flow.volcano.sh/v1alpha1", Kind: "JobFlow", Name: jf.Name, UID: jf.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: tmpl.Spec,
	}
	if j, err = env.vc.BatchV1alpha1().Jobs(jf.Namespace).Create(ctx, j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	j.Status.State.Phase = phase
	j.Status.State.LastTransitionTime = metav1.Now()
	if j, err = env.vc.BatchV1alpha1().Jobs(jf.Namespace).UpdateStatus(ctx, j, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The jobtemplate controller records the job in the template.
	tmpl.Status.JobDependsOnList = append(tmpl.Status.JobDependsOnList, j.Name)
	if _, err := env.vc.FlowV1alpha1().JobTemplates(jf.Namespace).UpdateStatus(ctx, tmpl, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return j
}

// playFlowStatus writes the flow's status as the jobflow controller does
// from its jobs.
func playFlowStatus(t *testing.T, ns, name string, phase flowv1alpha1.Phase, jobs ...*batchv1alpha1.Job) *flowv1alpha1.JobFlow {
	t.Helper()
	ctx := context.Background()
	jf, err := env.vc.FlowV1alpha1().JobFlows(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jf.Status = flowv1alpha1.JobFlowStatus{State: flowv1alpha1.State{Phase: phase}, Conditions: map[string]flowv1alpha1.Condition{}}
	for _, j := range jobs {
		p := j.Status.State.Phase
		switch p {
		case batchv1alpha1.JobCompleted:
			jf.Status.CompletedJobs = append(jf.Status.CompletedJobs, j.Name)
		case batchv1alpha1.JobRunning:
			jf.Status.RunningJobs = append(jf.Status.RunningJobs, j.Name)
		case batchv1alpha1.JobFailed:
			jf.Status.FailedJobs = append(jf.Status.FailedJobs, j.Name)
		}
		jf.Status.JobStatusList = append(jf.Status.JobStatusList, flowv1alpha1.JobStatus{Name: j.Name, State: p, StartTimestamp: j.CreationTimestamp,
			RunningHistories: []flowv1alpha1.JobRunningHistory{{StartTimestamp: j.CreationTimestamp, State: p}}})
		jf.Status.Conditions[j.Name] = flowv1alpha1.Condition{Phase: p, CreateTimestamp: j.CreationTimestamp}
	}
	if jf, err = env.vc.FlowV1alpha1().JobFlows(ns).UpdateStatus(ctx, jf, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return jf
}
