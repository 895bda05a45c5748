#!/usr/bin/env bash
# vcsim, the vCenter simulator of govmomi, built from the Go module proxy into a cache outside the clone:
#
#   ${MCO_VCSIM_BIN:-$HOME/.cache/mco-vcsim}/vcsim-<version>/vcsim
#
# The boot image e2e tests run it on loopback as the vCenter a vSphere cluster's MachineSets name.
# Progress goes to stderr; the LAST line of stdout is the directory holding vcsim. Exits non-zero on
# any failure (the tests then fail rather than skip). Safe to run concurrently (flock). Cold: about 70 s
# (measured on the 2-core machine with the Go build cache of the other parts; the module download is seconds).
set -Eeuo pipefail

die() { echo "vcsim/build.sh: ERROR: $*" >&2; exit 1; }
log() { echo ">> $*" >&2; }

# v0.45.1 is upstream MCO's pin; from v0.46 vcsim is a nested module the Go module proxy does not serve
# (go install github.com/vmware/govmomi/vcsim@v0.52.0 finds no such package). An exact version: vcsim's behaviour (which managed objects and methods it implements) is what the
# tests rely on, so a new one is taken deliberately.
GOVMOMI_VERSION="v0.45.1"

ROOT="${MCO_VCSIM_BIN:-${HOME:?HOME is not set and MCO_VCSIM_BIN is empty}/.cache/mco-vcsim}"
OUT="$ROOT/vcsim-$GOVMOMI_VERSION"
mkdir -p "$ROOT"
exec 9>"$ROOT/.lock"
flock -w 1800 9 || die "timed out waiting for $ROOT/.lock"

if [[ ! -x "$OUT/vcsim" ]]; then
  command -v go >/dev/null || die "go not found in PATH (vcsim is built from the Go module proxy)"
  start="$(date +%s)"
  log "building vcsim $GOVMOMI_VERSION (cold: about 70 s)"
  mkdir -p "$OUT.tmp"
  GOBIN="$OUT.tmp" CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false" GOWORK=off \
    nice -n 10 go install "github.com/vmware/govmomi/vcsim@$GOVMOMI_VERSION" >&2 || die "go install vcsim failed"
  "$OUT.tmp/vcsim" -h >/dev/null 2>&1 || [[ $? -eq 2 ]] || die "the freshly built vcsim does not run"
  rm -rf "$OUT" && mv "$OUT.tmp" "$OUT"
  log "built vcsim in $(( $(date +%s) - start ))s"
fi

echo "$OUT"
