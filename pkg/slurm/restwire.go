package slurm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
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

// restEnvelope is what every response carries besides its data.
type restEnvelope struct {
	Errors   []restError `json:"errors"`
	Warnings []restError `json:"warnings"`
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

// toState turns ["ALLOCATED","DRAIN"] into base "allocated" and flag DRAIN,
// as the command client reports them.
func (n restNode) toState() NodeState {
	s := NodeState{Name: n.Name, Base: "unknown", Reason: n.Reason}
	for i, x := range n.State {
		if i == 0 {
			s.Base = strings.ToLower(x)
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
