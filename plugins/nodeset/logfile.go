package nodeset

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// The logfile sidecar, as Slinky's operator renders it: slurmd writes its
// log to a FIFO at slurmdLogPath, on a memory-backed volume both
// containers mount, and a restartable init container (a sidecar, started
// before slurmd and kept running beside it) copies what arrives there to
// its own standard output, where 'kubectl logs -c logfile' and the
// cluster's log collection find it.
const (
	logfileVolume    = "slurm-logfile"
	logfileDir       = "/var/log/slurm"
	slurmdLogPath    = logfileDir + "/slurmd.log"
	logfileContainer = "logfile"
)

// logfileScript makes the FIFO unless it is there and copies it to
// standard output for ever; each time slurmd closes it, it is opened
// again. SIGTERM ends it at once.
const logfileScript = `set -eu
fifo="${SOCKET:-` + slurmdLogPath + `}"
trap 'exit 0' TERM
mkdir -p "$(dirname "$fifo")"
if [ ! -p "$fifo" ]; then rm -f "$fifo"; mkfifo -m 0666 "$fifo"; fi
while :; do cat "$fifo" || sleep 1; done
`

// addLogfile adds the sidecar spec.logfile describes, its volume and the
// slurmd container's mount of it. Without an image there is no sidecar
// (a container needs one): Slinky's chart always gives one. The fields of
// spec.logfile win over the sidecar's defaults (name, command, the SOCKET
// variable, the mount), as the operator merges them.
func addLogfile(ns *slinkyv1beta1.NodeSet, spec *corev1.PodSpec, slurmd string) {
	lf := ns.Spec.LogFile
	if lf.Image == "" {
		return
	}
	c := *lf.DeepCopy()
	if c.Name == "" {
		c.Name = logfileContainer
	}
	if len(c.Command) == 0 && len(c.Args) == 0 {
		c.Command = []string{"sh", "-c", logfileScript}
	}
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "SOCKET" }) {
		c.Env = append([]corev1.EnvVar{{Name: "SOCKET", Value: slurmdLogPath}}, c.Env...)
	}
	c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	addMount(&c, corev1.VolumeMount{Name: logfileVolume, MountPath: logfileDir})
	spec.InitContainers = append([]corev1.Container{c},
		slices.DeleteFunc(spec.InitContainers, func(x corev1.Container) bool { return x.Name == c.Name })...)
	if !slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == logfileVolume }) {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: logfileVolume,
			VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}})
	}
	for i := range spec.Containers {
		if spec.Containers[i].Name == slurmd {
			addMount(&spec.Containers[i], corev1.VolumeMount{Name: logfileVolume, MountPath: logfileDir})
		}
	}
}

// addMount mounts m in c unless c mounts that volume or path already.
func addMount(c *corev1.Container, m corev1.VolumeMount) {
	if slices.ContainsFunc(c.VolumeMounts, func(x corev1.VolumeMount) bool { return x.Name == m.Name || x.MountPath == m.MountPath }) {
		return
	}
	c.VolumeMounts = append(c.VolumeMounts, m)
}
