package slurm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// The parts of slurmrestd's JSON (data parser v0.0.40 to v0.0.45) that the
// client reads. The names are the same in all of them; only what surrounds
// them grew.

// restError is one entry of a response's "errors".
type restError struct {
	Description string `json:"description"`
	ErrorNumber int    `json:"error_number"`
	Error       string `json:"error"`
	Source      string `json:"source"`
}

func (e restError) String() string {
	msg := e.Description
	if msg == "" {
		msg = e.Error
	} else if e.Error != "" && !strings.Contains(msg, e.Error) {
		msg += ": " + e.Error
	}
	if e.ErrorNumber != 0 {
		msg = fmt.Sprintf("%s (error %d)", msg, e.ErrorNumber)
	}
	return msg
}

// Bounds on what the client keeps of an answer's texts (issue 58): a
// slurmrestd answering HTTP 500 with 100 000 error entries cost serve
// +189 MiB, and the NodeSet's condition built of them was refused by the
// API server (past the CRD's 32 768 characters), so it never got one.
const (
	// maxEntries is how many entries of an answer's errors, and of its
	// warnings, are kept; the others are counted (and said to be left
	// out), decoded one at a time and dropped.
	maxEntries = 8
	// maxText bounds each text kept of an answer: an error's description,
	// error and source, a node's reason, the message of a Status.
	maxText = 512
	// maxReason bounds a node's reason: above the longest the NodeSet
	// controller writes (its prefix and 256 characters, up to 4 bytes
	// each), which it reads back to compare, so that its own reason is
	// never cut and rewritten forever.
	maxReason = 4096
	// maxStates bounds the states and flags kept of a node or a job, and
	// maxStateText each of them (Slurm's are short words: DRAIN).
	maxStates    = 32
	maxStateText = 64
)

// clip cuts s to at most n bytes, at a character's start, saying how many
// bytes were left out; the result does not share the long string's
// memory.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.Clone(s[:cut]) + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}

// clipList keeps at most n strings of l, each clipped to size.
func clipList(l []string, n, size int) []string {
	if len(l) > n {
		l = l[:n:n]
	}
	for i := range l {
		l[i] = clip(l[i], size)
	}
	return l
}

// bounded is the entry as kept: each text clipped to maxText.
func (e restError) bounded() restError {
	e.Description, e.Error, e.Source = clip(e.Description, maxText), clip(e.Error, maxText), clip(e.Source, maxText)
	return e
}

// restEnvelope is what every response carries besides its data.
type restEnvelope struct {
	Errors   []restError `json:"errors"`
	Warnings []restError `json:"warnings"`
	// ErrorsLeftOut and WarningsLeftOut count the entries past maxEntries.
	ErrorsLeftOut   int `json:"-"`
	WarningsLeftOut int `json:"-"`
}

// decodeEnvelopeField decodes errors and warnings, and skips any other key.
// (A function, not a method: as a method it would be promoted to every
// answer that embeds restEnvelope, and make it streamed with only these
// keys read.)
func decodeEnvelopeField(e *restEnvelope, dec *json.Decoder, key string) error {
	switch {
	case is(key, "errors"):
		return decodeEntries(dec, &e.Errors, &e.ErrorsLeftOut)
	case is(key, "warnings"):
		return decodeEntries(dec, &e.Warnings, &e.WarningsLeftOut)
	}
	return skipValue(dec, 1)
}

// decodeEntries decodes a list of errors or warnings an entry at a time,
// keeping maxEntries of them, bounded, and counting the others in left.
func decodeEntries(dec *json.Decoder, list *[]restError, left *int) error {
	*list, *left = nil, 0
	null, err := decodeEach(dec, func(v restError) error {
		if len(*list) >= maxEntries {
			*left++
			return nil
		}
		*list = append(*list, v.bounded())
		return nil
	})
	if !null && *list == nil {
		*list = []restError{}
	}
	return err
}

// is says an answer's key names a field, as json.Unmarshal matches them:
// whatever their case, under Unicode's simple folding.
func is(key, field string) bool { return strings.EqualFold(key, field) }

// streamed is an answer decoded key by key (decodeObject), so that its
// long lists are decoded an element at a time: json.Decoder.Decode of the
// whole answer would first buffer all of it, as json.Unmarshal needs it
// all, and the answer would be held twice, as bytes and as values.
type streamed interface {
	decodeField(dec *json.Decoder, key string) error
}

// decodeAnswer decodes one JSON value from r into out, and wants nothing
// after it but white space, as json.Unmarshal does. An out that is
// streamed is decoded key by key; anything else (a ping's answer, a few
// hundred bytes) at once.
func decodeAnswer(r io.Reader, out any) error {
	dec := json.NewDecoder(r)
	// Skipped numbers stay text: as float64s, a number out of its range
	// (1e400) would fail an answer json.Unmarshal accepts.
	dec.UseNumber()
	var err error
	if s, ok := out.(streamed); ok {
		err = decodeObject(dec, s)
	} else {
		err = dec.Decode(out)
	}
	if err != nil {
		return err
	}
	switch t, err := dec.Token(); {
	case err == io.EOF:
		return nil
	case err != nil:
		return err
	default:
		return fmt.Errorf("%v after the answer's end", t)
	}
}

// decodeObject decodes a JSON object key by key into s; null leaves s as
// it is, as json.Unmarshal does.
func decodeObject(dec *json.Decoder, s streamed) error {
	t, err := dec.Token()
	if err != nil || t == nil {
		return err
	}
	if t != json.Delim('{') {
		return fmt.Errorf("the answer is %v, not an object", t)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string) // a key is always a string here
		if err := s.decodeField(dec, key); err != nil {
			return fmt.Errorf("%q: %w", key, err)
		}
	}
	_, err = dec.Token() // the closing '}'
	return err
}

// decodeList decodes a JSON list one element at a time into *list,
// replacing what it held; null makes it nil, [] empty.
func decodeList[T any](dec *json.Decoder, list *[]T) error {
	*list = nil
	null, err := decodeEach(dec, func(v T) error { *list = append(*list, v); return nil })
	if !null && *list == nil {
		*list = []T{}
	}
	return err
}

// decodeEach decodes a JSON list one element at a time, handing each to
// use, and stops at the first error use returns; null says it was null.
func decodeEach[T any](dec *json.Decoder, use func(T) error) (null bool, err error) {
	t, err := dec.Token()
	if err != nil || t == nil {
		return t == nil && err == nil, err
	}
	if t != json.Delim('[') {
		return false, fmt.Errorf("%v where a list was expected", t)
	}
	for dec.More() {
		var v T
		if err := dec.Decode(&v); err != nil {
			return false, err
		}
		if err := use(v); err != nil {
			return false, err
		}
	}
	_, err = dec.Token() // the closing ']'
	return false, err
}

// maxNesting is how deeply encoding/json lets values nest (its scanner's
// maxNestingDepth): json.Unmarshal refuses an answer nested deeper, and so
// does the skip, which would otherwise accept any depth.
const maxNesting = 10000

// errTooDeep is the skip's refusal of an answer nested past maxNesting.
var errTooDeep = fmt.Errorf("the answer nests deeper than %d levels", maxNesting)

// skipValue reads past one JSON value a token at a time, so that a large
// value the client does not read is not buffered whole. outer is how many
// objects and lists around the value are open already (1 for a key of the
// answer's object). json.Decoder.Token keeps an entry per open bracket,
// and would keep 32 Mi of them for a 64 MiB answer of brackets (far past
// serve's budget: test/hostile, measured in docs/security.md): past
// maxNesting in all,
// the value is refused, as json.Unmarshal refuses it.
func skipValue(dec *json.Decoder, outer int) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			if depth++; outer+depth > maxNesting {
				return errTooDeep
			}
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// restNumber is Slurm's number object {"set":…,"infinite":…,"number":…};
// a plain number is accepted too.
type restNumber struct {
	Set      bool  `json:"set"`
	Infinite bool  `json:"infinite"`
	Number   int64 `json:"number"`
}

func (n *restNumber) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] != '{' {
		if string(b) == "null" {
			*n = restNumber{}
			return nil
		}
		var v int64
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*n = restNumber{Set: true, Number: v}
		return nil
	}
	type plain restNumber
	return json.Unmarshal(b, (*plain)(n))
}

// known says the number holds a finite value.
func (n restNumber) known() bool { return n.Set && !n.Infinite }

// stringList is a list of strings that older parsers print as one string.
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = stringList{s}
		return nil
	}
	var v []string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*l = v
	return nil
}

type restNode struct {
	Name   string     `json:"name"`
	State  stringList `json:"state"`
	Reason string     `json:"reason"`
}

// bounded is the node as kept: its reason clipped, its states bounded.
func (n restNode) bounded() restNode {
	n.Reason = clip(n.Reason, maxReason)
	n.State = clipList(n.State, maxStates, maxStateText)
	return n
}

// toState turns ["ALLOCATED","DRAIN"] into base "allocated" and flag DRAIN,
// as the command client reports them.
func (n restNode) toState() NodeState {
	s := NodeState{Name: n.Name, Base: "unknown", Reason: n.Reason}
	for i, x := range n.State {
		if i == 0 {
			// An empty state says no more than none: "unknown", never a
			// blank that prints as nothing.
			if x != "" {
				s.Base = strings.ToLower(x)
			}
			continue
		}
		s.Flags = append(s.Flags, strings.ToUpper(x))
	}
	return s
}

type restNodesResponse struct {
	restEnvelope
	Nodes      []restNode `json:"nodes"`
	LastUpdate restNumber `json:"last_update"`
	// node, when set, receives each node as it is decoded, and Nodes
	// stays empty: a refresh keeps the nodes' states, not the list.
	node func(restNode) error `json:"-"`
}

// maxNodes bounds the nodes one answer may list: a refresh keeps every
// node, and 64 MiB of the smallest nodes list 1.9 million of them, far
// past serve's budget (test/hostile; measured in docs/security.md). A kept
// node is about 220 bytes of live heap
// (TestRESTRefusesTooManyNodes), twice that with the collector's headroom,
// and the old cache lives on until the new one replaces it: 131 072 nodes
// stay within a quarter of the 256 MiB serve may grow by. They are more
// than Slurm has been run with: the largest cluster Slurm's Large Cluster
// Administration Guide names, Sequoia, had 98 304 nodes.
const maxNodes = 1 << 17

// errTooManyNodes refuses a node list past maxNodes.
var errTooManyNodes = fmt.Errorf("the answer lists more than %d nodes: refused (Slurm clusters are smaller)", maxNodes)

// decodeField decodes the value of one key of a nodes answer, the node
// list one node at a time, and refuses it past maxNodes: serve keeps each
// node (Refresh's cache) or the list (State), and each costs memory.
func (r *restNodesResponse) decodeField(dec *json.Decoder, key string) error {
	switch {
	case is(key, "nodes"):
		count := 0
		keep := r.node
		if keep == nil {
			r.Nodes = nil
			keep = func(n restNode) error { r.Nodes = append(r.Nodes, n); return nil }
		}
		null, err := decodeEach(dec, func(n restNode) error {
			if count++; count > maxNodes {
				return errTooManyNodes
			}
			return keep(n.bounded())
		})
		if r.node == nil && !null && r.Nodes == nil {
			r.Nodes = []restNode{} // [] is empty, not nil, as json.Unmarshal has it
		}
		return err
	case is(key, "last_update"):
		return dec.Decode(&r.LastUpdate)
	}
	return decodeEnvelopeField(&r.restEnvelope, dec, key)
}

type restJob struct {
	JobID     int64      `json:"job_id"`
	JobState  stringList `json:"job_state"`
	Nodes     string     `json:"nodes"`
	EndTime   restNumber `json:"end_time"`
	TimeLimit restNumber `json:"time_limit"`
}

type restJobsResponse struct {
	restEnvelope
	Jobs       []restJob  `json:"jobs"`
	LastUpdate restNumber `json:"last_update"`
	// job, when set, is handed each job in turn instead of Jobs: a
	// refresh keeps only the jobs whose end it needs.
	job func(restJob) error `json:"-"`
}

// decodeField decodes the value of one key of a jobs answer, the job list
// one job at a time.
func (r *restJobsResponse) decodeField(dec *json.Decoder, key string) error {
	switch {
	case is(key, "jobs"):
		if r.job != nil {
			_, err := decodeEach(dec, r.job)
			return err
		}
		return decodeList(dec, &r.Jobs)
	case is(key, "last_update"):
		return dec.Decode(&r.LastUpdate)
	}
	return decodeEnvelopeField(&r.restEnvelope, dec, key)
}

// restFailure is the answer to a request that failed: slurmrestd's errors,
// or the Status of the Kubernetes API server's service proxy.
type restFailure struct {
	restEnvelope
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

func (f *restFailure) decodeField(dec *json.Decoder, key string) error {
	switch {
	case is(key, "kind"):
		return dec.Decode(&f.Kind)
	case is(key, "message"):
		err := dec.Decode(&f.Message)
		f.Message = clip(f.Message, maxText)
		return err
	}
	return decodeEnvelopeField(&f.restEnvelope, dec, key)
}

// restNodeUpdate is the body of POST /node/NAME.
type restNodeUpdate struct {
	State  []string `json:"state"`
	Reason string   `json:"reason,omitempty"`
}

type restPingResponse struct {
	restEnvelope
	Pings []struct {
		Hostname string `json:"hostname"`
		Pinged   string `json:"pinged"`
	} `json:"pings"`
}
