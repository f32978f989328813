# kubectl-vc — see README.md. Everything a target needs is built or
# installed by the target itself (Go modules come from the module proxy).
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c

# The version is semantic and comes from git tags: v0.1.0 on a tag,
# v0.1.0-3-gbff520f three commits after it, -dirty with uncommitted changes;
# before the first tag, v0.0.0-<commits>-g<commit> (git describe alone would
# give a bare commit). Outside a git checkout, v0.0.0-dev.
VERSION    ?= $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null || \
	{ n=$$(git rev-list --count HEAD 2>/dev/null) && c=$$(git rev-parse --short HEAD) && \
	  d=$$(git diff --quiet HEAD -- 2>/dev/null || echo -dirty) && echo "v0.0.0-$$n-g$$c$$d"; } || \
	echo v0.0.0-dev)
COMMIT     ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
VERSION_PKG := github.com/kubectl-vc/kubectl-vc/pkg/version
LDFLAGS := -s -w -X $(VERSION_PKG).gitVersion=$(VERSION) -X $(VERSION_PKG).gitCommit=$(COMMIT) -X $(VERSION_PKG).buildDate=$(BUILD_DATE)

# -count=1: the integration tests run external binaries (etcd, kube-apiserver,
# slurmctld) that go test's result cache cannot see, so never reuse results.
GO_TEST_FLAGS ?= -race -count=1 -timeout 45m
BENCH_FLAGS ?= -benchtime 1x

.PHONY: all help version build image slurm node-deps controlplane controlplane-bins node-bins generate verify test test-tools test-summary unit bench fuzz cluster-up cluster-down demo docs release-check release-snapshot clean fmt vet

all: build

## help: list the targets and what each does
help:
	@awk -F': ' '/^## [a-z-]+: / { sub(/^## /, ""); printf "  %-18s %s\n", $$1, substr($$0, length($$1) + 3) }' $(MAKEFILE_LIST)

## version: print the version 'make build' and 'make image' stamp
version:
	@echo $(VERSION)

## build: build bin/kubectl-vc and bin/kubectl_complete-vc (kubectl's completion helper for the plugin)
build:
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o bin/kubectl-vc ./cmd/kubectl-vc
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o bin/kubectl_complete-vc ./cmd/kubectl_complete-vc

# The image 'kubectl vc install --serve' deploys: IMAGE names it (the
# binary's own version is the tag install expects), GOARCH (default: this
# machine's) picks the platform, IMAGE_TAR is where the tarball goes.
IMAGE_REPO ?= ghcr.io/kubectl-vc/kubectl-vc
IMAGE      ?= $(IMAGE_REPO):$(VERSION)
IMAGE_TAR  ?= dist/kubectl-vc-image.tar

## image: dist/kubectl-vc-image.tar (IMAGE_TAR), a docker-save tarball of scratch + the static binary (no Docker daemon, nothing pulled; GOARCH=arm64 for another platform)
image:
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	arch=$$(go env GOARCH); variant=; [[ $$arch != arm ]] || variant=v$$(go env GOARM | cut -d, -f1); \
	CGO_ENABLED=0 GOOS=linux GOARCH=$$arch go build -trimpath -ldflags "$(LDFLAGS)" -o "$$tmp/kubectl-vc" ./cmd/kubectl-vc; \
	mkdir -p "$$(dirname "$(IMAGE_TAR)")"; \
	out=$$(cd "$$(dirname "$(IMAGE_TAR)")" && pwd)/$$(basename "$(IMAGE_TAR)"); \
	cd hack/image && env -u GOOS -u GOARCH CGO_ENABLED=0 go run . -binary "$$tmp/kubectl-vc" -os linux -arch "$$arch" -variant "$$variant" \
		-tag "$(IMAGE)" -out "$$out" -version "$(VERSION)" -revision "$(COMMIT)" -created "$(BUILD_DATE)"

## slurm: install slurmctld, the Slurm client commands and munge (NodeSet tests run a real slurmctld), and chroots of Slurm 24.11 and 26.05 with slurmrestd (the REST suites)
slurm:
	hack/slurm/install.sh

## node-deps: install Debian's runc, CNI plugins, iptables and conntrack (the local node runs them; needs root)
node-deps:
	hack/node/install.sh

## controlplane: build etcd, the Kubernetes components and the node's containerd into bin/ (skipped when up to date)
controlplane: controlplane-bins node-bins

## controlplane-bins: build etcd and the Kubernetes components into bin/ (skipped when up to date)
controlplane-bins:
	hack/controlplane/build.sh

## node-bins: build the node's containerd and pause image into bin/ (skipped when up to date)
node-bins:
	hack/node/build.sh

## generate: regenerate deepcopy, CRDs, clientset, listers, informers, apply configurations
generate:
	hack/update-codegen.sh

## verify: fail if generated files are stale, or code is not gofmt/vet clean
verify:
	hack/verify.sh

## fmt: gofmt every Go file
fmt:
	gofmt -w $$(git ls-files '*.go')

## vet: go vet ./...
vet:
	go vet ./...

# The NodeSet suites run once more per Slurm with slurmrestd (chroots that
# 'make slurm' builds): the controller reaches Slurm over REST there.
REST_SLURMS ?= slurm-24.11 slurm-26.05

## unit: the package tests that need no root, no cluster and nothing but Go modules (-short: Slurm's daemons skipped); under a minute warm
# Every package of the main module but test/, and hack/image's own module
# (hack's other modules hold no tests). test/ is left out: each of its
# packages is an integration suite that starts the local control plane
# (etcd, kube-apiserver), and some a node as root. hack/unit.sh keeps the
# test binaries in .unit/, so that a warm run links nothing (go test would
# link each one again, most of a warm run's time).
unit:
	hack/unit.sh ./pkg/... ./plugins/... ./cmd/... ./internal/... ./hack/...
	cd hack/image && ../unit.sh ./...

# Every go test of 'make test' runs through gotestsum (hack/testtools pins
# it): the output is go test's own, and each run's events are kept as JSON in
# TEST_LOGS (git-ignored), one file per run. A failing run does not stop the
# others; at the end hack/testsummary names every failed test with the first
# lines of its failure, then one line of counts, so the tail of a failed run
# says what failed.
TEST_LOGS ?= $(CURDIR)/.test-logs
# TEST_PKGS narrows the first run (every package by default).
TEST_PKGS ?= ./...
GOTESTSUM := $(CURDIR)/bin/tools/gotestsum
gotest = $(GOTESTSUM) --format standard-quiet --hide-summary=skipped,output --jsonfile $(TEST_LOGS)/$(1).json --

## test: everything CI runs but the fuzzers — builds what it needs, unit + integration tests with -race, verify; ends with what failed (logs in .test-logs/)
test: controlplane slurm node-deps build test-tools
	rm -rf $(TEST_LOGS) && mkdir -p $(TEST_LOGS)
	failed=; \
	$(call gotest,1-suites) $(GO_TEST_FLAGS) $(TEST_PKGS) || failed="$$failed suites"; \
	for s in $(REST_SLURMS); do \
		KVC_TEST_SLURM=$$s $(call gotest,2-nodeset-$$s) $(GO_TEST_FLAGS) ./test/nodeset/ || failed="$$failed nodeset-$$s"; \
		KVC_TEST_SLURM=$$s $(call gotest,2-hostile-$$s) $(GO_TEST_FLAGS) -run '^TestEachRow$$/^NodeSet_replicas' ./test/hostile/ || failed="$$failed hostile-$$s"; \
	done; \
	(cd hack/image && $(call gotest,3-image) $(GO_TEST_FLAGS) ./...) || failed="$$failed image"; \
	$(MAKE) release-check || failed="$$failed release-check"; \
	$(MAKE) verify || failed="$$failed verify"; \
	steps=; for f in $$failed; do case $$f in verify|release-check) steps="$$steps $$f";; esac; done; \
	go build -o bin/tools/testsummary ./hack/testsummary && { bin/tools/testsummary -steps "$$steps" $(TEST_LOGS) || true; } | tee $(TEST_LOGS)/summary.txt; \
	[[ -z "$$failed" ]]

## test-tools: install gotestsum (pinned by hack/testtools) into bin/tools
test-tools:
	cd hack/testtools && GOBIN=$(CURDIR)/bin/tools go install tool

## test-summary: say again what the last 'make test' found (from .test-logs/)
test-summary:
	@cat $(TEST_LOGS)/summary.txt

## bench: benchmarks against the real local control plane (see docs/benchmarks.md)
bench: controlplane build
	go test -run '^$$' -bench . $(BENCH_FLAGS) -timeout 120m ./test/bench/...

# A bound in executions (Nx), not seconds: with a time bound Go's fuzzing
# coordinator (internal/fuzz, Go 1.26) can report its own deadline as a
# failure, "context deadline exceeded", when the deadline fires before it
# has cancelled its workers; a count bound sets no deadline. 20000x is
# about 20 s per fuzzer on 2 cores. A time (FUZZTIME=10m) is still taken
# for a long run by hand, with that risk at its end.
FUZZTIME ?= 20000x
# Every fuzzer of user input, as package:Fuzzer, or package:Fuzzer:COUNT
# for one whose every input costs far more than the others' (a whole
# NodeSet sync on fake clientsets: about 5 a second here), which runs
# COUNT executions instead of FUZZTIME. 'go test -fuzz' takes one fuzzer
# per run, hence the loop.
FUZZERS := ./pkg/cli/queue:FuzzParseResources \
	./plugins/podgroup:FuzzMinMember \
	./plugins/podgroup:FuzzNetworkTopology \
	./plugins/podgroup:FuzzBuild \
	./pkg/slurm:FuzzExpandHostlist \
	./pkg/slurm:FuzzRESTAnswers \
	./pkg/slurm:FuzzSinfoJSON \
	./plugins/nodeset:FuzzSyncDecisions:500x \
	./plugins/nodeset:FuzzNodeCordonReason

## fuzz: run each fuzzer for FUZZTIME (default 20000x executions; FuzzSyncDecisions 500x); the seed corpora also run in 'make test'
fuzz:
	for f in $(FUZZERS); do \
		pkg=$${f%%:*}; name=$${f#*:}; n=$${name#*:}; name=$${name%%:*}; [ "$$n" != "$$name" ] || n=$(FUZZTIME); \
		go test -run '^$$' -fuzz "^$$name\$$" -fuzztime $$n "$$pkg" || exit 1; \
	done

## cluster-up: start the local cluster with the CRDs installed (CLUSTER_LEVEL=node|controllers|apiserver; default node where possible)
CLUSTER_LEVEL ?=
# Only the node level runs pods: the controllers and apiserver levels need
# neither containerd nor Debian's runc and CNI plugins.
CLUSTER_NEEDS = controlplane-bins build $(if $(filter apiserver controllers,$(CLUSTER_LEVEL)),,node-bins node-deps)
cluster-up: $(CLUSTER_NEEDS)
	go run ./hack/cluster up $(if $(CLUSTER_LEVEL),--level $(CLUSTER_LEVEL))

## cluster-down: stop what cluster-up started
cluster-down:
	go run ./hack/cluster down

## demo: the quick start — local control plane, CRDs, and kubectl vc at work
demo: controlplane node-deps build
	hack/demo.sh

## docs: regenerate the command reference in docs/reference from the cobra tree, and docs/nodeset.md's conditions from their table
docs:
	rm -rf docs/reference
	go run ./hack/gendocs docs/reference
	go run ./hack/genconditions docs/nodeset.md

## release-check: goreleaser's snapshot for this machine's platform only, checked by hack/krew (archive contents, krew manifest); part of 'make test'
release-check:
	cd hack/release && GOBIN=$(CURDIR)/bin/tools go install tool
	go run ./hack/krew/hostconfig -in .goreleaser.yaml -out bin/goreleaser-host.yaml
	bin/tools/goreleaser release --snapshot --clean --config bin/goreleaser-host.yaml
	$(if $(wildcard $(GOTESTSUM)),mkdir -p $(TEST_LOGS) && $(call gotest,4-release-check),go test) -count=1 -run '^TestReleaseSnapshot$$' ./hack/krew -args -dist $(CURDIR)/dist -partial

## release-snapshot: every release archive, checksums and the krew manifest (dist/vc.yaml, checked by hack/krew) in dist/
release-snapshot:
	cd hack/release && GOBIN=$(CURDIR)/bin/tools go install tool
	bin/tools/goreleaser release --snapshot --clean
	@echo "krew manifest: dist/vc.yaml"

## clean: remove the built binaries, dist/ and .cluster/
clean:
	rm -rf bin/kubectl-vc bin/kubectl_complete-vc dist .cluster .unit
