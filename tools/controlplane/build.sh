#!/usr/bin/env bash
# Builds the local control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok) from the Go module proxy into bin/, skipping binaries
# that are already built at the pinned versions. Cold: ~15 minutes on 2 cores.
# While a build runs it prints, every 30 seconds, what it builds, the time
# elapsed and the time a cold build takes in all.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${BIN_DIR:-$(cd "$here/../.." && pwd)/bin}
mkdir -p "$bin"
export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0

k8s_version=v1.37.2
kwok_version=v0.8.0
stamp="$bin/.controlplane-$k8s_version-kwok-$kwok_version"
# Measured on 2 cores from an empty Go build cache; the previous run's total,
# when there is one, is a better guess.
expected="about 15 minutes cold on 2 cores"
if [ -f "$bin/.controlplane-took" ]; then expected="$(cat "$bin/.controlplane-took") last time"; fi

ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version \
 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 \
 -X k8s.io/component-base/version.gitTreeState=clean \
 -X k8s.io/client-go/pkg/version.gitVersion=$k8s_version \
 -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=37"

start=$(date +%s)
elapsed() { local s=$(( $(date +%s) - start )); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

# progress runs a command, printing a line every 30s while it runs.
progress() { # what command...
  local what=$1; shift
  echo "building $what (control plane: $expected)"
  "$@" &
  local pid=$!
  while ! wait_for "$pid" 30; do
    echo "  still building $what: $(elapsed) elapsed (control plane: $expected)"
  done
  wait "$pid"
}

# wait_for returns 0 once pid has exited, 1 if it still runs after secs.
wait_for() { # pid secs
  local i
  for ((i = 0; i < $2; i++)); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 1
  done
  ! kill -0 "$1" 2>/dev/null
}

missing() { [ ! -x "$bin/$1" ] || [ ! -f "$stamp" ]; }

if missing etcd; then
  # go build -o dir would name it after the module's /v3 suffix's parent, so
  # etcd is built on its own with its name.
  progress etcd sh -c "cd '$here' && go build -trimpath -ldflags '$ldflags' -o '$bin/etcd' go.etcd.io/etcd/server/v3"
fi
# The three Kubernetes commands share most of their packages: one go build
# compiles those once, in parallel, and links the three.
k8s=()
for c in kube-apiserver kube-controller-manager kube-scheduler; do
  if missing "$c"; then k8s+=("k8s.io/kubernetes/cmd/$c"); fi
done
if [ ${#k8s[@]} -gt 0 ]; then
  progress "${k8s[*]##*/}" sh -c "cd '$here' && go build -trimpath -ldflags '$ldflags' -o '$bin/' ${k8s[*]}"
fi
if missing kubectl; then progress kubectl sh -c "cd '$here' && go build -trimpath -ldflags '$ldflags' -o '$bin/kubectl' k8s.io/kubernetes/cmd/kubectl"; fi
if missing kwok; then
  progress kwok env GOBIN="$bin" go install -trimpath -ldflags "-s -w" sigs.k8s.io/kwok/cmd/kwok@$kwok_version
fi
if [ ! -f "$bin/kwok-stages.yaml" ] || [ ! -f "$stamp" ]; then
  # The Stage YAMLs that ship inside the kwok module: nodes turn Ready and keep
  # a heartbeat, pods turn Ready, Job pods Succeed.
  dir=$(cd "$here" && go mod download -json "sigs.k8s.io/kwok@$kwok_version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  for f in node/fast/node-initialize.yaml node/heartbeat/node-heartbeat.yaml \
           pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    echo "---"; cat "$dir/kustomize/stage/$f"
  done > "$bin/kwok-stages.yaml"
fi
if [ ! -f "$stamp" ]; then
  elapsed > "$bin/.controlplane-took"
  echo "control plane built in $(elapsed)"
fi
touch "$stamp"
