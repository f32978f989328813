// Package controlplane starts a real local Kubernetes for the tests and for
// 'make cluster-up': etcd and kube-apiserver on loopback by default, plus
// kube-controller-manager and kube-scheduler (Level Controllers), plus one
// node that runs pods with containerd, runc, CNI, kubelet and kube-proxy
// (Level Node). The binaries are built from their Go modules by
// hack/controlplane/build.sh and hack/node/build.sh into the repository's
// bin/ directory; runc and the CNI plugins are Debian's.
//
// Authentication is on (a static token file with an admin in
// system:masters and an unprivileged user) and so is RBAC, so that tests
// see the same "forbidden" answers a user of a real cluster would.
//
// The Node level, and why it looks the way it does:
//
//   - Network. A bridge kvc0 with the node's address 10.244.0.1/24 is made first; the API
//     server listens on that address (not loopback), so pods reach it through the kubernetes
//     Service (10.96.0.1), which kube-proxy (iptables mode) leads to the API server's advertised
//     address. Pods get addresses from 10.244.0.0/24 (CNI bridge + host-local, no masquerade, no
//     port mapping). The serving certificate names both addresses.
//   - containerd (config version 3, in /var/lib/kubectl-vc-node and /run/kubectl-vc-node):
//     restrict_oom_score_adj = true, because these machines refuse to lower oom_score_adj and CRI
//     asks for -998 for every sandbox (runc then fails with "can't get final child's PID from
//     pipe"); the sandbox image is pinned to docker.io/kubectl-vc/pause:local, imported from
//     bin/pause.tar; NRI is off.
//   - kubelet: failCgroupV1: false (these machines are cgroup v1, which kubelet 1.35+ refuses
//     otherwise), cgroupDriver: cgroupfs, no QoS cgroups or node allocatable, image garbage
//     collection off (an image removed here cannot be pulled back). The API server calls it with a
//     client certificate from the cluster's CA (kubectl logs works).
//   - One at a time. kube-proxy's rules and the bridge are machine-wide, so a node takes the lock
//     /run/kubectl-vc-node.lock; a second start waits for the first to stop. Every start and stop
//     (and make cluster-down) runs controlplane.CleanNode: containers (through runc), the node's
//     processes, mounts under its directories and the pods' network namespaces, kube-proxy's iptables
//     rules, the bridge and the directories. TestNodeLevel proves a stop leaves none of them,
//     looking while it still holds the lock (StopHoldingNodeLock), so no other node can be there.
//   - Images for pods: cp.ImportImage(tarball) (ctr -n k8s.io images import); pods use them with
//     imagePullPolicy: IfNotPresent or Never.
package controlplane
