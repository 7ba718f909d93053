#!/usr/bin/env bash
# Build benchmarks/clientgo/main.go against the vendored client-go of a Kubernetes source
# checkout (real-kube's, by default): the program is copied into that tree for the build only.
#   benchmarks/clientgo/build.sh [K8S_SRC] [OUT]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${1:-${REAL_KUBE_HOME:-$HOME/.cache/real-kube}/src}
out=${2:-$here/informerbench}
[ -d "$src/vendor/k8s.io/client-go" ] || { echo "no vendored client-go under $src" >&2; exit 2; }
tmp="$src/cmd/kcm-informerbench"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
cp "$here/main.go" "$tmp/main.go"
cd "$src"
GOFLAGS=-mod=vendor GOCACHE=${GOCACHE:-${REAL_KUBE_HOME:-$HOME/.cache/real-kube}/gocache} \
  go build -o "$out" ./cmd/kcm-informerbench
echo "built $out ($(go version))"
