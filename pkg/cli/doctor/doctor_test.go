package doctor

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestControllersFlag(t *testing.T) {
	volcano := map[string]bool{
		"":                                true, // no --controllers: all
		"--controllers=*":                 true,
		"--controllers=+queue-controller": true,
		"--controllers=queue-controller,+job-controller": true,
		"--controllers=+job-controller,+pg-controller":   false, // only what it names
		"--controllers=-queue-controller":                false,
		"--controllers=-job-controller":                  false, // no '*': nothing else either
		"--controllers -queue-controller":                false,
	}
	for args, want := range volcano {
		if got := volcanoRunsQueue(append([]string{"-v=4"}, strings.Fields(args)...)); got != want {
			t.Errorf("volcano %q: %v, want %v", args, got, want)
		}
	}
	serve := map[string]bool{
		"serve":                              true,
		"serve --controllers=queue,podgroup": true,
		"serve --controllers=nodeset":        false,
		"serve --controllers podgroup --controllers queue": true,
	}
	for args, want := range serve {
		if got := serveRunsQueue(strings.Fields(args)); got != want {
			t.Errorf("serve %q: %v, want %v", args, got, want)
		}
	}
}

func TestCompareCRD(t *testing.T) {
	crd := func(established bool, versions ...string) *apiextensionsv1.CustomResourceDefinition {
		c := &apiextensionsv1.CustomResourceDefinition{}
		c.Name = "queues.scheduling.volcano.sh"
		for i, v := range versions {
			c.Spec.Versions = append(c.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: v, Served: true, Storage: i == 0})
		}
		if established {
			c.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
		}
		return c
	}
	ours := crd(true, "v1beta1")
	for _, c := range []struct {
		got  *apiextensionsv1.CustomResourceDefinition
		want Status
		fix  string
	}{
		{crd(true, "v1beta1"), OK, ""},
		{crd(true, "v1", "v1beta1"), OK, ""}, // another storage version: the server converts
		{crd(true, "v1alpha1"), Fail, "uses v1beta1"},
		{crd(false, "v1beta1"), Fail, "has not accepted it"},
	} {
		st, fix := compareCRD(ours, c.got)
		if st != c.want || !strings.Contains(fix, c.fix) {
			t.Errorf("%v: %s %q, want %s %q", c.got.Spec.Versions, st, fix, c.want, c.fix)
		}
	}
	if d := describeCRD(ours, crd(true, "v1", "v1beta1")); d != "queues.scheduling.volcano.sh serves v1 (storage), v1beta1, installed by another tool (Volcano's or Slinky's own?); this kubectl-vc uses v1beta1" {
		t.Errorf("describeCRD: %q", d)
	}
}

func TestSome(t *testing.T) {
	if s := some([]string{"a", "b", "c", "d"}, 2); s != "a, b and 2 more" {
		t.Errorf("%q", s)
	}
	if s := some([]string{"a", "b"}, 2); s != "a, b" {
		t.Errorf("%q", s)
	}
}
