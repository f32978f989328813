#!/usr/bin/env bash
# Fails when generated files differ from what 'make generate' produces, or
# when the code is not gofmt and go vet clean. It compares before/after
# copies, so it works on a dirty tree too.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
generated=(pkg/client pkg/crds/bases pkg/crds/slinkyoperator pkg/apis)
snap=$(mktemp -d)
trap 'rm -rf "$snap"' EXIT
for d in "${generated[@]}"; do mkdir -p "$snap/$(dirname "$d")"; cp -a "$d" "$snap/$d"; done
hack/update-codegen.sh >/dev/null
fail=0
for d in "${generated[@]}"; do
  if ! diff -r "$snap/$d" "$d" >/dev/null; then
    echo "verify: $d is out of date: run 'make generate' and commit the result" >&2
    diff -r "$snap/$d" "$d" | head -20 >&2 || true
    fail=1
  fi
done
unformatted=$(gofmt -l $(git ls-files '*.go' | grep -v '^hack/controlplane/') 2>/dev/null || true)
if [[ -n "$unformatted" ]]; then
  echo "verify: not gofmt-clean: $unformatted" >&2
  fail=1
fi
go vet ./... || fail=1
(cd hack/image && go vet ./...) || fail=1
# A clone alone must pass 'make test': only cptest.UpstreamCRDs may look
# beside the repository (for upstream's CRDs, skipping when they are absent).
outside=$(git grep -nE '/work/|\.\./shared|"\.\.", "shared"' -- test hack pkg cmd plugins internal Makefile ':!internal/testenv/cptest/upstream.go' ':!hack/verify.sh' || true)
if [[ -n "$outside" ]]; then
  echo "verify: these lines read outside the repository (use cptest.UpstreamCRDs):" >&2
  echo "$outside" >&2
  fail=1
fi
# serve's name and Volcano's namespace are spelled once, in pkg/apis/keys
# (ServeName, VolcanoNamespace): a Go string literal that is one of them, or
# a name made from serve's, anywhere else in non-test code is refused.
# Comments, help text, tests, YAML and docs may say them.
names=$(git grep -nE '"(kubectl-vc-serve["-]|volcano-system")' -- '*.go' ':!*_test.go' ':!pkg/apis/keys/' |
  grep -vE '^[^:]+:[0-9]+:[[:space:]]*//' || true)
if [[ -n "$names" ]]; then
  echo "verify: spell serve's names with keys.ServeName and keys.VolcanoNamespace (pkg/apis/keys), not as literals:" >&2
  echo "$names" >&2
  fail=1
fi
# A rule both the CLI and the controllers apply is written once, in
# pkg/rules or pkg/apis/keys (issue 59); these are the copies found before,
# refused if they come back in non-test code elsewhere: reading a pod's
# queue annotations (rules.QueueAnnotation, PodQueue), "an empty state is
# Open" (rules.StateOrOpen, QueueStatusKept), a queue's parent
# (rules.EffectiveParent, NeedsDefaultParent), the root and default queues,
# Volcano's scheduler name (keys.VolcanoScheduler; plugins/queue's metrics
# subsystem is another "volcano", the prefix of Volcano's metric names), and
# a field manager written as a literal where keys has it, and the NodeSet
# condition types (pkg/rules/nodesetconditions' table).
rulecopies=$(git grep -nE 'keys\.(VolcanoQueueName|QueueName)\b|Status\.State [!=]= ""|Spec\.Parent [!=]= ""|"(root|default|volcano)"([^:]|$)|FieldManager: *"|"(SpecSupported|SlurmReachable|ServiceReady|DisruptionBudgetReady|SSHConfigReady)"' \
  -- 'pkg/*.go' 'plugins/*.go' 'cmd/*.go' ':!*_test.go' ':!pkg/rules/' ':!pkg/apis/' ':!pkg/client/' ':!plugins/queue/metrics.go' |
  grep -vE '^[^:]+:[0-9]+:[[:space:]]*//' || true)
if [[ -n "$rulecopies" ]]; then
  echo "verify: a rule pkg/rules or pkg/apis/keys holds is written again here (use it from there):" >&2
  echo "$rulecopies" >&2
  fail=1
fi
# A CLI kind imports no other kind (issue 59): what two kinds share lives in
# a shared package (pkg/cli/completion, jobspec, flowkind, util, ...), so a
# change to one kind reaches no other. The kinds are the packages under
# pkg/cli that declare a kind.Kind in their kind.go.
mod=$(go list -m)
kinds=$(for f in pkg/cli/*/kind.go; do if grep -q '^var Kind = &kind.Kind\[' "$f"; then echo "$mod/$(dirname "$f")"; fi; done)
for k in $kinds; do
  others=$(go list -deps "$k" | grep -Fxf <(echo "$kinds") | grep -Fxv "$k" || true)
  if [[ -n "$others" ]]; then
    echo "verify: kind $k imports other kinds (move what they share to a shared package):" $others >&2
    fail=1
  fi
done
# plugins/ is laid out in files that do one thing (issue 59): none of its
# non-test files is over 400 lines, and the NodeSet controller writes pods
# and claims only through plugins/nodeset/podcontrol.
long=$(git ls-files 'plugins/*.go' ':!*_test.go' | xargs wc -l | awk '$2 != "total" && $1 > 400 {print $2" ("$1" lines)"}')
if [[ -n "$long" ]]; then
  echo "verify: split these files of plugins/ (400 lines at most):" $long >&2
  fail=1
fi
podwrites=$(git grep -nE 'CoreV1\(\)\.(Pods|PersistentVolumeClaims)\(' -- 'plugins/nodeset/*.go' ':!*_test.go' ':!plugins/nodeset/podcontrol/' || true)
if [[ -n "$podwrites" ]]; then
  echo "verify: the NodeSet controller writes pods and claims through podcontrol.Interface:" >&2
  echo "$podwrites" >&2
  fail=1
fi
if [[ -x hack/verify-docs.sh ]]; then hack/verify-docs.sh || fail=1; fi
exit $fail
