package slurm

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// FeatureClient reads and sets a node's Slurm features (AvailableFeatures;
// the active ones are set alike: without a node features plugin Slurm
// wants them equal). Both clients implement it.
type FeatureClient interface {
	// NodeFeatures asks Slurm (not the cache) for the node's features.
	NodeFeatures(ctx context.Context, name string) ([]string, error)
	// SetNodeFeatures replaces the node's available and active features.
	SetNodeFeatures(ctx context.Context, name string, features []string) error
}

var (
	_ FeatureClient = &REST{}
	_ FeatureClient = &Commands{}
)

// splitFeatures turns Slurm's feature lists ("a,b", ["a","b"], "(null)")
// into names.
func splitFeatures(in []string) []string {
	var out []string
	for _, s := range in {
		for f := range strings.SplitSeq(s, ",") {
			if f = strings.TrimSpace(f); f != "" && f != "(null)" {
				out = append(out, f)
			}
		}
	}
	return out
}

type restFeaturesResponse struct {
	restEnvelope
	Nodes []struct {
		Name     string     `json:"name"`
		Features stringList `json:"features"`
	} `json:"nodes"`
}

// NodeFeatures implements FeatureClient.
func (r *REST) NodeFeatures(ctx context.Context, name string) ([]string, error) {
	var resp restFeaturesResponse
	if _, err := r.do(ctx, http.MethodGet, "node/"+url.PathEscape(name), nil, nil, &resp); err != nil {
		return nil, err
	}
	for _, n := range resp.Nodes {
		if n.Name == name {
			return splitFeatures(n.Features), nil
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrNodeNotFound, name)
}

type restFeaturesUpdate struct {
	Features []string `json:"features"`
	Active   []string `json:"features_act"`
}

// SetNodeFeatures implements FeatureClient.
func (r *REST) SetNodeFeatures(ctx context.Context, name string, features []string) error {
	if features == nil {
		features = []string{}
	}
	_, err := r.do(ctx, http.MethodPost, "node/"+url.PathEscape(name), nil, restFeaturesUpdate{Features: features, Active: features}, nil)
	return err
}

// NodeFeatures implements FeatureClient, with 'scontrol show node -o'.
func (c *Commands) NodeFeatures(ctx context.Context, name string) ([]string, error) {
	out, err := c.run(ctx, "scontrol", "show", "node", name, "-o")
	if err != nil {
		if strings.Contains(err.Error(), "not found") {
			return nil, fmt.Errorf("%w: %s", ErrNodeNotFound, name)
		}
		return nil, err
	}
	for f := range strings.FieldsSeq(string(out)) {
		if v, ok := strings.CutPrefix(f, "AvailableFeatures="); ok {
			return splitFeatures([]string{v}), nil
		}
	}
	return nil, nil
}

// SetNodeFeatures implements FeatureClient, with 'scontrol update'.
func (c *Commands) SetNodeFeatures(ctx context.Context, name string, features []string) error {
	v := strings.Join(features, ",")
	_, err := c.run(ctx, "scontrol", "update", "nodename="+name, "availablefeatures="+v, "activefeatures="+v)
	return err
}
