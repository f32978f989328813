package slurm

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzRESTAnswers: the nodes, jobs and error answers of every API version
// go through decodeAnswer, which decodes them as a stream (key by key,
// list elements one at a time). Whatever the bytes:
//   - it does not panic;
//   - it accepts exactly what json.Unmarshal accepts, and decodes the same
//     values (json.Unmarshal holds the whole answer; it is the reference),
//     except where an object repeats a key, which json.Unmarshal merges
//     into the list elements already decoded, and but for a node list of
//     more than maxNodes nodes, which it refuses (TestRESTRefusesTooManyNodes;
//     no input here is that long);
//   - a node's state always has a base state, lower case, and upper-case
//     flags (a job's hostlist is FuzzExpandHostlist's).
func FuzzRESTAnswers(f *testing.F) {
	for _, seed := range []string{
		`{"nodes":[{"name":"kvc-0","state":["IDLE","DRAIN"],"reason":"r"},{"name":"kvc-1","state":"ALLOCATED"}],"last_update":{"set":true,"infinite":false,"number":100},"errors":[],"warnings":[],"meta":{"plugin":{"type":"openapi/slurmctld"},"slurm":{"version":{"major":"26","minor":"05"}}}}`,
		`{"jobs":[{"job_id":1,"job_state":["RUNNING"],"nodes":"kvc-[0-1]","end_time":{"set":true,"number":2000},"time_limit":{"set":true,"number":60}}],"last_update":100}`,
		`{"jobs":[{"job_id":2,"job_state":"COMPLETING","nodes":"n[08-10],login","end_time":3000,"time_limit":{"set":false,"infinite":true}}]}`,
		`{"errors":[{"description":"Unable to query partitions","error_number":2018,"error":"Invalid node name specified","source":"slurm_update_node"}]}`,
		`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"no endpoints available","code":503}`,
		`{"Nodes":[{"NAME":"x"}],"nodeſ":null}`,
		`{"nodes":null,"last_update":null,"unknown":[1e400,{"a":[true,false,null]}]}`,
		`{"nodes":[{"name":"a","reason":"r"}],"nodes":[{"state":["DOWN"]}]}`,
		`{"nodes":[]} {}`,
		`{"nodes":[{"name":"a"}],}`,
		`null`,
		`[1]`,
		`{"jobs":5}`,
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAnswer(t, data, &restNodesResponse{}, &restNodesResponse{})
		checkAnswer(t, data, &restJobsResponse{}, &restJobsResponse{})
		checkAnswer(t, data, &restFailure{}, &restFailure{})

		// A refresh keeps the states, not the list: the same nodes either
		// way, the last of a name kept.
		var list restNodesResponse
		states := map[string]NodeState{}
		each := restNodesResponse{node: func(n restNode) error { states[n.Name] = n.toState(); return nil }}
		if decodeAnswer(bytes.NewReader(data), &list) == nil {
			if err := decodeAnswer(bytes.NewReader(data), &each); err != nil {
				t.Fatalf("decoded as a list, not node by node: %v", err)
			}
			want := map[string]NodeState{}
			for _, n := range list.Nodes {
				s := n.toState()
				want[n.Name] = s
				if s.Base == "" || s.Base != strings.ToLower(s.Base) {
					t.Fatalf("node %q: base state %q", n.Name, s.Base)
				}
				for _, fl := range s.Flags {
					if fl != strings.ToUpper(fl) {
						t.Fatalf("node %q: flag %q", n.Name, fl)
					}
				}
			}
			if !repeatsKey(data) && !reflect.DeepEqual(states, want) {
				t.Fatalf("node by node %v; from the list %v", states, want)
			}
		}
	})
}

// checkAnswer decodes data as a stream into got and with json.Unmarshal
// into want, and fails when they disagree.
func checkAnswer[T any](t *testing.T, data []byte, got, want *T) {
	t.Helper()
	errGot := decodeAnswer(bytes.NewReader(data), got)
	errWant := json.Unmarshal(data, want)
	if (errGot == nil) != (errWant == nil) {
		t.Fatalf("%T: streamed: %v; json.Unmarshal: %v", got, errGot, errWant)
	}
	if errGot == nil && !reflect.DeepEqual(got, want) && !repeatsKey(data) {
		t.Fatalf("%T: streamed %+v; json.Unmarshal %+v", got, *got, *want)
	}
}

// repeatsKey says whether an object in the JSON text names a key twice
// (under json.Unmarshal's case folding).
func repeatsKey(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next token of an object is a key
	}
	var stack []*frame
	for {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			if k, ok := t.(string); ok {
				folded := strings.ToLower(strings.ToUpper(k))
				if top.keys[folded] {
					return true
				}
				top.keys[folded] = true
				top.key = false
				continue
			}
		}
		switch t {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: the next token of the enclosing object is a key.
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true
		}
	}
}
