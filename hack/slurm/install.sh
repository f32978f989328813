#!/usr/bin/env bash
# Installs the Slurm pieces the NodeSet tests run (Debian bookworm ships Slurm
# 22.05): slurmctld, the client commands and munge. slurmd is not needed: the
# tests only talk to the controller. Skips the install when all are present.
# Then builds (once) the chroots with Slurm 24.11 and 26.05 and slurmrestd
# that the REST tests run (hack/slurm/chroot.sh; only as root).
set -euo pipefail
need=()
for b in munged slurmctld scontrol sinfo squeue salloc scancel; do
  command -v "$b" >/dev/null 2>&1 || need+=("$b")
done
if [[ ${#need[@]} -gt 0 ]]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "missing ${need[*]}: install Slurm (slurmctld, slurm-client, munge) with your package manager" >&2
    exit 1
  fi
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo=sudo
  if ! apt-cache policy slurmctld 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    $sudo apt-get update
  fi
  # The packages' own services are not started (no systemd in CI containers);
  # tests start private daemons (internal/testenv/slurmtest).
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends slurmctld slurm-client munge
fi
here=$(cd "$(dirname "$0")" && pwd)
"$here/chroot.sh" trixie
"$here/chroot.sh" forky
