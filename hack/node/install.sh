#!/usr/bin/env bash
# Installs the Debian packages the local cluster's node runs: runc (built
# with seccomp, which CRI's default profiles need), the CNI plugins (bridge,
# host-local, portmap, loopback), iptables for kube-proxy and conntrack.
# Skips the install when all are present. Needs root (or sudo).
set -euo pipefail
need=()
[[ -x /usr/sbin/runc ]] || need+=(runc)
[[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback && -x /usr/lib/cni/portmap ]] || need+=(containernetworking-plugins)
command -v iptables >/dev/null 2>&1 || need+=(iptables)
command -v conntrack >/dev/null 2>&1 || need+=(conntrack)
if [[ ${#need[@]} -eq 0 ]]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "missing ${need[*]}: install runc, the CNI plugins, iptables and conntrack with your package manager" >&2
  exit 1
fi
sudo=""
[[ $(id -u) -eq 0 ]] || sudo=sudo
if ! apt-cache policy runc 2>/dev/null | grep -q 'Candidate: [0-9]'; then
  $sudo apt-get update
fi
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${need[@]}"
