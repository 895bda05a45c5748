#!/usr/bin/env bash
# The OCI parts the tests run against, fetched once into a cache outside the clone:
#
#   ${MCO_OCI_BIN:-$HOME/.cache/mco-oci}/registry-<version>/registry   CNCF distribution (Debian's docker-registry)
#   ${MCO_OCI_BIN:-$HOME/.cache/mco-oci}/oras-<version>/oras           oras, built from the Go module proxy
#   ${MCO_OCI_BIN:-$HOME/.cache/mco-oci}/cosign-<version>/cosign       cosign, built from the Go module proxy
#
# The registry is extracted from its .deb rather than installed: the package's postinst starts a system
# service listening on every interface. Progress goes to stderr; the LAST line of stdout is the cache root.
# Exits non-zero on any failure (the tests then fail rather than skip). Cold: about a minute for the
# registry and oras; cosign much longer (30 min measured with an empty Go module cache on a 2-core
# machine shared with two other builds, load 7-10), then cached.
set -Eeuo pipefail

die() { echo "oci/build.sh: ERROR: $*" >&2; exit 1; }
log() { echo ">> $*" >&2; }

REGISTRY_DEB_VERSION="2.8.2+ds1-1"
ORAS_VERSION="v1.3.6"
# v3: writes both signature forms (--new-bundle-format=true|false) and builds on Go 1.26.
COSIGN_VERSION="v3.1.3"

ROOT="${MCO_OCI_BIN:-${HOME:?HOME is not set and MCO_OCI_BIN is empty}/.cache/mco-oci}"
REGISTRY_DIR="$ROOT/registry-$REGISTRY_DEB_VERSION"
ORAS_DIR="$ROOT/oras-$ORAS_VERSION"
COSIGN_DIR="$ROOT/cosign-$COSIGN_VERSION"
mkdir -p "$ROOT"
exec 9>"$ROOT/.lock"
flock -w 1800 9 || die "timed out waiting for $ROOT/.lock"

if [[ ! -x "$REGISTRY_DIR/registry" ]]; then
  command -v apt-get >/dev/null || die "apt-get not found: the registry comes from Debian's docker-registry package"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  log "fetching docker-registry $REGISTRY_DEB_VERSION"
  if ! (cd "$work" && apt-get download "docker-registry=$REGISTRY_DEB_VERSION" >&2); then
    log "apt-get download failed; refreshing the package lists once"
    apt-get update >&2 || die "apt-get update failed"
    (cd "$work" && apt-get download "docker-registry=$REGISTRY_DEB_VERSION" >&2) || die "cannot download docker-registry"
  fi
  dpkg-deb -x "$work"/docker-registry_*.deb "$work/x" || die "cannot extract the docker-registry package"
  mkdir -p "$REGISTRY_DIR"
  install -m 0755 "$work/x/usr/bin/docker-registry" "$REGISTRY_DIR/registry"
  log "registry in $REGISTRY_DIR"
fi

if [[ ! -x "$ORAS_DIR/oras" ]]; then
  command -v go >/dev/null || die "go not found in PATH (oras is built from the Go module proxy)"
  start="$(date +%s)"
  log "building oras $ORAS_VERSION (cold: about 35 s)"
  GOBIN="$ORAS_DIR" CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false" GOWORK=off \
    nice -n 10 go install "oras.land/oras/cmd/oras@$ORAS_VERSION" >&2 || die "go install oras failed"
  "$ORAS_DIR/oras" version >&2 || die "the freshly built oras does not run"
  log "built oras in $(( $(date +%s) - start ))s"
fi

if [[ ! -x "$COSIGN_DIR/cosign" ]]; then
  command -v go >/dev/null || die "go not found in PATH (cosign is built from the Go module proxy)"
  start="$(date +%s)"
  log "building cosign $COSIGN_VERSION (cold: up to 30 min, most of it compiling its cloud KMS SDKs)"
  GOBIN="$COSIGN_DIR" CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false" GOWORK=off \
    nice -n 10 go install "github.com/sigstore/cosign/v3/cmd/cosign@$COSIGN_VERSION" >&2 || die "go install cosign failed"
  "$COSIGN_DIR/cosign" version >&2 || die "the freshly built cosign does not run"
  log "built cosign in $(( $(date +%s) - start ))s"
fi

echo "$ROOT"
