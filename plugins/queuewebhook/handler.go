package queuewebhook

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
	"github.com/kubectl-vc/kubectl-vc/plugins/internal/quantityguard"
)

// maxReviewBytes bounds a request body: a review carries the object and
// its old version, each at most what etcd stores (1.5 MiB); anything
// larger is not from the API server.
const maxReviewBytes = 4 << 20

// maxInFlight bounds the reviews read and decided at once, so that the
// bodies held in memory are bounded (maxInFlight × maxReviewBytes, 64 MiB)
// whoever in the cluster posts to the webhook's port; a request over it
// waits for a slot, within the server's read timeout.
const maxInFlight = 16

// handler answers AdmissionReviews (admission.k8s.io/v1) of queue writes.
type handler struct {
	queues cache.Indexer
	// rest reads a queue the cache does not hold yet (nil: only the cache).
	rest rest.Interface
	// slots holds one token per review in flight (maxInFlight).
	slots chan struct{}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST an AdmissionReview", http.StatusMethodNotAllowed)
		return
	}
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	case <-r.Context().Done():
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxReviewBytes))
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, "the body is not an AdmissionReview with a request", http.StatusBadRequest)
		return
	}
	resp := h.review(r, review.Request)
	resp.UID = review.Request.UID
	out, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
		Response: resp,
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

// review decides one request: allowed, or denied with the rule's message
// as an Invalid status (HTTP 422), which the API server passes on.
func (h *handler) review(r *http.Request, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if req.Resource.Group != v1beta1.SchemeGroupVersion.Group || req.Resource.Resource != "queues" || req.SubResource != "" {
		return allowed()
	}
	n := neighbours{ctx: r.Context(), h: h}
	var err error
	switch req.Operation {
	case admissionv1.Create, admissionv1.Update:
		q, bad, derr := decode(req.Object.Raw)
		if derr != nil {
			return denied(fmt.Sprintf("queue %s: cannot read the object: %v", req.Name, derr))
		}
		if len(bad) > 0 {
			return denied(fmt.Sprintf("queue %s: %s: not a quantity (an exponent over 4 digits or over 100 digits in a row): write the amount in ordinary units", q.Name, strings.Join(bad, ", ")))
		}
		var old *v1beta1.Queue
		if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
			// The old object's costly quantities, if any, are left out:
			// the write is then seen as changing that list, and checked.
			if old, _, err = decode(req.OldObject.Raw); err != nil {
				return denied(fmt.Sprintf("queue %s: cannot read the stored object: %v", req.Name, err))
			}
		}
		err = rules.CheckQueueWrite(q, old, n)
	case admissionv1.Delete:
		var q *v1beta1.Queue
		if len(req.OldObject.Raw) > 0 {
			if q, _, err = decode(req.OldObject.Raw); err != nil {
				return denied(fmt.Sprintf("queue %s: cannot read the stored object: %v", req.Name, err))
			}
		} else if obj, ok, _ := h.queues.GetByKey(req.Name); ok {
			q = obj.(*v1beta1.Queue)
		}
		if q != nil {
			err = rules.CheckQueueDelete(q, n)
		}
	}
	if err != nil {
		klog.FromContext(r.Context()).V(2).Info("denied", "webhook", Name, "operation", req.Operation, "queue", req.Name, "reason", err.Error())
		return denied(err.Error())
	}
	return allowed()
}

func decode(raw []byte) (*v1beta1.Queue, []string, error) {
	q := &v1beta1.Queue{}
	bad, err := quantityguard.Decode(raw, q)
	if err != nil {
		return nil, nil, err
	}
	return q, bad, nil
}

func allowed() *admissionv1.AdmissionResponse { return &admissionv1.AdmissionResponse{Allowed: true} }

func denied(msg string) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Result: &metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity,
		Reason: metav1.StatusReasonInvalid, Message: msg,
	}}
}
