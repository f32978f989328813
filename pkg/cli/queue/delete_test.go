package queue

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	k8stesting "k8s.io/client-go/testing"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
)

func TestDeletionOrder(t *testing.T) {
	// root <- a <- a1 <- a11; root <- b; c <- d <- c (a cycle).
	all := map[string]*schedulingv1beta1.Queue{}
	for _, qp := range [][2]string{{"root", ""}, {"a", "root"}, {"a1", "a"}, {"a11", "a1"}, {"b", ""}, {"c", "d"}, {"d", "c"}} {
		all[qp[0]] = &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: qp[0]}, Spec: schedulingv1beta1.QueueSpec{Parent: qp[1]}}
	}
	named := func(names ...string) []*schedulingv1beta1.Queue {
		var out []*schedulingv1beta1.Queue
		for _, n := range names {
			out = append(out, all[n])
		}
		return out
	}
	for _, tc := range []struct {
		names   []string
		want    string
		wantErr string
	}{
		{names: []string{"b"}, want: "b"},
		{names: []string{"a11", "b"}, want: "a11 b"},
		{names: []string{"a", "a1", "a11"}, want: "a11 a1 a"},
		{names: []string{"a1", "a", "b", "a11"}, want: "b a11 a1 a"},
		{names: []string{"c", "d"}, want: "c d"},
		{names: []string{"a"}, wantErr: `cannot delete queue "a": it has child queue "a1": delete it too`},
		{names: []string{"a", "a1"}, wantErr: `cannot delete queue "a1": it has child queue "a11"`},
		{names: []string{"c"}, wantErr: `cannot delete queue "c": it has child queue "d"`},
	} {
		got, err := deletionOrder(named(tc.names...), all)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: error %v, want %q", tc.names, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.names, err)
			continue
		}
		var names []string
		for _, q := range got {
			names = append(names, q.Name)
		}
		if strings.Join(names, " ") != tc.want {
			t.Errorf("%v: order %v, want %s", tc.names, names, tc.want)
		}
	}

	// Several children: the first by name, and how many more.
	all["a2"] = &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "a2"}, Spec: schedulingv1beta1.QueueSpec{Parent: "a"}}
	all["a0"] = &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "a0"}, Spec: schedulingv1beta1.QueueSpec{Parent: "a"}}
	_, err := deletionOrder(named("a"), all)
	if want := `it has child queue "a0" (and 2 more)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}

// A parent deleted right after its child may be refused while the API
// server's admission cache still has the child: deleteOne retries that
// refusal, and only that one.
func TestDeleteOneRetriesStaleChildRefusal(t *testing.T) {
	for _, tc := range []struct {
		name     string
		refusal  string
		refusals int
		wantErr  string
		wantDels int
	}{
		{name: "stale child", refusal: "queue p has child queue c: delete it or move it to another parent first", refusals: 2, wantDels: 3},
		{name: "other child", refusal: "queue p has child queue other: delete it or move it to another parent first", refusals: 1, wantErr: "child queue other", wantDels: 1},
		{name: "open", refusal: "queue p is Open: close it first", refusals: 1, wantErr: "is Open", wantDels: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u1"}}
			c := fake.NewSimpleClientset(p)
			dels := 0
			c.PrependReactor("delete", "queues", func(k8stesting.Action) (bool, runtime.Object, error) {
				dels++
				if dels <= tc.refusals {
					return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: "scheduling.volcano.sh", Kind: "Queue"}, "p", field.ErrorList{field.Invalid(nil, nil, tc.refusal)})
				}
				return false, nil, nil
			})
			o := &DeleteOptions{}
			o.Delete.Client = c
			err := o.deleteOne(context.Background(), p, []string{"c"})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if dels != tc.wantDels {
				t.Fatalf("%d delete requests, want %d", dels, tc.wantDels)
			}
		})
	}
}

// A user who may get and delete queues but not list them still deletes:
// the children check is the admission policy's then.
func TestDeleteWithoutListRight(t *testing.T) {
	q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "q", UID: "u1"}, Status: schedulingv1beta1.QueueStatus{State: schedulingv1beta1.QueueStateClosed}}
	c := fake.NewSimpleClientset(q)
	c.PrependReactor("list", "queues", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "scheduling.volcano.sh", Resource: "queues"}, "", nil)
	})
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := &DeleteOptions{}
	o.Delete.IOStreams, o.Delete.Names, o.Delete.Client = streams, []string{"q"}, c
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out.String() != "queue.scheduling.volcano.sh/q deleted\n" {
		t.Errorf("output %q", out.String())
	}
	if _, err := c.SchedulingV1beta1().Queues().Get(context.Background(), "q", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("queue still there: %v", err)
	}

	// Any other error of the list stops the delete before it writes.
	c = fake.NewSimpleClientset(q)
	c.PrependReactor("list", "queues", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("etcd is down")
	})
	o = &DeleteOptions{}
	o.Delete.IOStreams, o.Delete.Names, o.Delete.Client = streams, []string{"q"}, c
	if err := o.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "etcd is down") {
		t.Fatalf("error %v", err)
	}
	if _, err := c.SchedulingV1beta1().Queues().Get(context.Background(), "q", metav1.GetOptions{}); err != nil {
		t.Errorf("queue deleted after a failed list: %v", err)
	}
}
