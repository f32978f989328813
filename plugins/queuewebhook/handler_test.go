package queuewebhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// The handler's reading and answering of AdmissionReviews, over a cache
// filled by hand (the rules themselves: pkg/rules; against a real API
// server: test/admission).

func testHandler(t *testing.T, queues ...*v1beta1.Queue) *handler {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{byParent: parentOf})
	for _, q := range queues {
		if err := idx.Add(q); err != nil {
			t.Fatal(err)
		}
	}
	return newHandler(idx, nil)
}

func queueJSON(t *testing.T, q string) runtime.RawExtension {
	t.Helper()
	return runtime.RawExtension{Raw: []byte(q)}
}

func review(t *testing.T, h http.Handler, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	t.Helper()
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/validate-queues", bytes.NewReader(body)))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Kind != "AdmissionReview" || out.APIVersion != "admission.k8s.io/v1" || out.Response == nil || out.Response.UID != req.UID {
		t.Fatalf("answer is not the review of request %s: %+v", req.UID, out)
	}
	return out.Response
}

var queuesResource = metav1.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "queues"}

func TestHandlerDecides(t *testing.T) {
	parent := &v1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	parent.Spec.Capability, _ = rules.ParseResourceList("capability", "cpu=4")
	child := &v1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: v1beta1.QueueSpec{Parent: "p"}}
	closed := parent.DeepCopy()
	closed.Status.State = v1beta1.QueueStateClosed
	h := testHandler(t, parent, child)

	r := review(t, h, &admissionv1.AdmissionRequest{UID: types.UID("1"), Resource: queuesResource, Operation: admissionv1.Create, Name: "big",
		Object: queueJSON(t, `{"metadata":{"name":"big"},"spec":{"parent":"p","capability":{"cpu":"5"}}}`)})
	if r.Allowed || r.Result == nil || r.Result.Code != 422 || r.Result.Reason != metav1.StatusReasonInvalid ||
		!strings.HasPrefix(r.Result.Message, "queue big exceeds its parent p in capability cpu") {
		t.Errorf("a queue above its parent: %+v %+v", r, r.Result)
	}
	r = review(t, h, &admissionv1.AdmissionRequest{UID: types.UID("2"), Resource: queuesResource, Operation: admissionv1.Create, Name: "ok",
		Object: queueJSON(t, `{"metadata":{"name":"ok"},"spec":{"parent":"p","capability":{"cpu":"4"}}}`)})
	if !r.Allowed {
		t.Errorf("a queue within its parent: %+v", r.Result)
	}
	oldClosed, _ := json.Marshal(closed)
	r = review(t, h, &admissionv1.AdmissionRequest{UID: types.UID("3"), Resource: queuesResource, Operation: admissionv1.Delete, Name: "p",
		OldObject: runtime.RawExtension{Raw: oldClosed}})
	if r.Allowed || !strings.HasPrefix(r.Result.Message, "queue p has child queue c: delete it") {
		t.Errorf("a closed parent's deletion: %+v %+v", r, r.Result)
	}
	// The status subresource and other kinds are not its to check.
	r = review(t, h, &admissionv1.AdmissionRequest{UID: types.UID("4"), Resource: queuesResource, SubResource: "status", Operation: admissionv1.Update, Name: "big",
		Object: queueJSON(t, `{"metadata":{"name":"big"},"spec":{"parent":"p","capability":{"cpu":"5"}}}`)})
	if !r.Allowed {
		t.Errorf("a status write: %+v", r.Result)
	}
	// A quantity that takes minutes to parse is refused unparsed.
	r = review(t, h, &admissionv1.AdmissionRequest{UID: types.UID("5"), Resource: queuesResource, Operation: admissionv1.Create, Name: "huge",
		Object: queueJSON(t, `{"metadata":{"name":"huge"},"spec":{"parent":"p","capability":{"cpu":"1e999999999"}}}`)})
	if r.Allowed || !strings.Contains(r.Result.Message, "spec.capability[cpu]=1e999999999: not a quantity") {
		t.Errorf("a costly quantity: %+v %+v", r, r.Result)
	}
	// An object that is not a queue's JSON.
	r = review(t, h, &admissionv1.AdmissionRequest{UID: types.UID("6"), Resource: queuesResource, Operation: admissionv1.Create, Name: "bad",
		Object: queueJSON(t, `{"spec":{"capability":"cpu"}}`)})
	if r.Allowed || !strings.Contains(r.Result.Message, "cannot read the object") {
		t.Errorf("a malformed object: %+v %+v", r, r.Result)
	}
}

// What is not a review from the API server gets an HTTP error, and the
// handler reads no more than maxReviewBytes.
func TestHandlerRefusesWhatIsNotAReview(t *testing.T) {
	h := testHandler(t)
	for _, c := range []struct {
		method, body string
		want         int
	}{
		{http.MethodGet, "", http.StatusMethodNotAllowed},
		{http.MethodPost, "not json", http.StatusBadRequest},
		{http.MethodPost, `{"kind":"AdmissionReview"}`, http.StatusBadRequest},
		{http.MethodPost, `{"request":` + strings.Repeat(" ", maxReviewBytes) + `{}}`, http.StatusRequestEntityTooLarge},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, "/validate-queues", strings.NewReader(c.body)))
		if rec.Code != c.want {
			t.Errorf("%s %.40q: status %d, want %d", c.method, c.body, rec.Code, c.want)
		}
	}
}

// BenchmarkReview is what serve spends on one review of a queue create
// (decode, the parent's and the children's lookups, the answer), with
// 10 000 queues in its cache, 100 of them children of the new queue's
// parent: the cost does not grow with the queues.
func BenchmarkReview(b *testing.B) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{byParent: parentOf})
	capability, _ := rules.ParseResourceList("capability", "cpu=4,memory=16Gi")
	for i := range 10000 {
		q := &v1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("q-%05d", i)}, Spec: v1beta1.QueueSpec{Capability: capability}}
		if i%100 != 0 {
			q.Spec.Parent = fmt.Sprintf("q-%05d", i/100*100)
		}
		if err := idx.Add(q); err != nil {
			b.Fatal(err)
		}
	}
	h := newHandler(idx, nil)
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "1", Resource: queuesResource, Operation: admissionv1.Create, Name: "new",
			Object: runtime.RawExtension{Raw: []byte(`{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"new"},"spec":{"weight":1,"parent":"q-05000","capability":{"cpu":"2","memory":"8Gi"}}}`)}}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/validate-queues", bytes.NewReader(body)))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"allowed":true`) {
			b.Fatalf("%d %s", rec.Code, rec.Body.String())
		}
	}
}

// A parent the cache does not hold is read from the API server, unless its
// name is none a queue can have: then nothing is asked.
func TestParentReadOnlyForQueueNames(t *testing.T) {
	var asked []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`, http.StatusNotFound)
	}))
	defer api.Close()
	rc, err := rest.RESTClientFor(&rest.Config{Host: api.URL, ContentConfig: rest.ContentConfig{
		GroupVersion: &v1beta1.SchemeGroupVersion, NegotiatedSerializer: scheme.Codecs.WithoutConversion()}, APIPath: "/apis"})
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{byParent: parentOf}), rc)
	for i, parent := range []string{"elsewhere", "a/b", "../../api", strings.Repeat("x", 300)} {
		r := review(t, h, &admissionv1.AdmissionRequest{UID: types.UID(fmt.Sprint(i)), Resource: queuesResource, Operation: admissionv1.Create, Name: "q",
			Object: queueJSON(t, `{"metadata":{"name":"q"},"spec":{"parent":`+strconv.Quote(parent)+`,"capability":{"cpu":"1"}}}`)})
		if !r.Allowed {
			t.Errorf("parent %q: %+v", parent, r.Result)
		}
	}
	if len(asked) != 1 || asked[0] != "/apis/scheduling.volcano.sh/v1beta1/queues/elsewhere" {
		t.Errorf("asked the API server for %q, want the one queue name", asked)
	}
}
