# Two entry points do all set-up on a fresh machine (Rust with rustup and Go
# assumed): `make demo` runs the main job, `make test` the tests.
# Build outputs go to $CARGO_TARGET_DIR (default ./target); keeping it warm
# between runs is what makes them fast.

export CARGO_TARGET_DIR ?= $(CURDIR)/target
WASMTIME := $(CARGO_TARGET_DIR)/tools/bin/wasmtime
WKG_VERSION := 0.16.1
WKG := $(CARGO_TARGET_DIR)/tools/bin/wkg

.PHONY: demo test guests test-guests python-guest host install crds docs-ref bench bench-scale fuzz

## demo: a local control plane, mco-host run, and a rolling update across
## the workers, printing the MachineConfigNodes as they change; then a new
## boot image stream. The harness's own progress lines (stderr) go to
## $(DEMO_LOG), printed only if the demo fails. On a first run the control
## plane is built from Go sources beside the Rust build.
DEMO_LOG := $(CARGO_TARGET_DIR)/demo.log
.PHONY: control-plane
demo:
	$(MAKE) --no-print-directory -j3 guests host control-plane
	$(call run_example,demo) 2>$(DEMO_LOG) || { cat $(DEMO_LOG) >&2; exit 1; }
control-plane:
	tests/tools/envtest/build.sh >/dev/null

## test: formatting, lints, unit, golden, hostile-guest, CLI and e2e tests.
## On 2 cores most of the time of a plain serial run was idle CPU: the Rust
## builds have single-threaded stretches, an e2e test mostly waits on its
## control plane, and the Go-built parts were built inside the first test
## that needed them. So the parts are built side by side, and the e2e
## modules run TEST_JOBS at a time, each in a process of its own (the e2e
## tests are one binary, `tests/e2e/tests/main.rs`; a process starts control
## planes of its own, the tests inside one run one after another). Every
## job's output is printed whole when it ends.
TEST_JOBS ?= 3
# The e2e binary's modules: a file each, and `support`'s own tests.
E2E_TESTS := $(sort support $(filter-out main,$(basename $(notdir $(wildcard tests/e2e/tests/*.rs)))))
# The build variants of the faulty guest: every feature it declares.
FAULTY_VARIANTS := $(shell sed -n '/^\[features\]/,/^\[target/s/^\([a-z-]*\) = .*/\1/p' guests/faulty/Cargo.toml)
# The host's integration tests are one binary (`host/tests/main.rs`); the
# other crates' are a binary per file.
OTHER_TESTS := $(sort host $(basename $(notdir $(wildcard host/*/tests/*.rs guests/*/tests/*.rs))))
test:
	$(MAKE) --no-print-directory -j4 --output-sync=target test-guests test-build test-parts $(WASMTIME) $(WKG)
	examples/python-gcp/build.sh
	cargo fmt --all --check
	cargo clippy --locked --release --workspace --all-targets -- -D warnings
	# The guests' wasm-only code (component glue, the hostile guest) too.
	cargo clippy --locked --target wasm32-wasip2 --profile guest -p mco-guest-memcmp \
		-p mco-mcn -p mco-bootimage -p mco-bootimage-gcp -p mco-bootimage-aws \
		-p mco-bootimage-azure -p mco-bootimage-vsphere -p mco-faulty-guest \
		-p mco-floor-guest -p mco-hostile-guest -- -D warnings
	# And their test builds: the fault features, and each faulty variant.
	cargo clippy --locked --target wasm32-wasip2 --profile guest -p mco-mcn -p mco-bootimage-aws \
		--features mco-mcn/test-faults,mco-bootimage-aws/test-faults -- -D warnings
	for variant in $(FAULTY_VARIANTS); do \
		cargo clippy --locked --target wasm32-wasip2 --profile guest -p mco-faulty-guest \
			--features $$variant -- -D warnings || exit 1; \
	done
	$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target test-unit $(E2E_TESTS:%=test-e2e-%)

# Every target runs with the whole workspace selected, as `cargo test
# --workspace` resolves features: a narrower selection unifies features
# differently and would rebuild tokio, kube and wasmtime once more. The host
# binary the tests start is built here too, with those same features.
.PHONY: test-build test-parts test-unit
test-build:
	cargo test --locked --release --workspace --no-run
test-unit:
	cargo test --locked --release --workspace --lib --bins
	cargo test --locked --release --workspace --doc
	cargo test --locked --release --workspace $(OTHER_TESTS:%=--test %)
# A module's tests by a filter on their path (`rollout::`), and skipping a
# module whose name ends in this one's (`bootimage_rollout::`): a filter
# matches anywhere in a test's path.
test-e2e-%:
	cargo test --locked --release --workspace --test e2e -- $*:: $(patsubst %,--skip %::,$(filter %_$*,$(E2E_TESTS)))
# The Go-built, PyPI and Debian parts the e2e tests start (each script caches by
# version and is safe to run concurrently; the tests call them too).
test-parts:
	tests/tools/envtest/build.sh >/dev/null
	tests/tools/oci/build.sh >/dev/null
	tests/tools/vcsim/build.sh >/dev/null
	tests/tools/moto/build.sh >/dev/null
	deploy/monitoring/promtool.sh >/dev/null
	tests/tools/glua/build.sh >/dev/null

## bench: wasm against native, MachineConfigNode and boot image guests.
bench: guests
	cargo build --locked --target wasm32-wasip2 --profile guest -p mco-floor-guest
	# The workspace selected, as for `make host`: the host's features.
	cargo bench --locked --workspace --benches

## bench-scale: the MCN controller at 5,000 nodes and a wave of 500 on the
## real control plane, beside a plain client's time for the same writes
## (MCO_SCALE_NODES, MCO_SCALE_WAVE; MCO_SCALE_SHADOW: a module to run as
## the MCN guest's shadow candidate, its CPU time beside the guest's). Not
## part of `make test`.
bench-scale: guests host
	cargo build --locked --target wasm32-wasip2 --profile guest -p mco-floor-guest
	$(call run_example,bench_scale)

## fuzz: every cargo-fuzz target (fuzz/) for FUZZ_SECONDS each (default
## 180), on nightly with cargo-fuzz (installed if missing). Not part of
## `make test`. New inputs go to $(FUZZ_WORK), crashes to fuzz/artifacts/;
## the small seed corpus in fuzz/corpus/ is only read.
FUZZ_SECONDS ?= 180
FUZZ_TARGETS := stream provider_spec guest_output simple_signing bundle docker_config artifact certificate_signature trust_root
FUZZ_WORK ?= $(CARGO_TARGET_DIR)/fuzz-corpus
FUZZ_TARGET_DIR ?= $(CARGO_TARGET_DIR)/fuzz
fuzz:
	@rustup toolchain list | grep -q '^nightly' || { echo 'make fuzz needs a nightly toolchain: rustup toolchain install nightly' >&2; exit 2; }
	cargo fuzz --version >/dev/null 2>&1 || cargo install --locked cargo-fuzz
	set -e; cd fuzz && for target in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_WORK)/$$target; \
		cargo +nightly fuzz run --target-dir $(FUZZ_TARGET_DIR) $$target \
			$(FUZZ_WORK)/$$target corpus/$$target -- -max_total_time=$(FUZZ_SECONDS); \
	done

## guests: build the guests; with GUEST_REGISTRY=host[:port]/prefix also
## push each as an OCI artifact, GUEST_REGISTRY/<guest>:$(GUEST_TAG) (the
## digests are printed; MCO_PLAIN_HTTP_REGISTRIES for a registry without TLS).
GUEST_TAG ?= latest
SHIPPED_GUESTS := mcn bootimage-gcp bootimage-aws bootimage-azure bootimage-vsphere
guests:
	guests/build.sh
ifneq ($(GUEST_REGISTRY),)
	$(MAKE) host
	set -e; for guest in $(SHIPPED_GUESTS); do \
		$(CARGO_TARGET_DIR)/release/mco-host guests push \
			$(CARGO_TARGET_DIR)/release/guests/$$guest.wasm $(GUEST_REGISTRY)/$$guest:$(GUEST_TAG); \
	done
endif

## test-guests: the guests and the adversarial ones only the tests use
## (about 1.5 minutes even when nothing changed, so `make demo` skips them).
test-guests:
	guests/build.sh --test

## python-guest: the boot image guest written in Python (examples/python-gcp),
## componentized from a venv cached in ~/.cache/mco-componentize-py, into
## $(CARGO_TARGET_DIR)/example-guests/python-gcp.wasm.
python-guest: host
	examples/python-gcp/build.sh

## host: mco-host and the examples (demo, bench-scale), built as `cargo
## test --workspace` builds them: the same packages and dev-dependencies,
## so the same features, and what `make test` built is reused. `-p
## mco-host` alone unifies features differently and rebuilds tokio, kube
## and wasmtime (16 minutes on 2 cores).
host:
	cargo build --locked --release --workspace --bins --examples

# An example of the end-to-end crate, as `make host` built it (`cargo run
# -p mco-e2e` would build it with other features); the harness finds this
# clone's files by CARGO_MANIFEST_DIR, as under cargo.
run_example = CARGO_MANIFEST_DIR=$(CURDIR)/tests/e2e $(CARGO_TARGET_DIR)/release/examples/$(1)

## install: mco-host and its guests under PREFIX (default ~/.local):
## PREFIX/lib/mco-host/mco-host with its guests beside it in guests/, where
## it looks by default, and PREFIX/bin/mco-host and PREFIX/bin/kubectl-mco
## linking to it (the host finds its guests beside the file a link names;
## a copy elsewhere would not find them).
PREFIX ?= $(HOME)/.local
install: guests host
	install -D -m 0755 $(CARGO_TARGET_DIR)/release/mco-host $(PREFIX)/lib/mco-host/mco-host
	install -D -m 0644 -t $(PREFIX)/lib/mco-host/guests \
		$(SHIPPED_GUESTS:%=$(CARGO_TARGET_DIR)/release/guests/%.wasm)
	mkdir -p $(PREFIX)/bin
	ln -sfn ../lib/mco-host/mco-host $(PREFIX)/bin/mco-host
	ln -sfn ../lib/mco-host/mco-host $(PREFIX)/bin/kubectl-mco

## crds: regenerate the CRDs under deploy/ from the Rust types.
crds: host
	$(CARGO_TARGET_DIR)/release/mco-host crds --out-dir deploy

## docs-ref: regenerate the references under docs/reference/ from the code:
## the CLI (cli.md), the metric families (metric-families.md) and the shell
## completions (completions/).
docs-ref: host
	$(CARGO_TARGET_DIR)/release/mco-host docs --out-dir docs/reference

# wasm-pkg-tools' CLI, for the test that fetches the WIT package as wkg does.
# A debug build: only that test runs it, on a few KiB, and the release
# build took about twice the CPU time (docs/dev/records/ci-timings.md).
$(WKG):
	cargo install --locked --quiet --debug wkg --version $(WKG_VERSION) --root $(CARGO_TARGET_DIR)/tools \
		--target-dir $(CARGO_TARGET_DIR)/install/wkg

# The stock CLI, for the offline-run test: the Bytecode Alliance's release
# binary, fetched and checked (seconds; building it took about 4 minutes).
$(WASMTIME): tests/tools/wasmtime/fetch.sh
	tests/tools/wasmtime/fetch.sh $@
