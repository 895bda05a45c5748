#!/usr/bin/env bash
# Installs moto's EC2 server for the e2e tests: tests/tools/moto/build.sh
# prints the path of its `moto_server` and nothing else (errors go to
# stderr). moto comes from PyPI, pinned, in a venv cached outside the
# clone, keyed by its version ($MCO_MOTO_CACHE, default ~/.cache/mco-moto),
# made on first use. Safe to run concurrently: one run makes the venv
# under a lock, the others wait for it.
set -euo pipefail

version=5.2.5
venv=${MCO_MOTO_CACHE:-$HOME/.cache/mco-moto}/$version

# A venv cannot be moved once made, so a stamp written last marks one
# that finished; anything else is made again.
if [[ ! -e "$venv/.complete" ]]; then
    mkdir -p "$(dirname "$venv")"
    exec 9>"$venv.lock"
    flock 9
    if [[ ! -e "$venv/.complete" ]]; then
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input \
            "moto[server]==$version" >&2
        "$venv/bin/moto_server" --help >/dev/null
        touch "$venv/.complete"
    fi
fi
echo "$venv/bin/moto_server"
