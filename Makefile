# Two entry points do all set-up on a fresh machine (Rust with rustup and Go
# assumed): `make demo` runs the main job, `make test` the tests.
# Build outputs go to $CARGO_TARGET_DIR (default ./target); keeping it warm
# between runs is what makes them fast.

export CARGO_TARGET_DIR ?= $(CURDIR)/target
WASMTIME_VERSION := 48.0.8
WASMTIME := $(CARGO_TARGET_DIR)/tools/bin/wasmtime

.PHONY: demo test guests host crds bench

## demo: a local control plane, mco-host run, and a rolling update across
## the workers, printing the MCN table after every step.
demo: guests host
	cargo run --locked --release -p mco-e2e --example demo

## test: formatting, lints, unit, golden, hostile-guest and CLI tests.
test: guests host $(WASMTIME)
	cargo fmt --all --check
	cargo clippy --locked --release --workspace --all-targets -- -D warnings
	cargo test --locked --release --workspace

## bench: wasm against native, MachineConfigNode and boot image guests.
bench: guests
	cargo bench --locked -p mco-host --benches

guests:
	guests/build.sh --test

host:
	cargo build --locked --release -p mco-host

## crds: regenerate the CRDs under deploy/ from the Rust types.
crds: host
	$(CARGO_TARGET_DIR)/release/mco-host crds > deploy/crds/machineconfignodes.yaml

# The stock CLI, for the offline-run test (a slim build, about 4 minutes).
$(WASMTIME):
	cargo install --locked --quiet wasmtime-cli --version $(WASMTIME_VERSION) \
		--root $(CARGO_TARGET_DIR)/tools --no-default-features \
		--features run,compile,cranelift,component-model,cache,parallel-compilation,pooling-allocator,wat
