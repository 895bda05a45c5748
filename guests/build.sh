#!/usr/bin/env bash
# Builds the guest components for wasm32-wasip2 and installs them where
# mco-host looks by default: guests/ beside the binary
# ($CARGO_TARGET_DIR/release/guests). With --test it also builds the
# adversarial guests the host tests use ($CARGO_TARGET_DIR/test-guests).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
out=$target/wasm32-wasip2/guest

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
    if ! rustup target add wasm32-wasip2; then
        # Offline fallback shipped beside the project for Rust 1.95.0.
        fallback=$root/../shared/toolchain/rust-std-1.95.0-wasm32-wasip2.tar.xz
        echo "rustup could not fetch wasm32-wasip2; unpacking $fallback" >&2
        tar -xJf "$fallback" -C "$(rustc --print sysroot)/lib/rustlib/"
    fi
fi

cd "$root"
cargo build --locked --target wasm32-wasip2 --profile guest \
    -p mco-mcn -p mco-bootimage-gcp -p mco-bootimage-aws -p mco-bootimage-azure
install -D -m 0644 "$out/mco_mcn.wasm" "$target/release/guests/mcn.wasm"
for platform in gcp aws azure; do
    install -m 0644 "$out/mco_bootimage_$platform.wasm" "$target/release/guests/bootimage-$platform.wasm"
done
echo "guests installed in $target/release/guests" >&2

if [[ "${1:-}" == "--test" ]]; then
    tests=$target/test-guests
    mkdir -p "$tests"
    for variant in "" forbidden-import import-filesystem import-sockets import-clocks \
        import-random wrong-world newer-major previous-minor flood; do
        cargo build --locked --target wasm32-wasip2 --profile guest -p mco-faulty-guest ${variant:+--features "$variant"}
        install -m 0644 "$out/mco_faulty_guest.wasm" "$tests/faulty${variant:+-$variant}.wasm"
    done
    for variant in instance-type repoint-user-data foreign-secret foreign-merge \
        stub-without-user-data unknown-ami not-an-object gcp-data-disk gcp-reorder \
        azure-outside-image sleeper; do
        cargo build --locked --target wasm32-wasip2 --profile guest -p mco-hostile-guest --features "$variant"
        install -m 0644 "$out/mco_hostile_guest.wasm" "$tests/hostile-$variant.wasm"
    done
    echo "test guests installed in $tests" >&2
fi
