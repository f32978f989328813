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
# docs/nodeset.md's conditions are made from pkg/rules/nodesetconditions.
cp docs/nodeset.md "$tmp/nodeset.md"
go run ./hack/genconditions "$tmp/nodeset.md"
if ! diff -q "$tmp/nodeset.md" docs/nodeset.md >/dev/null; then
  echo "verify: docs/nodeset.md's conditions differ from pkg/rules/nodesetconditions: run 'make docs' and commit the result" >&2
  diff "$tmp/nodeset.md" docs/nodeset.md | head -20 >&2 || true
  exit 1
fi
