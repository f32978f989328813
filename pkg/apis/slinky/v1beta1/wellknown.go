package v1beta1

// More of Slinky's well-known keys (api/v1beta1/well_known.go of
// SlinkyProject/slurm-operator), spelled as its operator writes and reads
// them.
const (
	// LabelCluster names, on a worker pod, the Slinky Controller (the Slurm
	// cluster) its NodeSet belongs to: the NodeSet's spec.controllerRef.
	LabelCluster = "slinky.slurm.net/cluster"

	// AnnotationDefaultContainer is kubectl's: the container 'kubectl
	// logs' and 'kubectl exec' pick when none is named. Worker pods name
	// slurmd.
	AnnotationDefaultContainer = "kubectl.kubernetes.io/default-container"

	// AnnotationNodeCordonReason, on a Kubernetes node, is the Slurm drain
	// reason of the NodeSet pods on it when the node is cordoned.
	AnnotationNodeCordonReason = "nodeset.slinky.slurm.net/node-cordon-reason"
	// AnnotationNodeTopologySpec, on a Kubernetes node, is the Slurm
	// dynamic topology of the Slurm nodes of the NodeSet pods on it (e.g.
	// "topo-switch:s2,topo-block:b2"); it is copied to those pods.
	AnnotationNodeTopologySpec = "topology.slinky.slurm.net/spec"
	// AnnotationNodeFeaturesSpec, on a Kubernetes node, is a
	// comma-separated list of Slurm node features for the Slurm nodes of
	// the NodeSet pods on it; each is set with NodeFeaturePrefix.
	AnnotationNodeFeaturesSpec = "features.slinky.slurm.net/spec"
	// AnnotationNodeHostnameOverride, on a Kubernetes node, is the hostname
	// (the Slurm node name) of a DaemonSet-mode NodeSet pod on it.
	AnnotationNodeHostnameOverride = "nodeset.slinky.slurm.net/hostname-override"
	// NodeFeaturePrefix prefixes the Slurm node features taken from
	// AnnotationNodeFeaturesSpec: features with it are the controller's,
	// all others are left as they are.
	NodeFeaturePrefix = "k8s/"

	// FinalizerNodeSetReservation holds a NodeSet with a ScheduledUpdate
	// until its Slurm reservation is deleted.
	FinalizerNodeSetReservation = "nodeset.slinky.slurm.net/reservation"
	// ReservationPrefix, then the NodeSet's name, names the Slurm
	// reservation of a ScheduledUpdate window, as Slinky's operator names
	// it.
	ReservationPrefix = "SlurmOperatorMaint-"
)

// The worker pods' ssh (spec.ssh), as Slinky's operator names its parts
// (internal/builder/common/const.go there).
const (
	// AnnotationSshdConfHash, on a worker pod, is the SHA-256 (hex) of the
	// sshd_config the pod mounts (of nothing when it mounts none).
	AnnotationSshdConfHash = "slinky.slurm.net/sshd-conf-hash"
	// AnnotationSssdConfHash, on a worker pod, is the SHA-256 (hex) of the
	// sssd.conf the pod mounts (of nothing when it mounts none).
	AnnotationSssdConfHash = "slinky.slurm.net/sssd-conf-hash"
	// SSHConfigSuffix, after the NodeSet's name, names the ConfigMap of
	// its workers' sshd_config.
	SSHConfigSuffix = "-ssh-config"
)
