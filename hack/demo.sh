#!/usr/bin/env bash
# The quick start: a real local control plane, the CRDs, and kubectl vc at work.
# Everything it starts is stopped on exit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="$root/bin:$PATH"
dir=$(mktemp -d)
cleanup() { go run ./hack/cluster down >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
go run ./hack/cluster down >/dev/null 2>&1 || true
go run ./hack/cluster up >/dev/null
export KUBECONFIG="$root/.cluster/kubeconfig"
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }
step kubectl vc version
step kubectl get crd
echo
echo "demo: done, control plane stopped"
