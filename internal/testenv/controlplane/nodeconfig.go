package controlplane

import (
	"fmt"
	"path/filepath"
)

// cniConfig is the pod network: one bridge (made by prepareNode with the
// node's address, which the bridge plugin keeps as the pods' gateway) and
// host-local addresses. No masquerade and no port mapping: pods talk to the
// node and to each other only, so the plugins write no iptables rules.
func cniConfig() string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "kubectl-vc",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %q,
        "ranges": [[{"subnet": %q, "rangeStart": "10.244.0.10", "gateway": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
`, bridgeName, filepath.Join(nodeRoot, "cni", "ipam"), PodCIDR, NodeIP)
}

// containerdConfig is containerd 2's configuration (version 3) for the
// node. What matters on these machines:
//   - restrict_oom_score_adj: the kernel refuses to lower oom_score_adj
//     here, and CRI asks -998 for every sandbox; without it runc fails
//     with "can't get final child's PID from pipe";
//   - the sandbox image is pinned to one imported from bin/pause.tar:
//     nothing can be pulled;
//   - runc is Debian's (built with seccomp, which CRI's profiles need) and
//     keeps its state under the node's run directory, where CleanNode
//     finds containers a killed node left;
//   - NRI is off: it would open a socket in /var/run/nri, outside the
//     node's directories.
func containerdConfig(socket string) string {
	return fmt.Sprintf(`version = 3
root = %q
state = %q
disabled_plugins = ["io.containerd.nri.v1.nri"]

[grpc]
  address = %q

[ttrpc]
  address = %q

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = %q

[plugins."io.containerd.cri.v1.runtime"]
  restrict_oom_score_adj = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = %q
        Root = %q
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = [%q]
    conf_dir = %q
`,
		filepath.Join(nodeRoot, "containerd"), filepath.Join(nodeRun, "containerd"),
		socket, socket+".ttrpc", PauseImage, runcBinary, filepath.Join(nodeRun, "runc"),
		cniBinDir, filepath.Join(nodeRoot, "cni", "net.d"))
}

// kubeletConfig is the kubelet's configuration. These machines use cgroup
// v1 (which kubelet 1.35+ refuses unless told otherwise) and no systemd; the
// kubelet manages no QoS cgroups or node allocatable. Image garbage
// collection is off because an image removed here cannot be pulled back.
// The API server calls the kubelet with a client certificate from the
// control plane's CA, which the kubelet trusts.
func kubeletConfig(cpDir, socket string, port, healthPort int) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
containerRuntimeEndpoint: unix://%s
address: %s
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
podLogsDir: %s
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %s
authorization:
  mode: Webhook
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  nodefs.inodesFree: 1%%
  imagefs.available: 1%%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
resolvConf: /etc/resolv.conf
`, socket, NodeIP, port, healthPort, filepath.Join(nodeRoot, "pod-logs"), filepath.Join(cpDir, "ca.crt"))
}

// kubeProxyConfig runs kube-proxy in iptables mode. The conntrack settings
// are zero so that it leaves the machine's sysctls alone.
func kubeProxyConfig(kubeconfig string, healthPort, metricsPort int) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection:
  kubeconfig: %s
clusterCIDR: %s
healthzBindAddress: 127.0.0.1:%d
metricsBindAddress: 127.0.0.1:%d
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, kubeconfig, PodCIDR, healthPort, metricsPort)
}
