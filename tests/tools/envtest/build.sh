#!/usr/bin/env bash
# Build kube-apiserver and etcd from the Go module proxy, pinned by tests/tools/envtest/go.mod, into a cache:
#
#   ${MCO_ENVTEST_BIN:-$HOME/.cache/mco-envtest}/<k8s-version>-<etcd-version>/{kube-apiserver,etcd}
#
# Skips the build when both binaries already exist. Progress goes to stderr; the LAST line of stdout is the
# directory holding the binaries, so callers can do:  BIN_DIR="$(tests/tools/envtest/build.sh | tail -n1)"
# Exits non-zero with a message on any failure. Safe to run concurrently (flock) and from a fresh clone.
set -Eeuo pipefail

die() { echo "build.sh: ERROR: $*" >&2; exit 1; }
trap 'rc=$?; echo "build.sh: ERROR: command failed (exit $rc) at line $LINENO: $BASH_COMMAND" >&2' ERR
log() { echo ">> $*" >&2; }

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"
command -v go >/dev/null || die "go not found in PATH (Go >= the 'go' line of $HERE/go.mod is required)"
[[ -f go.mod && -f go.sum ]] || die "$HERE/go.mod or go.sum missing (regenerate with update-gomod.sh)"

# The pinned versions come from go.mod (written by update-gomod.sh).
K8S_VERSION="$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' go.mod)"
ETCD_VERSION="$(awk '$1 == "go.etcd.io/etcd/server/v3" { print $2; exit }' go.mod)"
[[ "$K8S_VERSION" =~ ^v1\.([0-9]+)\.[0-9]+$ ]] || die "cannot read k8s.io/kubernetes version from go.mod (got '$K8S_VERSION')"
K8S_MINOR="${BASH_REMATCH[1]}"
[[ "$ETCD_VERSION" =~ ^v3\.[0-9]+\.[0-9]+$ ]] || die "cannot read go.etcd.io/etcd/server/v3 version from go.mod (got '$ETCD_VERSION')"

CACHE_ROOT="${MCO_ENVTEST_BIN:-${HOME:?HOME is not set and MCO_ENVTEST_BIN is empty}/.cache/mco-envtest}"
OUT="${CACHE_ROOT}/${K8S_VERSION}-${ETCD_VERSION}"

have_both() { [[ -x "$OUT/kube-apiserver" && -x "$OUT/etcd" ]]; }

if have_both; then
  log "cached: $OUT (kube-apiserver ${K8S_VERSION}, etcd ${ETCD_VERSION})"
  echo "$OUT"
  exit 0
fi

mkdir -p "$OUT" || die "cannot create $OUT"
# Serialise concurrent builds of the same versions; the loser finds the binaries afterwards.
if command -v flock >/dev/null; then
  exec 9>"$OUT/.lock"
  flock -w 7200 9 || die "timed out waiting for the build lock $OUT/.lock"
  if have_both; then
    log "built by a concurrent run: $OUT"
    echo "$OUT"
    exit 0
  fi
fi

# -mod=readonly: build exactly what the committed go.mod/go.sum say; fail (not silently edit) if they drift.
export CGO_ENABLED=0 GO111MODULE=on GOWORK=off
export GOFLAGS="-mod=readonly -buildvcs=false -trimpath"
log "go: $(go version) (GOCACHE=$(go env GOCACHE), GOMODCACHE=$(go env GOMODCACHE))"

TMP_BIN=""
trap 'if [[ -n "$TMP_BIN" ]]; then rm -f "$TMP_BIN"; fi' EXIT

# build_one NAME PACKAGE LDFLAGS
build_one() {
  local name="$1" pkg="$2" ldflags="$3" start end
  if [[ -x "$OUT/$name" ]]; then
    log "$name already built"
    return 0
  fi
  TMP_BIN="$OUT/.${name}.tmp.$$"
  log "building $name from $pkg (cold: many minutes; nice -n 10)"
  start="$(date +%s)"
  nice -n 10 go build -o "$TMP_BIN" -ldflags "$ldflags" "$pkg" || die "go build $pkg failed (see the go errors above; if go.mod/go.sum are inconsistent, regenerate them with update-gomod.sh)"
  end="$(date +%s)"
  "$TMP_BIN" --version >&2 || die "freshly built $name does not run ('$name --version' failed)"
  mv -f "$TMP_BIN" "$OUT/$name"
  TMP_BIN=""
  log "built $name in $((end - start))s"
  echo "$name built in $((end - start))s at $(date -u +%Y-%m-%dT%H:%M:%SZ) with $(go version | awk '{print $3}')" >>"$OUT/build-info.txt"
}

# Same version stamps as kubernetes' hack/lib/version.sh; without them --version says v0.0.0-master.
K8S_LDFLAGS="-s -w"
for pkgvar in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  K8S_LDFLAGS+=" -X ${pkgvar}.gitVersion=${K8S_VERSION}"
  K8S_LDFLAGS+=" -X ${pkgvar}.gitMajor=1 -X ${pkgvar}.gitMinor=${K8S_MINOR}"
  K8S_LDFLAGS+=" -X ${pkgvar}.gitCommit= -X ${pkgvar}.gitTreeState=clean"
done
# etcd's version is a constant in go.etcd.io/etcd/api/v3/version; only the git SHA is a link-time var.
ETCD_LDFLAGS="-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=go-module-proxy"

build_one etcd go.etcd.io/etcd/server/v3 "$ETCD_LDFLAGS"
build_one kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$K8S_LDFLAGS"

have_both || die "binaries missing in $OUT after the build"
log "done: $OUT"
echo "$OUT"
