package manifests

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestServeSetNames: the names serve reads from here are those of the
// serve set's objects, and its Deployment passes the pod's namespace
// (POD_NAMESPACE, downward API), which serve's self-signed metrics
// certificate names, wherever install put it.
func TestServeSetNames(t *testing.T) {
	objs, err := Objects(Serve)
	if err != nil {
		t.Fatal(err)
	}
	var deployment, service *unstructured.Unstructured
	for _, o := range objs {
		switch {
		case o.GetKind() == "Deployment" && o.GetName() == ServeDeployment:
			deployment = o
		case o.GetKind() == "Service" && o.GetName() == ServeMetricsService:
			service = o
		}
	}
	if deployment == nil || service == nil {
		t.Fatalf("serve set without Deployment %s (%v) or Service %s (%v)", ServeDeployment, deployment != nil, ServeMetricsService, service != nil)
	}
	containers, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		cm, _ := c.(map[string]any)
		if cm["name"] != ServeContainer {
			continue
		}
		env, _, _ := unstructured.NestedSlice(cm, "env")
		for _, e := range env {
			em, _ := e.(map[string]any)
			if em["name"] != "POD_NAMESPACE" {
				continue
			}
			if path, _, _ := unstructured.NestedString(em, "valueFrom", "fieldRef", "fieldPath"); path != "metadata.namespace" {
				t.Fatalf("POD_NAMESPACE from %q, want the downward API's metadata.namespace", path)
			}
			return
		}
		t.Fatalf("container %s has no POD_NAMESPACE: %v", ServeContainer, env)
	}
	t.Fatalf("Deployment %s has no container %s", ServeDeployment, ServeContainer)
}
