package nodeset

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// The slurmd container and the pod base of a NodeSet whose Slinky
// Controller is known, as Slinky's operator renders them
// (internal/builder/workerbuilder of SlinkyProject/slurm-operator): slurmd
// runs configless (-Z) and fetches slurm.conf from the Controller's
// slurmctld (--conf-server), mounts the Slurm auth key from the Secret the
// Controller names, and is probed on slurmd's /livez and /readyz. The
// template and spec.slurmd are merged over that base with Kubernetes'
// strategic merge patch, as the operator merges them, so a template value
// wins wherever the operator lets it win. What we do differently, and why,
// is listed in docs/nodeset.md ("What differs from Slinky's operator") and
// in TestOperatorPodFieldByField.
//
// Without a Controller (none named, none in the cache, Slinky's kinds not
// served: a NodeSet run with --slurm-rest-url or Slurm's commands) the pod
// is the template as written, with spec.slurmd and --conf <extraConf>: the
// NodeSet's author then configures slurmd themselves.

// Paths, names and ports of the operator's worker pod.
const (
	slurmEtcVolume  = "slurm-etc"
	slurmEtcDir     = "/etc/slurm"
	slurmKeyFile    = "slurm.key"
	slurmdPort      = 6818
	slurmctldPort   = 6817
	slurmdLivez     = "/livez"
	slurmdReadyz    = "/readyz"
	defaultDomain   = "cluster.local"
	workerTaintKey  = "nodeset.slinky.slurm.net/worker"
	terminateReason = reasonPrefix + "pod is terminating"
)

// workerToleration lets the pods on nodes tainted for Slurm workers only.
var workerToleration = corev1.Toleration{Key: workerTaintKey, Operator: corev1.TolerationOpEqual, Effect: corev1.TaintEffectNoExecute}

// podTolerations are the tolerations of the pods of ns, as renderBase
// makes them without the cost of a merge: the template's list replaces
// the base's whole (tolerations are not merged by key).
func podTolerations(ns *slinkyv1beta1.NodeSet, b *podBase) []corev1.Toleration {
	if t := ns.Spec.Template.PodSpec.Tolerations; b == nil || len(t) > 0 {
		return t
	}
	return []corev1.Toleration{workerToleration}
}

// podBase is what a NodeSet's pods take from outside the NodeSet: the
// Controller its controllerRef names and the cluster's DNS domain. A nil
// podBase renders the pod as written.
type podBase struct {
	controller    *slinkyv1beta1.Controller
	clusterDomain string
}

// podBaseFor returns the pod base of ns: its Controller from the informer
// cache, in the NodeSet's namespace only (as the operator looks it up), or
// nil when there is none. It never reads a Controller from the API server:
// a NodeSet naming one that does not exist costs a cache miss (and, at
// most once per CRDPoll, a discovery call while Slinky's kinds are not
// served).
func (c *Controller) podBaseFor(ctx context.Context, ns *slinkyv1beta1.NodeSet) *podBase {
	if ns.Spec.ControllerRef.Name == "" {
		return nil
	}
	if c.source.slinky.Load() == nil {
		c.laterSlinky(ctx) // Slinky installed after serve started
	}
	r := c.source.slinky.Load()
	if r == nil {
		return nil
	}
	ctrl, err := r.controllers.Controllers(ns.Namespace).Get(ns.Spec.ControllerRef.Name)
	if err != nil {
		return nil
	}
	return &podBase{controller: ctrl, clusterDomain: c.clusterDomain}
}

// clusterDomainFrom reads the cluster's DNS domain from a resolv.conf, as
// the operator finds it: the search domain after "svc." (a pod's resolv.conf
// searches <namespace>.svc.<domain> svc.<domain> <domain>); cluster.local
// when there is none (serve outside a cluster).
func clusterDomainFrom(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return defaultDomain
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "search" {
			continue
		}
		for _, d := range fields[1:] {
			if after, ok := strings.CutPrefix(d, "svc."); ok && after != "" && len(validation.IsDNS1123Subdomain(after)) == 0 {
				return after
			}
		}
	}
	return defaultDomain
}

// podSpecOf is the spec renderPod starts from: the operator's base with
// the template merged over it and the slurmd container in (based true), or
// the template as written without a base or when the merge fails.
func podSpecOf(ns *slinkyv1beta1.NodeSet, b *podBase) (corev1.PodSpec, bool) {
	if b != nil {
		if spec, ok := renderBase(ns, b); ok {
			return spec, true
		}
	}
	return *ns.Spec.Template.PodSpec.DeepCopy(), false
}

// renderBase builds the pod spec of ns from the operator's base and the
// template. ok is false when the merge fails (it cannot for a template the
// API server stored; the caller then renders the template as written).
func renderBase(ns *slinkyv1beta1.NodeSet, b *podBase) (corev1.PodSpec, bool) {
	tmpl := ns.Spec.Template.PodSpec.DeepCopy()
	volumes := []corev1.Volume{{Name: logfileVolume,
		VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}}
	ref := b.controller.Spec.SlurmKeyRef
	hasKey := ref != nil && ref.Name != "" && ref.Key != ""
	if hasKey {
		volumes = append([]corev1.Volume{{Name: slurmEtcVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			DefaultMode: ptr.To[int32](0o600),
			Sources: []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name},
				Items:                []corev1.KeyToPath{{Key: ref.Key, Path: slurmKeyFile}},
			}}},
		}}}}, volumes...)
	}
	base := corev1.PodSpec{
		AutomountServiceAccountToken: ptr.To(false),
		EnableServiceLinks:           ptr.To(false),
		// Ours is the NodeSet's own headless Service (renderPod sets it),
		// so the search domain is that Service's.
		DNSConfig: &corev1.PodDNSConfig{Searches: []string{
			fmt.Sprintf("%s.%s.svc.%s", serviceName(ns), ns.Namespace, b.clusterDomain)}},
		Volumes:     volumes,
		Tolerations: []corev1.Toleration{workerToleration},
	}
	// Containers are not merged by name as the rest is: the operator
	// appends the template's to its own (renderPod does).
	patch := *tmpl
	patch.Containers, patch.InitContainers = nil, nil
	// A template volume replaces ours of its name whole: merged field by
	// field, two volume sources would make one invalid volume.
	base.Volumes = slices.DeleteFunc(base.Volumes, func(v corev1.Volume) bool {
		return slices.ContainsFunc(patch.Volumes, func(t corev1.Volume) bool { return t.Name == v.Name })
	})
	spec, err := mergeOver(&base, &patch)
	if err != nil {
		return corev1.PodSpec{}, false
	}
	slurmd, err := slurmdContainer(ns, b, hasKey)
	if err != nil {
		return corev1.PodSpec{}, false
	}
	// A template container named like slurmd replaces it (the operator
	// would list two containers of one name, a pod the API server refuses),
	// and without an image there is no slurmd container (a container needs
	// one), as without a Controller.
	spec.Containers = tmpl.Containers
	if slurmd.Image != "" && !slices.ContainsFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == slurmd.Name }) {
		spec.Containers = append([]corev1.Container{*slurmd}, spec.Containers...)
	}
	spec.InitContainers = tmpl.InitContainers
	return *spec, true
}

// slurmdContainer is the operator's slurmd container with spec.slurmd
// merged over it: spec.slurmd's args follow the operator's, its probe
// handlers replace the operator's, and the rest is a strategic merge.
// Without a key Secret (a Controller without slurmKeyRef) it mounts none:
// the operator would mount a Secret of no name, which the API server refuses.
func slurmdContainer(ns *slinkyv1beta1.NodeSet, b *podBase, hasKey bool) (*corev1.Container, error) {
	cpus, memMiB := podLimits(ns)
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString(slinkyv1beta1.AppName)}}}
	}
	live, start := probe(slurmdLivez), probe(slurmdLivez)
	live.FailureThreshold, live.PeriodSeconds = 6, 10
	start.FailureThreshold, start.PeriodSeconds = 6, 10
	var mounts []corev1.VolumeMount
	if hasKey {
		mounts = append(mounts, corev1.VolumeMount{Name: slurmEtcVolume, MountPath: slurmEtcDir, ReadOnly: true})
	}
	mounts = append(mounts, corev1.VolumeMount{Name: logfileVolume, MountPath: logfileDir})
	base := corev1.Container{
		Name: slinkyv1beta1.AppName,
		Args: slurmdArgs(ns, b.controller),
		Env: []corev1.EnvVar{
			// slurmd's image registers the node in this topology; the
			// controller copies it from the Kubernetes node (topology.go).
			{Name: "SLINKY_TOPOLOGY", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
				FieldPath: fmt.Sprintf("metadata.annotations['%s']", slinkyv1beta1.AnnotationNodeTopologySpec)}}},
			{Name: "POD_CPUS", Value: strconv.FormatInt(cpus, 10)},
			{Name: "POD_MEMORY", Value: strconv.FormatInt(memMiB, 10)},
		},
		Ports:          []corev1.ContainerPort{{Name: slinkyv1beta1.AppName, ContainerPort: slurmdPort, Protocol: corev1.ProtocolTCP}},
		StartupProbe:   start,
		LivenessProbe:  live,
		ReadinessProbe: probe(slurmdReadyz),
		SecurityContext: &corev1.SecurityContext{
			Privileged:   ptr.To(true),
			Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"BPF", "NET_ADMIN", "SYS_ADMIN", "SYS_NICE"}},
		},
		// The node goes DOWN as its pod ends, so slurmctld schedules
		// nothing more on it; the reason carries our prefix, which this
		// controller resumes.
		Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{
			"/usr/bin/sh", "-c", fmt.Sprintf("scontrol update nodename=$(hostname) state=down reason='%s';", terminateReason)}}}},
		VolumeMounts: mounts,
	}
	over := ns.Spec.Slurmd.DeepCopy()
	// spec.slurmd's variable replaces ours of its name whole: merged, a
	// value and a valueFrom would make one invalid variable.
	base.Env = slices.DeleteFunc(base.Env, func(e corev1.EnvVar) bool {
		return slices.ContainsFunc(over.Env, func(o corev1.EnvVar) bool { return o.Name == e.Name })
	})
	base.Args = append(base.Args, over.Args...)
	over.Args = nil
	for _, p := range []struct{ base, over *corev1.Probe }{
		{base.LivenessProbe, over.LivenessProbe}, {base.ReadinessProbe, over.ReadinessProbe}, {base.StartupProbe, over.StartupProbe}} {
		if p.over != nil {
			p.base.ProbeHandler = p.over.ProbeHandler
		}
	}
	c, err := mergeOver(&base, over)
	if err != nil {
		return nil, err
	}
	c.Name = slurmdName(ns)
	return c, nil
}

// slurmdArgs: configless, the Controller's slurmctld, and the node's
// registration parameters, as the operator passes them.
func slurmdArgs(ns *slinkyv1beta1.NodeSet, ctrl *slinkyv1beta1.Controller) []string {
	args := []string{"-Z"}
	if server := confServer(ctrl); server != "" {
		args = append(args, "--conf-server", server)
	}
	return append(args, "--conf", slurmdConf(ns))
}

// confServer is where slurmd fetches its configuration: the Controller's
// slurmctld Service, or its external host and port. An external address
// that is not a host name or IP address with a port gives "" (no
// --conf-server: slurmd then looks for slurmctld in DNS SRV records)
// rather than an argument slurmd cannot parse.
func confServer(ctrl *slinkyv1beta1.Controller) string {
	if !ctrl.Spec.External {
		return fmt.Sprintf("%s-controller.%s:%d", ctrl.Name, ctrl.Namespace, slurmctldPort)
	}
	e := ctrl.Spec.ExternalConfig
	if e == nil || e.Port < 1 || e.Port > 65535 {
		return ""
	}
	if net.ParseIP(e.Host) == nil && len(validation.IsDNS1123Subdomain(e.Host)) != 0 {
		return ""
	}
	return net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
}

// slurmdConf is the --conf value, quoted as the operator quotes it (slurmd's
// image expands $SLINKY_TOPOLOGY in it): the node's features (the Slurm
// nodeset's name and extraConf's Feature/Features), its topology, and the
// other Key=Value pairs of extraConf, keys title-cased, sorted. An
// extraConf that is not Key=Value pairs is ignored but for nothing, as the
// operator ignores it.
func slurmdConf(ns *slinkyv1beta1.NodeSet) string {
	conf := map[string]string{"Topology": `'"$SLINKY_TOPOLOGY"'`}
	features := []string{slurmNodeSetName(ns)}
	if extra, ok := parseExtraConf(ns.Spec.ExtraConf); ok {
		for k, vals := range extra {
			if k == "Feature" || k == "Features" {
				features = append(features, vals...)
				continue
			}
			conf[k] = strings.Join(vals, ",")
		}
	}
	conf["Features"] = strings.Join(sortedUnique(features), ",")
	pairs := make([]string, 0, len(conf))
	for k, v := range conf {
		pairs = append(pairs, k+"="+v)
	}
	sort.Strings(pairs)
	return "'" + strings.Join(pairs, " ") + "'"
}

// parseExtraConf splits extraConf into Key=v1,v2 pairs; false when a word
// has no "=".
func parseExtraConf(s string) (map[string][]string, bool) {
	out := map[string][]string{}
	title := cases.Title(language.English)
	for _, word := range strings.Fields(s) {
		k, v, ok := strings.Cut(word, "=")
		if !ok {
			return nil, false
		}
		k = title.String(k)
		out[k] = append(out[k], strings.Split(v, ",")...)
	}
	return out, true
}

func sortedUnique(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// slurmNodeSetName is the nodeset's name in Slurm, its first feature: the
// template's hostname prefix without its dashes (the chart's "slinky-"
// gives "slinky"), else the NodeSet's name.
func slurmNodeSetName(ns *slinkyv1beta1.NodeSet) string {
	if f := strings.Fields(ns.Spec.Template.PodSpec.Hostname); len(f) > 0 {
		return strings.Trim(f[0], "-")
	}
	return ns.Name
}

// podLimits are POD_CPUS and POD_MEMORY (MiB): slurmd's limits where set,
// else the pod-level ones, else 0.
func podLimits(ns *slinkyv1beta1.NodeSet) (cpus, memMiB int64) {
	var mem int64
	if r := ns.Spec.Template.PodSpec.Resources; r != nil {
		cpus, mem = r.Limits.Cpu().Value(), r.Limits.Memory().Value()
	}
	lim := ns.Spec.Slurmd.Resources.Limits
	if v := lim.Cpu().Value(); lim != nil && v != 0 {
		cpus = v
	}
	if v := lim.Memory().Value(); lim != nil && v != 0 {
		mem = v
	}
	return cpus, mem / 1024 / 1024
}
