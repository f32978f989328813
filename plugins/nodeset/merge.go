package nodeset

import (
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// mergeOver is a strategic merge of over onto base, over's empty values
// (nil, "", 0, false, empty objects) left out so that they do not erase
// base's, as the operator merges. Map keys that start with "$" are
// dropped from over: they are never valid Kubernetes names, and the merge
// would read them as its directives ($patch: delete, ...), letting a
// template delete what it cannot otherwise remove.
func mergeOver[T any](base, over *T) (*T, error) {
	b, err := json.Marshal(base)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(over)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	dropDirectives(m)
	dropEmpty(m)
	p, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	out := new(T)
	merged, err := strategicpatch.StrategicMergePatch(b, p, out)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(merged, out); err != nil {
		return nil, err
	}
	return out, nil
}

// dropEmpty removes empty values from the objects of v, not from lists.
func dropEmpty(m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			delete(m, k)
		case string:
			if x == "" {
				delete(m, k)
			}
		case float64:
			if x == 0 {
				delete(m, k)
			}
		case bool:
			if !x {
				delete(m, k)
			}
		case map[string]any:
			dropEmpty(x)
			if len(x) == 0 {
				delete(m, k)
			}
		}
	}
}

// dropDirectives removes keys starting with "$" everywhere in v.
func dropDirectives(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if strings.HasPrefix(k, "$") {
				delete(x, k)
				continue
			}
			dropDirectives(e)
		}
	case []any:
		for _, e := range x {
			dropDirectives(e)
		}
	}
}
