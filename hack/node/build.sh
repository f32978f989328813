#!/usr/bin/env bash
# Builds the local node's container runtime from this module into $BIN
# (default: <repo>/bin): containerd, containerd-shim-runc-v2 and ctr, and the
# pod sandbox image pause.tar (the static pause binary on an empty base,
# written by hack/image: nothing can be pulled here). Skipped when a stamp
# of this module's sources matches. runc and the CNI plugins come from Debian
# (hack/node/install.sh): a runc built here without cgo has no seccomp.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${BIN:-$root/bin}
mkdir -p "$bin"

stamp="$bin/.node-stamp"
want="$(cat "$here/go.mod" "$here/go.sum" "$here"/pause/*.go "$root"/hack/image/*.go "$root"/hack/image/go.* | sha256sum | cut -c1-16)"
built=1
for b in containerd containerd-shim-runc-v2 ctr pause.tar; do [[ -x "$bin/$b" ]] || built=0; done
if [[ $built == 1 && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "node runtime: already built in $bin"
  exit 0
fi
cd "$here"
version=$(awk '$1=="github.com/containerd/containerd/v2"{print $2; exit}' go.mod)
echo "node runtime: building containerd $version, its runc shim, ctr and pause into $bin"
tags="no_btrfs no_devmapper no_zfs"
ldflags="-s -w -X github.com/containerd/containerd/v2/version.Version=$version"
for c in containerd containerd-shim-runc-v2 ctr; do
  CGO_ENABLED=0 go build -trimpath -tags "$tags" -ldflags "$ldflags" -o "$bin/$c" "github.com/containerd/containerd/v2/cmd/$c"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/pause" ./pause
# The tag is the sandbox image pinned in internal/testenv/controlplane's containerd config.
(cd "$root/hack/image" && go run . -binary "$tmp/pause" -path /pause -tag docker.io/kubectl-vc/pause:local \
  -version local -out "$bin/pause.tar")
echo "$want" > "$stamp"
echo "node runtime: done"
