package podgroup

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// ownerAnnotations merges the annotations of the pod's owners that can
// carry Volcano settings (the kinds of ownerKinds), in owner-reference
// order; the first owner to set a key wins. Owners are read from the
// informer caches, never with a GET per pod. seen is false when the pod's
// controller is of one of these kinds but not in the cache (not yet, or
// only an older object of the same name).
func (c *Controller) ownerAnnotations(pod *corev1.Pod) (out map[string]string, seen bool) {
	out, seen = map[string]string{}, true
	for i := range pod.OwnerReferences {
		ref := &pod.OwnerReferences[i]
		o := ownerKindOfRef(ref)
		if o == nil {
			continue
		}
		v, err := c.cachedOwner(o, pod.Namespace, ref.Name)
		// A missing owner, or one with the same name but another UID (a
		// recreated object), has nothing to say about this pod.
		if err != nil || v == nil || v.obj.GetUID() != ref.UID {
			if ptr.Deref(ref.Controller, false) {
				seen = false
			}
			continue
		}
		for k, val := range v.obj.GetAnnotations() {
			if _, ok := out[k]; !ok {
				out[k] = val
			}
		}
	}
	return out, seen
}
