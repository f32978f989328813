package nodeset

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/namespaces"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/nodesets"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// TestNodeSetListWatch: 'nodeset list --watch' prints a row for a NodeSet
// created after the list, and with -o json each NodeSet as it changes.
func TestNodeSetListWatch(t *testing.T) {
	ctx := context.Background()
	vc := versioned.NewForConfigOrDie(cp.AdminConfig())
	ns := namespaces.PerRun(t, kubernetes.NewForConfigOrDie(cp.AdminConfig()), vc, "list-watch-nodesets")
	nodeSets := vc.SlinkyV1beta1().NodeSets(ns)
	if _, err := nodeSets.Create(ctx, nodesets.NodeSet("before"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Run("table", func(t *testing.T) {
		out := vcBin.StartWatch(t, "nodeset", "list", "-n", ns, "-w", "--no-headers")
		if f := out.WaitFor(t, "before"); len(f) < 2 || f[1] != "1" {
			t.Fatalf("listed row: %v", f)
		}
		after := nodesets.NodeSet("after")
		after.Spec.Replicas = ptr.To[int32](3)
		if _, err := nodeSets.Create(ctx, after, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if f := out.WaitFor(t, "after"); len(f) < 2 || f[1] != "3" {
			t.Fatalf("watched row: %v", f)
		}
	})
	t.Run("json", func(t *testing.T) {
		cmd := vcBin.Command(vcBin.Admin, "nodeset", "list", "before", "-n", ns, "-w", "-o", "json")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		type object struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				Replicas int32 `json:"replicas"`
			} `json:"spec"`
			Items []json.RawMessage `json:"items"`
		}
		objects := make(chan object)
		go func() {
			defer close(objects)
			dec := json.NewDecoder(stdout)
			for {
				var o object
				if dec.Decode(&o) != nil {
					return
				}
				objects <- o
			}
		}()
		next := func() object {
			t.Helper()
			select {
			case o, ok := <-objects:
				if !ok {
					t.Fatal("output ended")
				}
				return o
			case <-time.After(time.Minute):
				t.Fatal("no object printed")
			}
			return object{}
		}
		if o := next(); o.Kind != "List" || len(o.Items) != 1 {
			t.Fatalf("first object: %+v", o)
		}
		// The watch starts from the list: a change to another NodeSet is
		// not printed, a change to this one is.
		if _, err := nodeSets.Patch(ctx, "after", "application/merge-patch+json", []byte(`{"spec":{"replicas":4}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := nodeSets.Patch(ctx, "before", "application/merge-patch+json", []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if o := next(); o.Kind != "NodeSet" || o.Metadata.Name != "before" || o.Spec.Replicas != 2 {
			t.Fatalf("watched object: %+v", o)
		}
	})
}
