package slurm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ErrTopologyUnsupported is wrapped by the error of a Slurm whose
// interface cannot set a node's topology: dynamic topology came with Slurm
// 25.05 (scontrol's "topology=" and slurmrestd's topology_str from REST
// v0.0.43 on).
var ErrTopologyUnsupported = errors.New("node topology cannot be written")

// TopologyClient reads and sets the topology of a Slurm node, as Slinky's
// operator sets it from a Kubernetes node's annotation: a list of
// <topology>:<switch or block> (e.g. "default:s1" or
// "topo-switch:s0,topo-block:b0"), "" for none. Both clients implement it.
type TopologyClient interface {
	// NodeTopology asks Slurm (not the cache) for the node's topology.
	NodeTopology(ctx context.Context, name string) (string, error)
	// SetNodeTopology sets it; Slurm refuses a topology or unit its
	// topology configuration does not define.
	SetNodeTopology(ctx context.Context, name, spec string) error
}

// restWritesTopology: topology_str in a node update, and topology in a
// node, are read from v0.0.43 on. v0.0.42 (Slurm 24.11, and still served
// by 26.05) answers an update carrying it with HTTP 200 and a warning
// "Ignoring unknown field" (found by trying, 2026-11-28), so the client
// must not rely on the answer.
func restWritesTopology(version string) bool { return restWritesReservations(version) }

func (r *REST) topologySupported(ctx context.Context) error {
	v, err := r.Version(ctx)
	if err != nil {
		return err
	}
	if !restWritesTopology(v) {
		return fmt.Errorf("%w: slurmrestd at %s speaks REST %s, which has no node topology (v0.0.43 and later, Slurm 25.05 on, have)",
			ErrTopologyUnsupported, r.base, v)
	}
	return nil
}

type restTopologyResponse struct {
	restEnvelope
	Nodes []struct {
		Name     string `json:"name"`
		Topology string `json:"topology"`
	} `json:"nodes"`
}

// NodeTopology implements TopologyClient.
func (r *REST) NodeTopology(ctx context.Context, name string) (string, error) {
	if err := r.topologySupported(ctx); err != nil {
		return "", err
	}
	var resp restTopologyResponse
	if _, err := r.do(ctx, http.MethodGet, "node/"+url.PathEscape(name), nil, nil, &resp); err != nil {
		return "", err
	}
	for _, n := range resp.Nodes {
		if n.Name == name {
			return n.Topology, nil
		}
	}
	return "", fmt.Errorf("%w: %s", ErrNodeNotFound, name)
}

type restTopologyUpdate struct {
	TopologyStr string `json:"topology_str"`
}

// SetNodeTopology implements TopologyClient. An empty spec takes the node
// out of every topology unit.
func (r *REST) SetNodeTopology(ctx context.Context, name, spec string) error {
	if err := r.topologySupported(ctx); err != nil {
		return err
	}
	_, err := r.do(ctx, http.MethodPost, "node/"+url.PathEscape(name), nil, restTopologyUpdate{TopologyStr: spec}, nil)
	var ae *APIError
	if errors.As(err, &ae) && ae.hasError(errNodeInvalid) {
		return fmt.Errorf("%w: %s", ErrNodeNotFound, name)
	}
	return err
}

// NodeTopology implements TopologyClient, with 'scontrol show node -o':
// its Topology= field ("" when it shows none).
func (c *Commands) NodeTopology(ctx context.Context, name string) (string, error) {
	if c.noTopology.Load() {
		return "", c.errNoTopology()
	}
	out, err := c.run(ctx, "scontrol", "show", "node", name, "-o")
	if err != nil {
		if isNotFound(err) || strings.Contains(err.Error(), "not found") {
			return "", fmt.Errorf("%w: %s", ErrNodeNotFound, name)
		}
		return "", err
	}
	for f := range strings.FieldsSeq(string(out)) {
		if v, ok := strings.CutPrefix(f, "Topology="); ok {
			if v == "(null)" {
				v = ""
			}
			return v, nil
		}
	}
	return "", nil
}

// SetNodeTopology implements TopologyClient, with 'scontrol update
// topology='. Slurm before 25.05 answers "Update of this parameter is not
// supported" (22.05, found by trying): ErrTopologyUnsupported, remembered.
func (c *Commands) SetNodeTopology(ctx context.Context, name, spec string) error {
	if c.noTopology.Load() {
		return c.errNoTopology()
	}
	_, err := c.run(ctx, "scontrol", "update", "nodename="+name, "topology="+spec)
	switch {
	case err == nil:
		return nil
	case strings.Contains(err.Error(), "Update of this parameter is not supported"):
		c.noTopology.Store(true)
		return c.errNoTopology()
	case strings.Contains(err.Error(), "Invalid node name"):
		return fmt.Errorf("%w: %s", ErrNodeNotFound, name)
	}
	return err
}

func (c *Commands) errNoTopology() error {
	return fmt.Errorf("%w: scontrol cannot update a node's topology (Slurm 25.05 and later can)", ErrTopologyUnsupported)
}

var (
	_ TopologyClient = &REST{}
	_ TopologyClient = &Commands{}
)
