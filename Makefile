# Kuvryn Sync — build, test and run everything from a fresh clone.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c

BIN      := $(CURDIR)/bin
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
export KUBEBUILDER_ASSETS := $(BIN)

MODULES  := apis pkg pkg/testkit cli e2e services/source-controller services/sync-controller \
            services/image-controller services/notify-controller services/web
PKGS     := $(foreach m,$(MODULES),./$(m)/...)
# Unit tests and tests against the real API server, outside the e2e module.
UNIT_PKGS := $(filter-out ./e2e/...,$(PKGS))
SERVICES := source-controller sync-controller image-controller notify-controller web

CONTROLLER_GEN := $(BIN)/controller-gen
STATICCHECK    := $(BIN)/staticcheck
ACTIONLINT     := $(BIN)/actionlint
CONTROLLER_TOOLS_VERSION := v0.23.0
STATICCHECK_VERSION      := v0.8.2
ACTIONLINT_VERSION       := v1.7.12

.PHONY: all
all: build

##@ Tooling

.PHONY: testbin
testbin: ## Build etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok into bin/ (cold: ~15 min).
	bash tools/controlplane/build.sh

$(CONTROLLER_GEN):
	GOWORK=off GOBIN=$(BIN) $(GO) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)

$(STATICCHECK):
	GOWORK=off GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

$(ACTIONLINT):
	GOWORK=off GOBIN=$(BIN) $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)

##@ Code generation

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate DeepCopy methods.
	$(CONTROLLER_GEN) object paths=./apis/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate the CRDs into deploy/crds, and copy them into the Helm chart.
	$(CONTROLLER_GEN) crd paths=./apis/... output:crd:artifacts:config=deploy/crds
	cp deploy/crds/sync.kuvryn.io_*.yaml charts/kuvryn-sync/crds/

.PHONY: verify-generated
verify-generated: generate manifests ## Fail if generated code or CRDs differ from what is checked in.
	@if [ -n "$$(git status --porcelain -- apis deploy/crds charts/kuvryn-sync/crds)" ]; then \
	  git --no-pager diff -- apis deploy/crds charts/kuvryn-sync/crds; git status --short -- apis deploy/crds charts/kuvryn-sync/crds; \
	  echo "generated files are stale: run 'make generate manifests' and commit"; exit 1; fi

##@ Build

# One go build for every binary: the packages they share compile once, in
# parallel, and a binary whose inputs did not change is not linked again, so
# `make demo` followed by `make test` builds each binary once. The version
# goes to ksync's link alone, so a new commit relinks only ksync.
.PHONY: build
build: ## Build every service and ksync into bin/.
	@echo "go build -o bin/ $(SERVICES) ksync"
	@start=$$(date +%s); \
	  $(GO) build -ldflags "github.com/kuvryn/kuvryn-sync/cli/cmd/ksync=-X github.com/kuvryn/kuvryn-sync/cli/internal/commands.Version=$(VERSION)" \
	    -o $(BIN)/ $(foreach s,$(SERVICES),./services/$(s)) ./cli/cmd/ksync; \
	  echo "built $(SERVICES) ksync in $$(( $$(date +%s) - start ))s"

##@ Test

# The steps of `make test`, in order. Each prints how long it took and the
# last line lists them all, so a slow run shows where its time went.
TEST_STEPS := testbin verify-generated lint build unit-and-e2e
# More go test flags for unit and e2e. make test turns go test's own vet off:
# its lint step has just run go vet, whose checks include go test's, over
# the same packages.
GOTESTFLAGS ?=

.PHONY: test
test: ## Everything CI runs: generated files, lint, unit, API-server and e2e tests, with each step's time.
	@took=""; \
	for step in $(TEST_STEPS); do \
	  start=$$(date +%s); \
	  if ! $(MAKE) --no-print-directory $$step GOTESTFLAGS="$(GOTESTFLAGS) -vet=off"; then \
	    echo "make test: $$step failed after $$(( $$(date +%s) - start ))s (before it:$$took)"; exit 1; \
	  fi; \
	  took="$$took $$step $$(( $$(date +%s) - start ))s"; \
	  echo "make test: $$step took $$(( $$(date +%s) - start ))s"; \
	done; \
	echo "make test: each step's time:$$took"

# Test packages wait on their control planes and services far more than
# they compute, so up to TEST_PACKAGES of them run at once, each with a
# control plane of its own, and the tests of a package that share one run
# TEST_PARALLEL at a time (see e2e/scenarios/suite_test.go).
TEST_PACKAGES ?= 4
TEST_PARALLEL ?= 6

.PHONY: unit
unit: testbin ## Unit tests and tests against the real API server.
	$(GO) test -count=1 -p $(TEST_PACKAGES) -parallel $(TEST_PARALLEL) -timeout 30m $(GOTESTFLAGS) $(UNIT_PKGS)

.PHONY: e2e
e2e: testbin build ## API validation and end-to-end scenarios on the local control plane.
	$(GO) test -count=1 -p $(TEST_PACKAGES) -parallel $(TEST_PARALLEL) -timeout 40m $(GOTESTFLAGS) ./e2e/...

# make test runs unit and e2e in one go test, the e2e packages (the longest)
# listed first so that they start first and the rest fill in around them.
.PHONY: unit-and-e2e
unit-and-e2e: testbin build
	$(GO) test -count=1 -p $(TEST_PACKAGES) -parallel $(TEST_PARALLEL) -timeout 40m $(GOTESTFLAGS) ./e2e/... $(UNIT_PKGS)

.PHONY: e2e-chaos
e2e-chaos: testbin build ## Fault suite: SIGKILL the services and kube-apiserver in 10 hooked rollouts, Git and chart servers down 60s (KUVRYN_CHAOS_ROLLOUTS, KUVRYN_CHAOS_SEED, KUVRYN_CHAOS_OUTAGE).
	KUVRYN_CHAOS_ROLLOUTS=$${KUVRYN_CHAOS_ROLLOUTS:-10} KUVRYN_CHAOS_OUTAGE=$${KUVRYN_CHAOS_OUTAGE:-60s} $(GO) test -count=1 -v -timeout 40m -run '^TestE2E_Chaos' ./e2e/scenarios/

.PHONY: lint
lint: $(STATICCHECK) $(ACTIONLINT) ## gofmt, go vet, staticcheck, and actionlint on the GitHub workflows.
	@out=$$(gofmt -l $(MODULES) tools); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(STATICCHECK) $(PKGS)
	$(ACTIONLINT) .github/workflows/*.yml

.PHONY: bench
bench: testbin ## Benchmarks, with figures: the engines on 10k objects, a status write by Server-Side Apply and by merge patch, then rollouts against a bare Server-Side Apply on the local control plane (~7 min).
	$(GO) test -p 1 -run '^$$' -bench . -benchmem -timeout 10m ./pkg/desiredstate \
	  ./services/sync-controller/internal/plan ./services/sync-controller/internal/redact ./services/sync-controller/internal/wave
	$(GO) test -run '^$$' -bench StatusWrite -benchtime 300x -timeout 10m ./pkg/ssa
	@out=$$(mktemp); trap 'rm -f "$$out"' EXIT; \
	  echo "$(GO) test -run '^\$$' -bench . -benchmem -benchtime 2x -timeout 20m ./services/sync-controller/internal/revision"; \
	  $(GO) test -run '^$$' -bench . -benchmem -benchtime 2x -timeout 20m ./services/sync-controller/internal/revision | tee "$$out"; \
	  echo; echo "Kuvryn Sync rollout time over a bare Server-Side Apply of the same objects (docs/benchmarks.md):"; \
	  awk '/x-bare-ssa/ { for (i = 2; i < NF; i++) { if ($$(i+1) == "x-bare-ssa") r = $$i; if ($$(i+1) == "objects/s") o = $$i; if ($$(i+1) == "api-calls/object") c = $$i } \
	    sub(/-[0-9]+$$/, "", $$1); printf "  %-42s %5.1fx  %6.1f objects/s  %5.1f API calls/object\n", $$1, r, o, c }' "$$out"

# N of bench-scale: comma-separated numbers of Applications.
N ?= 100,1000
# SHARDS of bench-scale: spread the Applications over this many shards (0: the default shard alone).
SHARDS ?= 0

.PHONY: bench-scale
bench-scale: testbin build ## End to end from Git: N Applications (N=100,1000) against a bare Server-Side Apply in the same run (~30 min on 2 cores).
	$(GO) run ./e2e/cmd/benchscale -n $(N) -shards $(SHARDS)

##@ Demo

.PHONY: demo
demo: testbin build ## Run Kuvryn Sync on a local control plane in the background.
	$(GO) run ./e2e/cmd/demo up

.PHONY: demo-down
demo-down: ## Stop the demo.
	$(GO) run ./e2e/cmd/demo down

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)
