#!/usr/bin/env bash
# Fails when docs/reference differs from what 'make docs' generates.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go run ./hack/gendocs "$tmp/reference"
if ! diff -r "$tmp/reference" docs/reference >/dev/null; then
  echo "verify: docs/reference is out of date: run 'make docs' and commit the result" >&2
  diff -r "$tmp/reference" docs/reference | head -20 >&2 || true
  exit 1
fi
