#!/usr/bin/env bash
# glua, the command-line interpreter of gopher-lua, built from the Go module proxy into a cache outside
# the clone:
#
#   ${MCO_GLUA_BIN:-$HOME/.cache/mco-glua}/glua-<version>/glua
#
# Argo CD runs resource health checks in gopher-lua (Lua 5.1 semantics); the fleet e2e runs
# deploy/fleet/argocd/health.lua in it, at the version Argo CD's go.mod pins. Progress goes to stderr;
# the LAST line of stdout is the directory holding glua. Exits non-zero on any failure (the tests then
# fail rather than skip). Safe to run concurrently (flock). Cold: about 6 s.
set -Eeuo pipefail

die() { echo "glua/build.sh: ERROR: $*" >&2; exit 1; }
log() { echo ">> $*" >&2; }

# Argo CD's go.mod: github.com/yuin/gopher-lua v1.1.2 (argoproj/argo-cd at 37ee0097cf85).
GOPHER_LUA_VERSION="v1.1.2"

ROOT="${MCO_GLUA_BIN:-${HOME:?HOME is not set and MCO_GLUA_BIN is empty}/.cache/mco-glua}"
OUT="$ROOT/glua-$GOPHER_LUA_VERSION"
mkdir -p "$ROOT"
exec 9>"$ROOT/.lock"
flock -w 600 9 || die "timed out waiting for $ROOT/.lock"

if [[ ! -x "$OUT/glua" ]]; then
  command -v go >/dev/null || die "go not found in PATH (glua is built from the Go module proxy)"
  log "building glua (gopher-lua $GOPHER_LUA_VERSION)"
  rm -rf "$OUT.tmp" && mkdir -p "$OUT.tmp"
  GOBIN="$OUT.tmp" CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false" GOWORK=off \
    nice -n 10 go install "github.com/yuin/gopher-lua/cmd/glua@$GOPHER_LUA_VERSION" >&2 \
    || die "go install glua failed"
  echo 'assert(_VERSION == "Lua 5.1")' >"$OUT.tmp/check.lua"
  "$OUT.tmp/glua" "$OUT.tmp/check.lua" || die "the freshly built glua does not run Lua 5.1"
  rm "$OUT.tmp/check.lua"
  rm -rf "$OUT" && mv "$OUT.tmp" "$OUT"
fi

echo "$OUT"
