#!/usr/bin/env bash
# Builds the Python GCP boot image guest into a component:
#   examples/python-gcp/build.sh [OUT]   (default $CARGO_TARGET_DIR/example-guests/python-gcp.wasm)
# componentize-py lives in a venv cached outside the clone, keyed by its
# version ($MCO_COMPONENTIZE_PY_CACHE, default ~/.cache/mco-componentize-py)
# and made on first use; the WIT comes from `mco-host guests wit`
# ($MCO_HOST, default the release build), never from a copy.
set -euo pipefail

version=0.25.1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
host=${MCO_HOST:-$target/release/mco-host}
venv=${MCO_COMPONENTIZE_PY_CACHE:-$HOME/.cache/mco-componentize-py}/$version
out=${1:-$target/example-guests/python-gcp.wasm}

# A venv cannot be moved once made, so a stamp written last marks one
# that finished; anything else is made again.
if [[ ! -e "$venv/.complete" ]]; then
    echo "making the componentize-py $version venv in $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "componentize-py==$version"
    touch "$venv/.complete"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$host" guests wit "$work/wit" >/dev/null
# The app is copied so the build leaves no bytecode in the clone (and
# componentize-py bundles the app's folder, so nothing else is in it).
mkdir "$work/app"
cp -r "$here/guest.py" "$here/gcp.py" "$here/mco_bootimage" "$work/app/"
mkdir -p "$(dirname "$out")"
# --stub-wasi: the component imports no WASI at all (every WASI call
# would trap), so it passes the host's import allowlist unchanged.
(cd "$work/app" && "$venv/bin/componentize-py" --quiet -d "$work/wit" -w boot-image-selector \
    componentize --stub-wasi guest -o "$work/guest.wasm")
mv "$work/guest.wasm" "$out"
echo "Python GCP guest: $out ($(wc -c <"$out") bytes)" >&2
