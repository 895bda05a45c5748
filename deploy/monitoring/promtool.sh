#!/usr/bin/env bash
# Prints the path of a cached `promtool`, fetching it on first use.
#
# Preferred: Debian's `prometheus` package, downloaded with apt-get and
# unpacked with dpkg-deb (never installed), cached outside the clone by
# package version in ~/.cache/mco-promtool/<version>/ (MCO_PROMTOOL_CACHE).
# Fallback when apt cannot provide it: `go install` of
# github.com/prometheus/prometheus/cmd/promtool from the Go module proxy,
# cached by module version the same way. Any failure exits non-zero with a
# message: the alert tests fail loudly rather than skip.
set -euo pipefail

CACHE=${MCO_PROMTOOL_CACHE:-$HOME/.cache/mco-promtool}
GO_VERSION=${MCO_PROMTOOL_GO_VERSION:-v0.308.0}

works() { "$1" --version >/dev/null 2>&1; }

from_debian() {
    command -v apt-cache >/dev/null && command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || return 1
    local version
    version=$(apt-cache policy prometheus 2>/dev/null | awk '/Candidate:/ {print $2}')
    [ -n "$version" ] && [ "$version" != "(none)" ] || return 1
    local dir="$CACHE/debian-${version//[:+~]/_}"
    if ! works "$dir/promtool"; then
        local tmp
        tmp=$(mktemp -d)
        trap 'rm -rf "$tmp"' RETURN
        (cd "$tmp" && apt-get download -q "prometheus=$version" >&2) || return 1
        dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/root" || return 1
        mkdir -p "$dir"
        cp "$tmp/root/usr/bin/promtool" "$dir/promtool.new" && mv "$dir/promtool.new" "$dir/promtool"
    fi
    works "$dir/promtool" && echo "$dir/promtool"
}

from_go_proxy() {
    command -v go >/dev/null || return 1
    local dir="$CACHE/go-$GO_VERSION"
    if ! works "$dir/promtool"; then
        GOBIN="$dir" GOFLAGS=-mod=mod go install \
            "github.com/prometheus/prometheus/cmd/promtool@$GO_VERSION" >&2 || return 1
    fi
    works "$dir/promtool" && echo "$dir/promtool"
}

from_debian || from_go_proxy || {
    echo "promtool.sh: could not get promtool from Debian's prometheus package or the Go module proxy" >&2
    exit 1
}
