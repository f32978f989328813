package framework

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func sameMap(a, b any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func TestInternerSharesEqualMaps(t *testing.T) {
	in := NewInterner()
	a := in.StringMap(map[string]string{"app": "trainer", "team": "ml"})
	b := in.StringMap(map[string]string{"team": "ml", "app": "trainer"})
	if !sameMap(a, b) {
		t.Error("equal maps are not shared")
	}
	c := in.StringMap(map[string]string{"app": "trainer", "team": "infra"})
	if sameMap(a, c) || c["team"] != "infra" {
		t.Errorf("different maps shared: %v %v", a, c)
	}
	// Strings may hold any byte: a map is never taken for another whose
	// entries would read the same if simply joined.
	x := in.StringMap(map[string]string{"a": "1:b1:c"})
	y := in.StringMap(map[string]string{"a": "1", "b": "c"})
	z := in.StringMap(map[string]string{"a": "1\x00b\x00c"})
	if sameMap(x, y) || sameMap(x, z) || sameMap(y, z) || x["a"] != "1:b1:c" || y["b"] != "c" {
		t.Errorf("maps with similar text shared: %q %q %q", x, y, z)
	}
	if e := in.StringMap(nil); e != nil {
		t.Errorf("nil map came back as %v", e)
	}
}

func TestInternerIsBounded(t *testing.T) {
	in := NewInterner()
	for i := range internLimit + 10 {
		m := map[string]string{"i": fmt.Sprint(i)}
		if got := in.StringMap(m); got["i"] != fmt.Sprint(i) {
			t.Fatalf("entry %d came back as %v", i, got)
		}
	}
	if n := len(in.maps); n > internLimit {
		t.Errorf("table holds %d maps, limit %d", n, internLimit)
	}
	// After the reset, equal maps are shared again.
	a := in.StringMap(map[string]string{"k": "v"})
	if b := in.StringMap(map[string]string{"k": "v"}); !sameMap(a, b) {
		t.Error("equal maps not shared after the table was reset")
	}
}

func TestInternerResourceLists(t *testing.T) {
	in := NewInterner()
	list := func(cpu, mem string) *corev1.ResourceList {
		return &corev1.ResourceList{"cpu": resource.MustParse(cpu), "memory": resource.MustParse(mem)}
	}
	a := in.ResourceList(list("2", "8Gi"))
	if b := in.ResourceList(list("2", "8Gi")); a != b {
		t.Error("equal lists are not shared")
	}
	// Equal amounts written differently are the same quantity (a
	// Quantity serialises in canonical form): shared.
	if c := in.ResourceList(list("2000m", "8192Mi")); c != a {
		t.Errorf("2000m/8192Mi not shared with 2/8Gi: %v", *c)
	}
	if d := in.ResourceList(list("4", "8Gi")); d == a || d.Cpu().String() != "4" {
		t.Errorf("different list shared or changed: %v", *d)
	}
	if in.ResourceList(nil) != nil {
		t.Error("nil list not returned as nil")
	}
}

// The transform hands equal labels and annotations of trimmed objects
// the same map.
func TestCacheTransformSharesMetadataMaps(t *testing.T) {
	transform := CacheTransform(reader{reads: []CacheRead{readsNodeName()}})
	p1, p2 := fullPod(), fullPod()
	p2.Name, p2.UID = "p2", "u2"
	o1, _ := transform(p1)
	o2, _ := transform(p2)
	m1, m2 := o1.(*corev1.Pod).ObjectMeta, o2.(*corev1.Pod).ObjectMeta
	if !sameMap(m1.Labels, m2.Labels) || !sameMap(m1.Annotations, m2.Annotations) {
		t.Error("equal labels or annotations are not shared")
	}
	if m1.Annotations["volcano.sh/queue-name"] != "q" || m2.Name != "p2" {
		t.Errorf("metadata changed: %+v", m2)
	}
}
