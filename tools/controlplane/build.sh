#!/usr/bin/env bash
# Builds the local control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok) from the Go module proxy into bin/, skipping binaries
# that are already built at the pinned versions. Cold: ~15 minutes on 2 cores.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${BIN_DIR:-$(cd "$here/../.." && pwd)/bin}
mkdir -p "$bin"
export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0

k8s_version=v1.37.2
kwok_version=v0.8.0
stamp="$bin/.controlplane-$k8s_version-kwok-$kwok_version"

ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version \
 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 \
 -X k8s.io/component-base/version.gitTreeState=clean \
 -X k8s.io/client-go/pkg/version.gitVersion=$k8s_version \
 -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=37"

build() { # name package
  if [ -x "$bin/$1" ] && [ -f "$stamp" ]; then return; fi
  echo "building $1"
  (cd "$here" && go build -trimpath -ldflags "$ldflags" -o "$bin/$1" "$2")
}

build etcd go.etcd.io/etcd/server/v3
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager
build kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler
if [ ! -x "$bin/kwok" ] || [ ! -f "$stamp" ]; then
  echo "building kwok"
  GOBIN="$bin" go install -trimpath -ldflags "-s -w" sigs.k8s.io/kwok/cmd/kwok@$kwok_version
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
touch "$stamp"
