package nodeset

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// TestOperatorExamples: every NodeSet of Slinky's own examples that the
// chart's default (TestSlinkyChartNodeSet) does not already cover — the
// vendor snippets and the documented options, each rendered by hand into
// testdata/examples — is taken over whole: SpecSupported=True with nothing
// listed, and its pod made under the operator's name and hostname.
func TestOperatorExamples(t *testing.T) {
	files, err := filepath.Glob("testdata/examples/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no examples in testdata/examples")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			ns := readNodeSet(t, file)
			// The chart names the NodeSet "<release>-worker-<key>" and its
			// hosts "<key>-<ordinal>": the Slurm nodes the test starts are
			// named after the key.
			key := strings.TrimPrefix(ns.Name, "slurm-worker-")
			e := start(t, key, 1)
			e.create(ns)
			e.Eventually("pod", func() (bool, string) { return len(e.Pods()) == 1, names(e.Pods()) })
			pod := e.Pods()[ns.Name+"-0"]
			if pod == nil || pod.Spec.Hostname != key+"-0" {
				t.Fatalf("pods %s: want %s-0 with hostname %s-0", names(e.Pods()), ns.Name, key)
			}
			e.Eventually("spec supported", func() (bool, string) {
				c := e.condition(ns.Name, "SpecSupported")
				return c != nil && c.Status == metav1.ConditionTrue && c.Reason == "Supported", fmt.Sprintf("%+v", c)
			})
		})
	}
}

// readNodeSet is the NodeSet a testdata file holds, every field known.
func readNodeSet(t *testing.T, file string) *slinkyv1beta1.NodeSet {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var ns slinkyv1beta1.NodeSet
	if err := yaml.UnmarshalStrict(data, &ns); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &ns
}

// create creates ns in the test's namespace.
func (e *env) create(ns *slinkyv1beta1.NodeSet) {
	e.T.Helper()
	ns.Namespace = e.NS
	if _, err := e.VC.SlinkyV1beta1().NodeSets(e.NS).Create(e.Ctx, ns, metav1.CreateOptions{}); err != nil {
		e.T.Fatal(err)
	}
}
