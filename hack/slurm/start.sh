#!/usr/bin/env bash
# Starts a private munged + slurmctld on loopback for manual experiments,
# with the nodes named on the command line (the hostnames of NodeSet pods):
#   hack/slurm/start.sh DIR worker-0 worker-1 worker-2
# Then: export SLURM_CONF=DIR/slurm.conf; sinfo -N. Stop: hack/slurm/stop.sh DIR
# No slurmd runs: nodes are declared IDLE and SlurmdTimeout=0 keeps them so.
set -euo pipefail
dir=$(mkdir -p "$1" && cd "$1" && pwd); shift
[[ $# -gt 0 ]] || { echo "usage: $0 DIR NODE..." >&2; exit 2; }
nodes=$(IFS=,; echo "$*")
mkdir -p "$dir/munge" "$dir/state" "$dir/spool"; chmod 700 "$dir/munge"
[[ -f $dir/munge/munge.key ]] || { dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null; chmod 600 "$dir/munge/munge.key"; }
port=${SLURMCTLD_PORT:-16817}
cat > "$dir/slurm.conf" <<CONF
ClusterName=kvcdev
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port+1))
SlurmUser=$(id -un)
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmctldLogFile=$dir/slurmctld.log
SchedulerType=sched/builtin
SelectType=select/linear
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SlurmdTimeout=0
NodeName=$nodes NodeAddr=127.0.0.1 CPUs=1 State=IDLE
PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/seed" --log-file="$dir/munge/munged.log"
SLURM_CONF=$dir/slurm.conf slurmctld -i -c
for _ in $(seq 50); do SLURM_CONF=$dir/slurm.conf sinfo -h >/dev/null 2>&1 && break; sleep 0.2; done
echo "export SLURM_CONF=$dir/slurm.conf"
