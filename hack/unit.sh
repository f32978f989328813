#!/usr/bin/env bash
# hack/unit.sh PACKAGES... — 'make unit': run the tests of PACKAGES (go list
# patterns, in the module of the current directory) with -short, never from
# go test's result cache.
#
# Why not 'go test -count=1 PACKAGES' alone: go test links every package's
# test binary again on each run, even when nothing changed. With
# client-go-sized binaries that link (2–3 s of CPU each, about 40 packages)
# is three quarters of a warm run on two cores. 'go test -c -o FILE' does
# not link again when FILE is already the binary of the same build, so the
# binaries are kept in UNIT_DIR (default .unit/ at the top of the
# repository, git-ignored, about 1.6 GB; 'make clean' removes it) and run as
# go test runs them: from their package's directory.
#
# UNIT_JOBS sets how many builds and test binaries run at once (default:
# twice the processors: some packages' tests mostly wait, on leader
# election or Slurm's timers). Go vet is left to 'make vet' and 'make
# verify', which run the whole of it. UNIT_TEST_FLAGS adds flags to every
# test binary (e.g. UNIT_TEST_FLAGS='-test.v -test.run=TestX').
set -euo pipefail

top=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
export UNIT_DIR=${UNIT_DIR:-$top/.unit}
jobs=${UNIT_JOBS:-$(( $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2) * 2 ))}
mkdir -p "$UNIT_DIR"
list=$(mktemp)
trap 'rm -f "$list"' EXIT

# One line per package with tests: import path, then its directory.
go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' "$@" | sed '/^$/d' >"$list"

# unit PKG DIR: build the package's test binary (nothing to do when it is
# up to date), run it in DIR, print go test's verdict line.
unit() {
	local name=${1//\//_} status=0 start took
	local bin="$UNIT_DIR/$name.test" out="$UNIT_DIR/$name.out"
	if ! go test -c -vet=off -ldflags='-s -w' -o "$bin" "$1" >"$out" 2>&1; then
		cat "$out"
		printf 'FAIL\t%s [build failed]\n' "$1"
		return 1
	fi
	start=$(date +%s%N)
	(cd "$2" && "$bin" -test.short -test.count=1 -test.paniconexit0 -test.timeout=10m ${UNIT_TEST_FLAGS:-}) >"$out" 2>&1 || status=$?
	took=$(( ($(date +%s%N) - start) / 1000000 ))
	if [[ $status -ne 0 ]]; then
		cat "$out"
		printf 'FAIL\t%s\t%d.%03ds\n' "$1" $((took / 1000)) $((took % 1000))
		return 1
	fi
	[[ -z ${UNIT_TEST_FLAGS:-} ]] || cat "$out"
	printf 'ok  \t%s\t%d.%03ds\n' "$1" $((took / 1000)) $((took % 1000))
}
export -f unit

xargs -P "$jobs" -L 1 bash -c 'unit "$@"' _ <"$list"
