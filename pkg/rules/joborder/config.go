// Package joborder predicts the order in which Volcano's scheduler
// considers the podgroups waiting in a queue. The scheduler asks the
// job-order function of each plugin its configuration enables, tier by
// tier, and the first that tells two jobs apart decides; when none does,
// the older job comes first, and between two created in the same second
// the one with the smaller UID (Session.JobOrderFn in Volcano's
// pkg/scheduler/framework/session_plugins.go). This package holds that
// rule and the scheduler configuration it depends on, as pure functions
// over API objects: the commands read the objects, this package orders
// them.
package joborder

import (
	"fmt"
	"strings"
	"time"

	yaml "sigs.k8s.io/yaml/goyaml.v2"
)

// Where Volcano's installation keeps the scheduler's configuration: a
// ConfigMap in the scheduler's namespace, mounted as the file its
// --scheduler-conf names.
const (
	ConfigMapName = "volcano-scheduler-configmap"
	ConfigKey     = "volcano-scheduler.conf"
)

// The plugins that register a job-order function in Volcano's scheduler.
const (
	Priority = "priority"
	Gang     = "gang"
	DRF      = "drf"
	SLA      = "sla"
	TDM      = "tdm"
)

// volcanoPlugins are the plugins Volcano's scheduler ships; of these only
// the ones above order jobs. A name outside this list is a plugin built
// into another scheduler: whether and how it orders jobs is not known.
var volcanoPlugins = map[string]bool{
	"binpack": true, "capacity": true, "cdp": true, "conformance": true, "deviceshare": true,
	DRF: true, "extender": true, Gang: true, "network-topology-aware": true, "nodegroup": true,
	"nodeorder": true, "numa-aware": true, "overcommit": true, "pdb": true, "predicates": true,
	Priority: true, "proportion": true, "rescheduling": true, "resource-strategy-fit": true,
	"resourcequota": true, SLA: true, "task-topology": true, TDM: true, "usage": true,
}

// orders tells whether a plugin of Volcano's registers a job order.
func orders(name string) bool {
	switch name {
	case Priority, Gang, DRF, SLA, TDM:
		return true
	}
	return false
}

// SLAWaitingTime is the sla plugin's argument for every job's waiting
// time, and the older annotation of a podgroup's own; SLAWaitingTimeAnnotation
// is the newer one, read first.
const (
	SLAWaitingTime           = "sla-waiting-time"
	SLAWaitingTimeAnnotation = "volcano.sh/sla-waiting-time"
)

// Plugin is one plugin of a tier, with the switch that matters here.
// EnableJobOrder is never nil once parsed: the scheduler turns an unset
// switch on.
type Plugin struct {
	Name           string `json:"name"`
	EnableJobOrder *bool  `json:"enableJobOrder"`
	// SLAWaitingTime is the sla plugin's sla-waiting-time argument, as
	// written ("" when unset).
	SLAWaitingTime string `json:"slaWaitingTime,omitempty"`
	// OvercommitFactor is the overcommit plugin's overcommit-factor
	// argument, as written ("" when unset).
	OvercommitFactor string `json:"overcommitFactor,omitempty"`
}

// Tier is a list of plugins the scheduler asks in order.
type Tier struct {
	Plugins []Plugin `json:"plugins"`
}

// Config is the scheduler's configuration as far as job order goes.
type Config struct {
	Actions []string `json:"actions"`
	Tiers   []Tier   `json:"tiers"`
	// Source says where it was read: a ConfigMap, a file, or Volcano's
	// defaults.
	Source string `json:"source"`
	// Default is set when no configuration was found and Volcano's
	// defaults are assumed.
	Default bool `json:"default"`
}

// rawConfig is the scheduler's file, as its own reader reads it
// (YAML, keys case-sensitive).
type rawConfig struct {
	Actions string `yaml:"actions"`
	Tiers   []struct {
		Plugins []struct {
			Name           string                 `yaml:"name"`
			EnableJobOrder *bool                  `yaml:"enableJobOrder"`
			Arguments      map[string]interface{} `yaml:"arguments"`
		} `yaml:"plugins"`
	} `yaml:"tiers"`
}

// Parse reads a scheduler configuration as Volcano's scheduler does
// (UnmarshalSchedulerConf in pkg/scheduler/util.go): YAML, every enable
// switch left unset is on (ApplyPluginConfDefaults), actions are a comma
// separated list. A configuration the scheduler would refuse (not YAML,
// no actions) is an error: the scheduler then keeps the one it had, at
// start its defaults.
func Parse(data, source string) (Config, error) {
	var raw rawConfig
	if err := yaml.Unmarshal([]byte(data), &raw); err != nil {
		return Config{}, fmt.Errorf("%s is not a scheduler configuration: %s", source, firstLine(err.Error()))
	}
	c := Config{Source: source}
	for _, a := range strings.Split(raw.Actions, ",") {
		if a = strings.TrimSpace(a); a != "" {
			c.Actions = append(c.Actions, a)
		}
	}
	if len(c.Actions) == 0 {
		return Config{}, fmt.Errorf("%s names no actions: Volcano's scheduler refuses it and keeps its previous configuration", source)
	}
	for _, t := range raw.Tiers {
		var tier Tier
		for _, p := range t.Plugins {
			on := true
			if p.EnableJobOrder != nil {
				on = *p.EnableJobOrder
			}
			pl := Plugin{Name: p.Name, EnableJobOrder: &on}
			if v, ok := p.Arguments[SLAWaitingTime]; ok {
				pl.SLAWaitingTime = fmt.Sprint(v)
			}
			if v, ok := p.Arguments[OvercommitFactorArg]; ok {
				pl.OvercommitFactor = fmt.Sprint(v)
			}
			tier.Plugins = append(tier.Plugins, pl)
		}
		c.Tiers = append(c.Tiers, tier)
	}
	return c, nil
}

// Default is the configuration Volcano's scheduler runs with when it is
// given none (DefaultSchedulerConf in pkg/scheduler/util.go): actions
// enqueue, allocate, backfill; a first tier of priority, gang and
// conformance; a second of overcommit, drf, predicates, proportion and
// nodeorder; every switch on.
func Default() Config {
	tier := func(names ...string) Tier {
		var t Tier
		for _, n := range names {
			on := true
			t.Plugins = append(t.Plugins, Plugin{Name: n, EnableJobOrder: &on})
		}
		return t
	}
	return Config{
		Actions: []string{"enqueue", "allocate", "backfill"},
		Tiers: []Tier{
			tier(Priority, Gang, "conformance"),
			tier("overcommit", DRF, "predicates", "proportion", "nodeorder"),
		},
		Source:  "Volcano's default configuration",
		Default: true,
	}
}

// OvercommitFactorArg is the overcommit plugin's argument: how many times
// the cluster's allocatable the Inqueue groups' minResources may reach.
const OvercommitFactorArg = "overcommit-factor"

// Plugin returns the first plugin of that name in any tier, nil when the
// configuration does not enable it.
func (c Config) Plugin(name string) *Plugin {
	for _, t := range c.Tiers {
		for i := range t.Plugins {
			if t.Plugins[i].Name == name {
				return &t.Plugins[i]
			}
		}
	}
	return nil
}

// HasAction tells whether the scheduler runs the named action.
func (c Config) HasAction(name string) bool {
	for _, a := range c.Actions {
		if a == name {
			return true
		}
	}
	return false
}

// slaWaitingTime is the sla plugin's global waiting time: nil when unset
// or not a positive duration (the plugin then ignores it).
func (c Config) slaWaitingTime() *time.Duration {
	for _, t := range c.Tiers {
		for _, p := range t.Plugins {
			if p.Name == SLA && p.SLAWaitingTime != "" {
				return positiveDuration(p.SLAWaitingTime)
			}
		}
	}
	return nil
}

func positiveDuration(s string) *time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return nil
	}
	return &d
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
