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
        # Offline: a rust-std tarball for the toolchain in use, named by
        # MCO_RUST_STD_WASIP2 (the build machines keep one beside the clone).
        fallback=${MCO_RUST_STD_WASIP2:-$root/../shared/toolchain/rust-std-1.95.0-wasm32-wasip2.tar.xz}
        if [[ ! -f $fallback ]]; then
            echo "guests/build.sh: rustup could not add wasm32-wasip2, and there is no rust-std tarball at $fallback; set MCO_RUST_STD_WASIP2 to one for $(rustc --version)" >&2
            exit 1
        fi
        echo "rustup could not fetch wasm32-wasip2; unpacking $fallback" >&2
        tar -xJf "$fallback" -C "$(rustc --print sysroot)/lib/rustlib/"
    fi
fi

cd "$root"
cargo build --locked --target wasm32-wasip2 --profile guest \
    -p mco-mcn -p mco-bootimage-gcp -p mco-bootimage-aws -p mco-bootimage-azure \
    -p mco-bootimage-vsphere
install -D -m 0644 "$out/mco_mcn.wasm" "$target/release/guests/mcn.wasm"
for platform in gcp aws azure vsphere; do
    install -m 0644 "$out/mco_bootimage_$platform.wasm" "$target/release/guests/bootimage-$platform.wasm"
done
echo "guests installed in $target/release/guests" >&2

if [[ "${1:-}" == "--test" ]]; then
    tests=$target/test-guests
    mkdir -p "$tests"
    # The rollout tests' candidate: the MCN guest with its test faults. It
    # overwrites $out/mco_mcn.wasm, so the shipped one is installed above
    # first; a later plain build puts the shipped bytes back there.
    cargo build --locked --target wasm32-wasip2 --profile guest -p mco-mcn --features test-faults
    install -m 0644 "$out/mco_mcn.wasm" "$tests/mcn-faults.wasm"
    # The same for the boot image rollout tests: the AWS guest with its faults.
    cargo build --locked --target wasm32-wasip2 --profile guest -p mco-bootimage-aws --features test-faults
    install -m 0644 "$out/mco_bootimage_aws.wasm" "$tests/bootimage-aws-faults.wasm"
    for variant in "" forbidden-import import-filesystem import-sockets import-clocks \
        import-random wrong-world newer-major previous-minor flood; do
        cargo build --locked --target wasm32-wasip2 --profile guest -p mco-faulty-guest ${variant:+--features "$variant"}
        install -m 0644 "$out/mco_faulty_guest.wasm" "$tests/faulty${variant:+-$variant}.wasm"
    done
    # One build of the hostile guest; each variant is its name written over
    # the padded marker in the built bytes (guests/hostile/src/lib.rs).
    cargo build --locked --target wasm32-wasip2 --profile guest -p mco-hostile-guest
    for variant in instance-type repoint-user-data foreign-secret foreign-merge \
        stub-without-user-data unknown-ami not-an-object gcp-data-disk gcp-reorder \
        azure-outside-image vsphere-import-url vsphere-import-folder vsphere-import-vcenter \
        vsphere-import-template vsphere-import-current vsphere-other-field ec2-unlisted \
        ec2-above-release sleeper; do
        python3 - "$out/mco_hostile_guest.wasm" "$tests/hostile-$variant.wasm" "$variant" <<'PY'
import sys
source, dest, variant = sys.argv[1:]
marker = b"mco-hostile-variant:"
padded = marker + b"_" * 28
data = open(source, "rb").read()
if data.count(padded) != 1:
    sys.exit(f"{source}: the variant marker is there {data.count(padded)} times, not once")
name = variant.encode()
if len(name) > 28:
    sys.exit(f"variant {variant} is longer than the marker's 28 bytes")
open(dest, "wb").write(data.replace(padded, marker + name + b"_" * (28 - len(name))))
PY
    done
    echo "test guests installed in $tests" >&2
fi
