package podgrouprows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	vcfake "github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
)

// These unit tests cover how the ListWatch chooses its way of reading when
// the API server does not give a usable Table; the Table path itself is
// proven against the real API server in test/queue (TestPodGroupRows).

// server answers the namespace list with one namespace and podgroup lists
// with podgroupsAnswer (whatever the Accept header asks for); it records
// the podgroup requests' paths.
func server(t *testing.T, podgroupsAnswer func(r *http.Request) any) (*httptest.Server, *[]string) {
	t.Helper()
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body any
		switch {
		case r.URL.Path == "/api/v1/namespaces":
			body = &corev1.NamespaceList{TypeMeta: metav1.TypeMeta{Kind: "NamespaceList", APIVersion: "v1"},
				Items: []corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "team"}}}}
		case strings.HasSuffix(r.URL.Path, "/podgroups"):
			paths = append(paths, r.URL.Path+"?"+r.URL.RawQuery)
			body = podgroupsAnswer(r)
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &paths
}

func clientsFor(t *testing.T, srv *httptest.Server) (kubernetes.Interface, versioned.Interface) {
	t.Helper()
	cfg := &rest.Config{Host: srv.URL}
	return kubernetes.NewForConfigOrDie(cfg), versioned.NewForConfigOrDie(cfg)
}

func fullPodGroupList() *v1beta1.PodGroupList {
	return &v1beta1.PodGroupList{
		TypeMeta: metav1.TypeMeta{Kind: "PodGroupList", APIVersion: v1beta1.SchemeGroupVersion.String()},
		ListMeta: metav1.ListMeta{ResourceVersion: "42"},
		Items: []v1beta1.PodGroup{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "pg", ResourceVersion: "41", Annotations: map[string]string{"a": "b"}},
			Spec:       v1beta1.PodGroupSpec{MinMember: 3, Queue: "q"},
			Status:     v1beta1.PodGroupStatus{Phase: v1beta1.PodGroupRunning, Running: 3},
		}},
	}
}

func TestListFallsBackToObjects(t *testing.T) {
	for _, c := range []struct {
		name   string
		answer func(r *http.Request) any
	}{
		{"no Table", func(*http.Request) any { return fullPodGroupList() }},
		{"no QUEUE column", func(r *http.Request) any {
			if strings.Contains(r.Header.Get("Accept"), "as=Table") {
				return &metav1.Table{TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/v1"},
					ColumnDefinitions: []metav1.TableColumnDefinition{{Name: "Name"}, {Name: "STATUS"}}}
			}
			return fullPodGroupList()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, paths := server(t, c.answer)
			lw, ok := New(clientsFor(t, srv))
			if !ok {
				t.Fatal("New refused a REST client")
			}
			obj, err := lw.ListWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				t.Fatal(err)
			}
			l := obj.(*v1beta1.PodGroupList)
			want := &v1beta1.PodGroup{}
			want.Namespace, want.Name, want.ResourceVersion, want.Spec.Queue, want.Status.Phase = "team", "pg", "41", "q", v1beta1.PodGroupRunning
			if len(l.Items) != 1 || !equalRow(&l.Items[0], want) || l.ResourceVersion != "42" {
				t.Fatalf("listed %+v (resourceVersion %q), want only %+v at 42", l.Items, l.ResourceVersion, want)
			}
			// First the namespace's Table, then the objects cluster-wide.
			if len(*paths) != 2 || !strings.Contains((*paths)[0], "/namespaces/team/podgroups?includeObject=None") ||
				!strings.HasPrefix((*paths)[1], "/apis/scheduling.volcano.sh/v1beta1/podgroups?") {
				t.Errorf("requests %v", *paths)
			}
			if !lw.objects {
				t.Error("after a list of objects the watch would still ask for Tables")
			}
		})
	}
}

// A failed Table request is an error for the reflector to retry, not a
// reason to read the objects.
func TestListTableErrorIsReturned(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/namespaces" {
			_ = json.NewEncoder(w).Encode(&corev1.NamespaceList{Items: []corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "team"}}}})
			return
		}
		http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503}`, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	lw, _ := New(clientsFor(t, srv))
	_, err := lw.ListWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "0"})
	if err == nil || errors.Is(err, errNotTable) || errors.Is(err, ErrNoColumns) {
		t.Fatalf("list: %v, want the server's error", err)
	}
	if lw.objects {
		t.Error("a failed request switched to objects")
	}
}

func TestNewRefusesFakeClients(t *testing.T) {
	if _, ok := New(kubefake.NewClientset(), vcfake.NewSimpleClientset()); ok {
		t.Fatal("New accepted clients without a REST client")
	}
}

func equalRow(a, b *v1beta1.PodGroup) bool {
	return a.Namespace == b.Namespace && a.Name == b.Name && a.ResourceVersion == b.ResourceVersion &&
		a.Spec.Queue == b.Spec.Queue && a.Status.Phase == b.Status.Phase &&
		a.Annotations == nil && a.Spec.MinMember == 0 && a.Status.Running == 0
}

// Decode turns a Table watch's events into podgroups, errors into Status
// objects, and a bookmark into its resourceVersion, sent as a Table or
// untransformed.
func TestDecodeEvents(t *testing.T) {
	stream := `{"type":"ADDED","object":{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"7"},` +
		`"columnDefinitions":[{"name":"Name"},{"name":"STATUS"},{"name":"QUEUE"}],` +
		`"rows":[{"cells":["pg","Pending","q"],"object":{"kind":"PartialObjectMetadata","metadata":{"namespace":"team","name":"pg","resourceVersion":"7"}}}]}}` +
		`{"type":"MODIFIED","object":{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{},` +
		`"rows":[{"cells":["pg","Running",null],"object":{"kind":"PartialObjectMetadata","metadata":{"namespace":"team","name":"pg","resourceVersion":"8"}}}]}}` +
		`{"type":"BOOKMARK","object":{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{},"rows":[{"cells":["",null,null],"object":{"metadata":{"resourceVersion":"9"}}}]}}` +
		`{"type":"BOOKMARK","object":{"kind":"PodGroup","apiVersion":"scheduling.volcano.sh/v1beta1","metadata":{"resourceVersion":"10"}}}` +
		`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410}}`
	d := &tableEvents{body: nopCloser{}, dec: json.NewDecoder(strings.NewReader(stream)), cols: Columns{name: -1}, in: interner{}}
	var got []string
	for {
		typ, obj, err := d.Decode()
		if err != nil {
			break
		}
		got = append(got, string(typ)+" "+describe(obj))
	}
	want := []string{
		"ADDED team/pg q Pending 7",
		"MODIFIED team/pg  Running 8",
		"BOOKMARK /   9",
		"BOOKMARK /   10",
		"ERROR status 410 Expired",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("decoded\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

func describe(obj runtime.Object) string {
	switch o := obj.(type) {
	case *v1beta1.PodGroup:
		return o.Namespace + "/" + o.Name + " " + o.Spec.Queue + " " + string(o.Status.Phase) + " " + o.ResourceVersion
	case *metav1.Status:
		return fmt.Sprintf("status %d %s", o.Code, o.Reason)
	}
	return "?"
}

// Rows reads a Table row by row, keeps its list metadata, and refuses
// what it cannot count.
func TestRows(t *testing.T) {
	table := `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"5","continue":"next"},` +
		`"columnDefinitions":[{"name":"Name"},{"name":"STATUS"},{"name":"minMember"},{"name":"QUEUE"}],` +
		`"rows":[{"cells":["a","Running",1,"q"],"object":null},{"cells":["b",null,1,null],"object":null}]}`
	var got []string
	meta, cols, err := Rows(strings.NewReader(table), "team", func(r Row) error {
		got = append(got, describe(r.PodGroup()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if meta.ResourceVersion != "5" || meta.Continue != "next" || cols != (Columns{name: 0, phase: 1, queue: 3}) {
		t.Errorf("metadata %+v, columns %+v", meta, cols)
	}
	if want := []string{"team/a q Running ", "team/b   "}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("rows %q, want %q", got, want)
	}

	for _, c := range []struct {
		name, body string
		want       error
	}{
		{"a list of objects", `{"kind":"PodGroupList","apiVersion":"scheduling.volcano.sh/v1beta1","items":[]}`, errNotTable},
		{"no QUEUE column", `{"kind":"Table","columnDefinitions":[{"name":"Name"},{"name":"STATUS"}],"rows":[]}`, ErrNoColumns},
		{"rows before columns", `{"kind":"Table","rows":[{"cells":["a","Running","q"]}],"columnDefinitions":[{"name":"Name"},{"name":"STATUS"},{"name":"QUEUE"}]}`, ErrNoColumns},
		{"no columns at all", `{"kind":"Table","rows":[]}`, ErrNoColumns},
		{"not an object", `[]`, errNotTable},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := 0
			_, _, err := Rows(strings.NewReader(c.body), "", func(Row) error { n++; return nil })
			if !errors.Is(err, c.want) || n != 0 {
				t.Errorf("error %v after %d rows, want %v before any", err, n, c.want)
			}
		})
	}
}
