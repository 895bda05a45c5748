//! `mco-host guests` and its subcommands, apart from the files that
//! implement them, so `guests.rs` (the OCI actions) names none of its
//! siblings and they can share its registry helpers without a cycle.

use clap::{Args, Subcommand};

use super::guests::OciAction;

#[derive(Args)]
pub(super) struct GuestsArgs {
    #[command(subcommand)]
    pub action: Option<GuestsAction>,
}

#[derive(Subcommand)]
pub(super) enum GuestsAction {
    /// Run case folders (the layout of tests/golden/<job>/) against a
    /// module, or against each registry entry's module and candidate; every
    /// case is reported, a patch must converge to noop, exit status 1 if
    /// any case fails.
    Test(super::test::TestArgs),
    /// Time a module on case folders (p50/p99 per decision, each in a
    /// fresh instance, as `run` gives each node) and measure its compile
    /// time, peak linear memory and size, beside the deadline and
    /// memoryMiB its `--registry` entry (or the host's defaults) gives
    /// it; exit status 1 when it does not fit them.
    Bench(super::bench::BenchArgs),
    /// Decide every object of one job with two modules, a candidate and
    /// the active one, from files or the cluster's current objects, and
    /// count where they agree, differ or fail, with a sample of the
    /// differences; exit status 0 once compared (whatever the differences),
    /// 2 on bad input, 3 when a module cannot load.
    Audit(Box<super::guests_audit::AuditArgs>),
    /// Write the WIT package guests are built against
    /// (`mco:machine-config@<version>`, the very files this binary was
    /// built with) into DIR, for wit-bindgen, componentize-py or any
    /// other component tooling; or, with `--push`, publish it as wkg does.
    Wit(super::wit::WitArgs),
    /// Make a Rust guest crate for a job: the WIT package, a decision to
    /// start from, two sample cases and the one command that builds the
    /// component and runs `guests test` on them.
    New(super::new::NewArgs),
    /// Check a module's cosign signatures against a signature policy (an
    /// entry's `verify`, or keys, identities and ClusterImagePolicies
    /// given as flags) and print what each signature proved: signer,
    /// issuer, signing time, log entry and the requirement it met; exit
    /// status 2 with the refusal `run` would give otherwise.
    Verify(Box<super::verify::VerifyArgs>),
    #[command(flatten)]
    Oci(OciAction),
}
