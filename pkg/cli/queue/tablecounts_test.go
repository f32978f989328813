package queue

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/podgrouprows"
)

// podGroupServer answers podgroup reads: a Table (page by page, two rows a
// page, with the columns given) when a Table is asked for and columns is
// not nil, the objects otherwise. It records every Accept header.
func podGroupServer(t *testing.T, columns []string, rows [][]any, objects []schedulingv1beta1.PodGroup) (*httptest.Server, *[]string) {
	var accepts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/scheduling.volcano.sh/v1beta1/podgroups" {
			http.NotFound(w, r)
			return
		}
		accepts = append(accepts, r.Header.Get("Accept"))
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.Header.Get("Accept"), "as=Table") && columns != nil {
			// The continue token is the offset of the next row.
			start, _ := strconv.Atoi(r.URL.Query().Get("continue"))
			tbl := metav1.Table{TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/v1"}}
			for _, c := range columns {
				tbl.ColumnDefinitions = append(tbl.ColumnDefinitions, metav1.TableColumnDefinition{Name: c, Type: "string"})
			}
			end := min(start+2, len(rows))
			for _, cells := range rows[start:end] {
				tbl.Rows = append(tbl.Rows, metav1.TableRow{Cells: cells})
			}
			if end < len(rows) {
				tbl.Continue = strconv.Itoa(end)
			}
			_ = json.NewEncoder(w).Encode(tbl)
			return
		}
		_ = json.NewEncoder(w).Encode(schedulingv1beta1.PodGroupList{
			TypeMeta: metav1.TypeMeta{Kind: "PodGroupList", APIVersion: "scheduling.volcano.sh/v1beta1"},
			Items:    objects,
		})
	}))
	t.Cleanup(srv.Close)
	return srv, &accepts
}

func clientFor(t *testing.T, srv *httptest.Server) versioned.Interface {
	c, err := versioned.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCountFromTables(t *testing.T) {
	rows := [][]any{
		{"pg-0", "Running", float64(1), "a"},
		{"pg-1", "Pending", float64(1), "a"},
		{"pg-2", nil, float64(1), "a"},       // no phase yet
		{"pg-3", "Inqueue", float64(1), nil}, // no queue: the default queue
		{"pg-4", "Completed", float64(1), "b"},
	}
	srv, _ := podGroupServer(t, []string{"Name", "STATUS", "minMember", "QUEUE"}, rows, nil)
	got, err := countFromTables(context.Background(), clientFor(t, srv).SchedulingV1beta1().RESTClient(), 2)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]counts{
		"a":       {Total: 3, Running: 1, Pending: 1},
		"default": {Total: 1, Inqueue: 1},
		"b":       {Total: 1, Completed: 1},
	}
	if len(got) != len(want) {
		t.Errorf("counts %+v, want %+v", got, want)
	}
	for q, w := range want {
		if got[q] != w {
			t.Errorf("queue %s: %+v, want %+v", q, got[q], w)
		}
	}
}

// Without the columns, or without a Table at all, the Tables give no
// counts and queueCounts lists the objects instead.
func TestCountFromTablesFallsBack(t *testing.T) {
	objects := []schedulingv1beta1.PodGroup{
		{ObjectMeta: metav1.ObjectMeta{Name: "pg-0", Namespace: "ns"}, Spec: schedulingv1beta1.PodGroupSpec{Queue: "a"},
			Status: schedulingv1beta1.PodGroupStatus{Phase: schedulingv1beta1.PodGroupRunning}},
	}
	queues := []schedulingv1beta1.Queue{{ObjectMeta: metav1.ObjectMeta{Name: "a"}}}
	for _, c := range []struct {
		name    string
		columns []string
		wantErr error
	}{
		{"no QUEUE column", []string{"Name", "STATUS", "AGE"}, podgrouprows.ErrNoColumns},
		{"no Table", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, accepts := podGroupServer(t, c.columns, [][]any{{"pg-0", "Running", "1m"}}, objects)
			cl := clientFor(t, srv)
			_, err := countFromTables(context.Background(), cl.SchedulingV1beta1().RESTClient(), 0)
			if err == nil || (c.wantErr != nil && !errors.Is(err, c.wantErr)) {
				t.Fatalf("countFromTables: error %v, want %v", err, c.wantErr)
			}
			*accepts = nil
			got := queueCounts(context.Background(), cl, queues, countPages(nil, 0))["a"]
			if got.Running != 1 || got.Total != 1 {
				t.Errorf("queue a: %+v, want one Running podgroup", got)
			}
			if len(*accepts) != 2 || !strings.Contains((*accepts)[0], "as=Table") || strings.Contains((*accepts)[1], "as=Table") {
				t.Errorf("want a Table read, then a list of the objects; Accept headers: %q", *accepts)
			}
		})
	}
}
