#!/usr/bin/env bash
# Builds, once, a Debian chroot with a newer Slurm than the host's, for the
# tests that talk to a real slurmrestd (internal/testenv/slurmtest/rest.go):
#   hack/slurm/chroot.sh trixie   # Slurm 24.11
#   hack/slurm/chroot.sh forky    # Slurm 26.05
# The chroot goes to ${KVC_SLURM_CHROOTS:-/var/cache/kubectl-vc/slurm}/SUITE
# (about 300 MB each). A stamp file in it records what was built; a second run
# with the same packages returns at once. The build happens in a temporary
# directory, renamed into place only when complete, and in a private mount
# namespace, so an interrupted build leaves neither a half-made chroot nor a
# mount behind. The Debian mirror is the one apt on this machine uses
# (override with KVC_DEBIAN_MIRROR).
set -euo pipefail

suite=${1:-}
case $suite in
  trixie | forky) ;;
  *) echo "usage: $0 trixie|forky" >&2; exit 2 ;;
esac
if [[ $(id -u) -ne 0 ]]; then
  echo "chroot.sh: not root, no $suite chroot built: the Slurm REST tests (internal/testenv/slurmtest) will be skipped"
  exit 0
fi

base=${KVC_SLURM_CHROOTS:-/var/cache/kubectl-vc/slurm}
dir=$base/$suite
packages="slurmctld slurmd slurmrestd slurm-client munge slurm-wlm-jwt-plugin"
stamp=.kvc-slurm-chroot
# rev changes when the chroot's content changes otherwise (internal/testenv/slurmtest
# checks it): 2 = /etc/hosts and no DNS.
rev=2
want="suite=$suite packages=$packages rev=$rev"

built() {
  [[ -f $dir/$stamp && $(head -n1 "$dir/$stamp") == "$want" ]]
}
if built; then
  echo "chroot.sh: $dir already built ($(sed -n 's/^slurm=//p' "$dir/$stamp")); nothing to do"
  exit 0
fi

mkdir -p "$base"
# One build per suite at a time; a second caller waits, then finds it built.
exec 9>"$base/.$suite.lock"
flock 9
if built; then
  echo "chroot.sh: $dir already built ($(sed -n 's/^slurm=//p' "$dir/$stamp")); nothing to do"
  exit 0
fi

# mounted_under PATH: whether anything is mounted at or below PATH in this
# mount namespace. Nothing is ever deleted while it is.
mounted_under() {
  awk -v p="$1" '$5 == p || index($5, p "/") == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo
}
remove() {
  if mounted_under "$1"; then
    echo "chroot.sh: $1 has mounts below it; not removing it" >&2
    return 1
  fi
  rm -rf --one-file-system "$1"
}

# Leftovers of interrupted builds (the lock says no build is running).
for d in "$base/.$suite".tmp.* "$base/.$suite".old.*; do
  if [[ -e $d ]]; then remove "$d"; fi
done

if ! command -v debootstrap >/dev/null 2>&1; then
  if ! apt-cache policy debootstrap 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    apt-get update
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap
fi
# bookworm's debootstrap predates forky: sid's script fits any later suite.
script=
if [[ ! -e /usr/share/debootstrap/scripts/$suite ]]; then
  script=/usr/share/debootstrap/scripts/sid
fi

mirror=${KVC_DEBIAN_MIRROR:-}
if [[ -z $mirror ]]; then
  mirror=$(
    {
      awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true
      sed -nE 's/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+).*/\2/p' \
        /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true
    } | grep -E '/debian/?$' | head -n1 || true
  )
  mirror=${mirror:-http://deb.debian.org/debian}
fi

tmp=$(mktemp -d "$base/.$suite.tmp.XXXXXX")
# mktemp's 0700 would keep every user but root out of the chroot (munge's
# postinst runs as munge, slurmrestd runs as nobody).
chmod 755 "$tmp"
cleanup() {
  if [[ -e $tmp ]]; then
    remove "$tmp" || true
  fi
}
trap cleanup EXIT

# build runs in a private mount namespace: whatever debootstrap or this
# function mounts disappears with the namespace, even on SIGKILL.
build() {
  set -euo pipefail
  local suite=$1 tmp=$2 mirror=$3 script=$4 packages=$5
  # shellcheck disable=SC2086 # $script is empty or one path
  debootstrap --variant=minbase "$suite" "$tmp" "$mirror" $script
  # forky's (testing's) Release can be past its Valid-Until on a mirror.
  echo 'Acquire::Check-Valid-Until "false";' >"$tmp/etc/apt/apt.conf.d/99kubectl-vc"
  # Packages' services are never started by apt in here.
  printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
  chmod 755 "$tmp/usr/sbin/policy-rc.d"
  # shellcheck disable=SC2064 # expand $tmp now: it is local
  trap "umount -R '$tmp/dev' '$tmp/sys' '$tmp/proc' 2>/dev/null || true" EXIT
  mount -t proc proc "$tmp/proc"
  mount -t sysfs sysfs "$tmp/sys"
  mount --rbind /dev "$tmp/dev"
  chroot "$tmp" apt-get update
  # shellcheck disable=SC2086 # a list of package names
  DEBIAN_FRONTEND=noninteractive chroot "$tmp" apt-get install -y --no-install-recommends $packages
  chroot "$tmp" apt-get clean
  rm -rf "$tmp"/var/lib/apt/lists/*
  # Host names from files only. Without /etc/hosts, slurmctld's reverse
  # lookup of 127.0.0.1 on every RPC goes to the DNS server, and a lost
  # answer costs the 5 s resolver timeout.
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$tmp/etc/hosts"
  sed -i 's/^hosts:.*/hosts:          files/' "$tmp/etc/nsswitch.conf"
  umount -R "$tmp/dev" "$tmp/sys" "$tmp/proc"
  trap - EXIT
}

start=$(date +%s)
echo "chroot.sh: building $dir from $mirror (debootstrap, then $packages)"
unshare --mount --propagation private -- \
  bash -c "$(declare -f build); build \"\$@\"" build "$suite" "$tmp" "$mirror" "$script" "$packages"
version=$(chroot "$tmp" dpkg-query -W -f='${Version}' slurmctld)
printf '%s\nslurm=%s\nmirror=%s\nbuilt=%s\n' "$want" "$version" "$mirror" "$(date -u +%FT%TZ)" >"$tmp/$stamp"

if [[ -e $dir ]]; then
  # Built before with other packages: swap, then remove the old one.
  old="$base/.$suite.old.$$"
  mv "$dir" "$old"
  mv "$tmp" "$dir"
  remove "$old"
else
  mv "$tmp" "$dir"
fi
echo "chroot.sh: built $dir (slurm $version) in $(($(date +%s) - start))s"
