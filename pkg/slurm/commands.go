package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// CommandsConfig says how to reach slurmctld with the Slurm client commands.
type CommandsConfig struct {
	// Conf is the slurm.conf the commands read (SLURM_CONF); empty uses
	// the commands' default (/etc/slurm/slurm.conf).
	Conf string
	// BinDir holds scontrol, sinfo and squeue; empty searches PATH.
	BinDir string
	// Timeout bounds one command; zero means 30 seconds.
	Timeout time.Duration
}

// Commands implements Client with scontrol, sinfo and squeue (Slurm 22.05+:
// sinfo and squeue print JSON; scontrol does the updates).
type Commands struct {
	cfg CommandsConfig
	nodeCache
	// noTopology: scontrol said it cannot update a node's topology (Slurm
	// before 25.05); it is not asked again.
	noTopology atomic.Bool
}

var _ Client = &Commands{}

// NewCommands returns a Client that runs the Slurm commands.
func NewCommands(cfg CommandsConfig) *Commands {
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	return &Commands{cfg: cfg}
}

// waitDelay is how long a killed command's output may stay open.
const waitDelay = 5 * time.Second

// Programs are the Slurm client commands Commands runs.
var Programs = []string{"scontrol", "sinfo", "squeue"}

// Check says whether the Slurm client commands can be found: in BinDir
// when it is set, else on PATH. It does not reach slurmctld (whose
// authentication, munge, is checked only by a real command).
func (c *Commands) Check() error {
	for _, name := range Programs {
		bin, where := name, "on PATH"
		if c.cfg.BinDir != "" {
			bin, where = filepath.Join(c.cfg.BinDir, name), "in "+c.cfg.BinDir
		}
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("%s not found %s", name, where)
		}
	}
	return nil
}

func (c *Commands) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return c.runEnv(ctx, nil, name, args...)
}

func (c *Commands) runEnv(ctx context.Context, env []string, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	bin := name
	if c.cfg.BinDir != "" {
		bin = filepath.Join(c.cfg.BinDir, name)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	// Killing the command at the timeout ends the wait only once its
	// output pipes close; a child it left behind could keep them open
	// and hold the sync that runs it. WaitDelay bounds that wait.
	cmd.WaitDelay = waitDelay
	cmd.Env = os.Environ()
	if c.cfg.Conf != "" {
		cmd.Env = append(cmd.Env, "SLURM_CONF="+c.cfg.Conf)
	}
	cmd.Env = append(cmd.Env, env...)
	// What a command prints is kept up to a bound, as a slurmrestd answer
	// is (a sinfo --json of the largest cluster is far below it); past it
	// the rest is read and dropped, so that the command can end, and the
	// call fails saying so.
	stdout, stderr := cappedBuffer{limit: maxAnswer}, cappedBuffer{limit: 64 << 10}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(string(stdout.buf.Bytes()[:min(stdout.buf.Len(), 300)]))
		}
		return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
	}
	if stdout.over {
		return nil, fmt.Errorf("%s %s: printed more than %d MiB: refused", name, strings.Join(args, " "), maxAnswer>>20)
	}
	return stdout.buf.Bytes(), nil
}

// cappedBuffer keeps the first limit bytes written to it and notes that
// more came. (Its buffer is a field, not embedded: an embedded
// bytes.Buffer's ReadFrom would be what io.Copy calls, past the limit.)
type cappedBuffer struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	keep := p[:min(len(p), max(c.limit-c.buf.Len(), 0))]
	c.over = c.over || len(keep) < len(p)
	c.buf.Write(keep)
	return len(p), nil
}

func (c *cappedBuffer) String() string { return c.buf.String() }

// sinfoNode is the part of sinfo --json's node we read (data parser v0.0.38
// in 22.05; the same names in later parsers).
type sinfoNode struct {
	Name       string   `json:"name"`
	State      any      `json:"state"`
	StateFlags []string `json:"state_flags"`
	Reason     any      `json:"reason"`
}

func (n sinfoNode) toState() NodeState {
	s := NodeState{Name: n.Name, Reason: stringish(n.Reason)}
	// 22.05 prints state as "idle" and flags apart; newer parsers print a
	// list such as ["IDLE","DRAIN"]. Accept both. Flags are compared in
	// upper case (Drain looks for "DRAIN"), whatever case they came in.
	switch v := n.State.(type) {
	case string:
		s.Base = strings.ToLower(v)
		for _, f := range n.StateFlags {
			s.Flags = append(s.Flags, strings.ToUpper(f))
		}
	case []any:
		for i, x := range v {
			if i == 0 {
				s.Base = strings.ToLower(fmt.Sprint(x))
				continue
			}
			s.Flags = append(s.Flags, strings.ToUpper(fmt.Sprint(x)))
		}
	}
	// No state, or an empty one, says no more than "unknown", as the REST
	// client reads it; never a blank that prints as nothing.
	if s.Base == "" {
		s.Base = "unknown"
	}
	return s
}

func stringish(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	default:
		return fmt.Sprint(x)
	}
}

func (c *Commands) query(ctx context.Context, args ...string) (map[string]NodeState, error) {
	out, err := c.run(ctx, "sinfo", append([]string{"--json"}, args...)...)
	if err != nil {
		return nil, err
	}
	nodes, err := decodeSinfo(out)
	if err != nil {
		return nil, fmt.Errorf("sinfo --json: %w", err)
	}
	return nodes, nil
}

// decodeSinfo reads sinfo --json's nodes by name. The answer is decoded a
// node at a time (decodeAnswer, as a slurmrestd answer is) and refused past
// maxNodes nodes, with the REST client's error: what sinfo printed is
// capped at 64 MiB, but 64 MiB of the smallest nodes are some 1.9 million,
// and serve keeps every node it reads (test/hostile measured a slurmrestd
// answer of them at 961 MiB over serve's idle RSS before that bound).
func decodeSinfo(out []byte) (map[string]NodeState, error) {
	var resp sinfoResponse
	if err := decodeAnswer(bytes.NewReader(out), &resp); err != nil {
		return nil, err
	}
	if resp.nodes == nil {
		resp.nodes = map[string]NodeState{}
	}
	return resp.nodes, nil
}

// sinfoResponse is sinfo --json's answer, decoded key by key (streamed):
// only its node list is read.
type sinfoResponse struct {
	nodes map[string]NodeState
}

func (r *sinfoResponse) decodeField(dec *json.Decoder, key string) error {
	if !is(key, "nodes") {
		return skipValue(dec, 1)
	}
	// A later "nodes" replaces an earlier one, as json.Unmarshal has it.
	r.nodes = map[string]NodeState{}
	count := 0
	_, err := decodeEach(dec, func(n sinfoNode) error {
		if count++; count > maxNodes {
			return errTooManyNodes
		}
		r.nodes[n.Name] = n.toState()
		return nil
	})
	return err
}

// Refresh implements Client.
func (c *Commands) Refresh(ctx context.Context) error {
	nodes, err := c.query(ctx)
	if err != nil {
		return err
	}
	c.replace(nodes, 0)
	return nil
}

// fresh asks Slurm for one node, bypassing the cache, and updates the cache.
func (c *Commands) fresh(ctx context.Context, name string) (NodeState, error) {
	nodes, err := c.query(ctx, "--nodes", name)
	if err != nil {
		return NodeState{}, err
	}
	s, ok := nodes[name]
	if !ok {
		return NodeState{}, fmt.Errorf("%w: %s", ErrNodeNotFound, name)
	}
	c.put(s)
	return s, nil
}

// Drain implements Client.
func (c *Commands) Drain(ctx context.Context, name, reason string) error {
	if reason == "" {
		// scontrol refuses a drain without a reason.
		reason = "drained by kubectl-vc"
	}
	// A drain replaces the reason of an earlier one: read the node first
	// (not the cache, which may predate an administrator's drain).
	if st, err := c.fresh(ctx, name); err != nil {
		if isNotFound(err) {
			return fmt.Errorf("%w: %s", ErrNodeNotFound, name)
		}
		return err
	} else if st.Drain() {
		return nil
	}
	_, err := c.run(ctx, "scontrol", "update", "nodename="+name, "state=drain", "reason="+reason)
	if err != nil && strings.Contains(err.Error(), "Invalid node name") {
		return fmt.Errorf("%w: %s", ErrNodeNotFound, name)
	}
	return err
}

// Undrain implements Client.
func (c *Commands) Undrain(ctx context.Context, name string) error {
	s, err := c.fresh(ctx, name)
	if err != nil {
		return err
	}
	// scontrol rejects "resume" for a node that is not drained; only resume
	// what we (or an admin) drained.
	if !s.Drain() {
		return nil
	}
	_, err = c.run(ctx, "scontrol", "update", "nodename="+name, "state=resume")
	return err
}

// State returns the node's current state, asking Slurm rather than the cache.
func (c *Commands) State(ctx context.Context, name string) (NodeState, error) {
	return c.fresh(ctx, name)
}

// IsDrained implements Client.
func (c *Commands) IsDrained(ctx context.Context, name string) (bool, error) {
	s, err := c.fresh(ctx, name)
	if err != nil {
		if isNotFound(err) {
			return true, nil
		}
		return false, err
	}
	return s.Drained(), nil
}

func isNotFound(err error) bool {
	return err != nil && (strings.Contains(err.Error(), ErrNodeNotFound.Error()) ||
		strings.Contains(err.Error(), "Invalid node name"))
}

// JobEndDeadline implements Client.
func (c *Commands) JobEndDeadline(ctx context.Context, name string) (time.Time, error) {
	// Plain output, not --json: squeue 22.05 ignores its filters with --json.
	// TZ=UTC makes the printed times unambiguous.
	out, err := c.runEnv(ctx, []string{"TZ=UTC"}, "squeue", "--noheader", "--states=RUNNING,COMPLETING",
		"--nodelist="+name, "--format=%e")
	if err != nil {
		if isNotFound(err) {
			return time.Time{}, nil
		}
		return time.Time{}, err
	}
	var latest time.Time
	for _, line := range strings.Fields(string(out)) {
		t, err := time.ParseInLocation("2006-01-02T15:04:05", line, time.UTC)
		if err != nil {
			continue // "N/A" or "Unknown": no limit known
		}
		if t.After(latest) {
			latest = t
		}
	}
	return latest, nil
}
