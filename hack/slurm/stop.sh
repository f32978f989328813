#!/usr/bin/env bash
# Stops what hack/slurm/start.sh DIR started, by the daemons' pid files.
set -euo pipefail
dir=$1
for p in "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
  [[ -f $p ]] && kill "$(cat "$p")" 2>/dev/null || true
done
