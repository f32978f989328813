package quantityguard

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestCostly(t *testing.T) {
	for q, want := range map[string]bool{
		"1": false, "500m": false, "2Gi": false, "9223372036854775807": false, "1E": false, "2Ei": false,
		"1e3": false, "9e9999": false, "9e-09999": false, "9e+0000000000009999": false, "9.e9": false,
		"9e99999": true, "9e-2147483648": true, "9e2147483648": true, "9E-9999999": true,
		strings.Repeat("9", 101): true, "1." + strings.Repeat("1", 101): true,
	} {
		if got := Costly(q); got != want {
			t.Errorf("Costly(%q) = %v, want %v", q, got, want)
		}
		if !want {
			// What passes parses quickly.
			start := time.Now()
			if _, err := resource.ParseQuantity(q); err != nil {
				t.Errorf("%q: %v", q, err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("ParseQuantity(%q) took %v", q, d)
			}
		}
	}
}

func TestSanitize(t *testing.T) {
	raw := []byte(`{"metadata":{"name":"q","annotations":{"a":"9e-9999999"}},` +
		`"spec":{"weight":1,"queue":"9e-99999","capability":{"cpu":"9e-9999999","memory":"1Gi"},"guarantee":{"resource":{"x":9e99999}},` +
		`"extendClusters":[{"name":"c","capacity":{"gpu":"` + strings.Repeat("1", 200) + `"}}]}}`)
	clean, removed, err := sanitize(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 3 {
		t.Errorf("removed %v, want the cpu, guarantee and extendClusters quantities", removed)
	}
	var got map[string]any
	if err := json.Unmarshal(clean, &got); err != nil {
		t.Fatal(err)
	}
	spec := got["spec"].(map[string]any)
	if spec["queue"] != "9e-99999" || got["metadata"].(map[string]any)["annotations"].(map[string]any)["a"] != "9e-9999999" {
		t.Errorf("a value outside the resource lists changed: %s", clean)
	}
	if c := spec["capability"].(map[string]any); c["memory"] != "1Gi" || c["cpu"] != nil {
		t.Errorf("capability %v, want memory only", c)
	}
	// An ordinary object is not decoded twice.
	plain := []byte(`{"metadata":{"name":"podgroup-1e2f3a4b-0000"},"spec":{"minResources":{"cpu":"2","memory":"1e9"}}}`)
	if out, removed, err := sanitize(plain); err != nil || removed != nil || &out[0] != &plain[0] {
		t.Errorf("an ordinary object was rewritten: %s %v %v", out, removed, err)
	}
}
