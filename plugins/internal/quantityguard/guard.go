// Package quantityguard caches Queues and PodGroups without parsing the
// quantities that would stop serve.
//
// The CRDs of Volcano's Queue and PodGroup accept, in their resource lists
// (a queue's capability, deserved, guarantee, a podgroup's minResources),
// any string of the pattern
// ^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$,
// and the API server stores them unparsed. Every client that decodes such
// an object into Go types parses them with k8s.io/apimachinery's
// resource.ParseQuantity, which computes 10^|exponent|: its CPU and memory
// grow with the exponent's value (docs/security.md, the quantities row),
// and a reflector stuck in that decode delivers nothing more, so one podgroup
// or queue written by any tenant stopped serve's queue and podgroup
// controllers for good (test/hostile).
//
// The informers here list and watch the raw JSON, look for such a
// quantity in it (a byte scan; an ordinary object is decoded as the
// generated informer decodes it), and remove it from the resource list
// before decoding the object, with a log line naming the object and the
// field. A controller never needs such a value: no resource is measured
// in 10^9999 units.
package quantityguard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Bounds of a quantity serve parses: at most maxExponentDigits significant
// digits in its exponent (ParseQuantity's cost grows tenfold and more with
// each digit past them) and at most maxDigitRun digits in a row (a long
// mantissa costs in proportion); the costs measured are in docs/security.md.
const (
	maxExponentDigits = 4
	maxDigitRun       = 100
)

// resourceListKeys are the JSON names of the resource lists of Queue and
// PodGroup (pkg/apis/scheduling/v1beta1): capability, deserved,
// extendClusters[].capacity, guarantee.resource, status.allocated,
// status.reservation.resource, minResources.
var resourceListKeys = map[string]bool{
	"capability": true, "deserved": true, "capacity": true, "resource": true,
	"allocated": true, "minResources": true,
}

// suspicious is the quick scan: whether raw holds a run of more than
// maxDigitRun digits, or a digit (or '.') followed by an exponent of more
// than maxExponentDigits digits. It may say yes of an ordinary object (a
// name such as "a1e-00001x"), which is then only checked more closely.
func suspicious(raw []byte) bool {
	run := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c >= '0' && c <= '9' {
			if run++; run > maxDigitRun {
				return true
			}
			continue
		}
		run = 0
		if (c == 'e' || c == 'E') && i > 0 && (raw[i-1] >= '0' && raw[i-1] <= '9' || raw[i-1] == '.') {
			j := i + 1
			if j < len(raw) && (raw[j] == '+' || raw[j] == '-') {
				j++
			}
			k := j
			for k < len(raw) && raw[k] >= '0' && raw[k] <= '9' {
				k++
			}
			if k-j > maxExponentDigits {
				return true
			}
		}
	}
	return false
}

// Costly tells whether a quantity (a resource list's value, as written)
// is beyond what serve parses: a digit run longer than maxDigitRun or an
// exponent of more than maxExponentDigits significant digits.
func Costly(q string) bool {
	run := 0
	for _, c := range []byte(q) {
		if c >= '0' && c <= '9' {
			if run++; run > maxDigitRun {
				return true
			}
		} else {
			run = 0
		}
	}
	i := strings.LastIndexAny(q, "eE")
	if i <= 0 || i == len(q)-1 {
		return false
	}
	exp := strings.TrimLeft(q[i+1:], "+-")
	if exp == "" || exp[0] < '0' || exp[0] > '9' {
		return false // "Ei", "E": a suffix, not an exponent
	}
	return len(strings.TrimLeft(exp, "0")) > maxExponentDigits
}

// dropped is one value removed from an object.
type dropped struct{ field, value string }

func (d dropped) String() string {
	v := d.value
	if len(v) > 40 {
		v = v[:40] + fmt.Sprintf("... (%d characters)", len(d.value))
	}
	return d.field + "=" + v
}

// sanitize returns raw without the costly quantities of its resource
// lists (outside metadata), and what it removed; raw itself when there
// is nothing to remove.
func sanitize(raw []byte) ([]byte, []dropped, error) {
	if !suspicious(raw) {
		return raw, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, nil, err
	}
	var out []dropped
	for k, v := range obj {
		if k != "metadata" {
			walk(k, v, &out)
		}
	}
	if len(out) == 0 {
		return raw, nil, nil
	}
	b, err := json.Marshal(obj)
	return b, out, err
}

// walk removes the costly values of the resource lists under v, whose
// path is path.
func walk(path string, v any, out *[]dropped) {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			p := path + "." + k
			if list, ok := c.(map[string]any); ok && resourceListKeys[k] {
				for name, q := range list {
					var s string
					switch q := q.(type) {
					case string:
						s = q
					case json.Number:
						s = q.String()
					default:
						continue
					}
					if Costly(s) {
						*out = append(*out, dropped{field: p + "[" + name + "]", value: s})
						delete(list, name)
					}
				}
				continue
			}
			walk(p, c, out)
		}
	case []any:
		for i, c := range v {
			walk(fmt.Sprintf("%s[%d]", path, i), c, out)
		}
	}
}

// Decode decodes one object, as a request body carries it, into obj after
// taking out its costly quantities; it returns the fields it took out
// ("spec.capability[cpu]=1e99999"), so that a caller that must not
// overlook them (an admission webhook) can refuse the object.
func Decode(raw []byte, obj any) ([]string, error) {
	clean, removed, err := sanitize(raw)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(clean, obj); err != nil {
		return nil, err
	}
	out := make([]string, len(removed))
	for i, d := range removed {
		out[i] = d.String()
	}
	return out, nil
}
