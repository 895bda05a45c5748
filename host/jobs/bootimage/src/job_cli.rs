//! How the boot image job describes itself to the command line
//! ([`Job`](mco_job::jobs::Job)): its world, its case folders, their check
//! (`case.rs`) and what `guests bench` times of one (`bench.rs`), its
//! `eval` subcommand (`eval_command.rs`), its `guests new` crate template
//! (`scaffold.rs`), its `run` flags and controller (`run_command.rs`), its
//! section of `status` (`status/`), its `preflight` checks
//! (`preflight.rs`) and its audit from files (`audit.rs`).

use super::inputs::wit_bindings::BootImageSelectorPre;
use super::job::BootImage;
use mco_job::jobs::{Cases, Contract, Eval, Run, Status, unchecked};
use mco_runtime::GuestState;

impl mco_job::jobs::Job for BootImage {
    fn contract(&self) -> &'static Contract {
        &CONTRACT
    }
}

static CONTRACT: Contract = Contract {
    feature_gates: super::FEATURE_GATES,
    cases: Some(&Cases {
        files: super::case::FILES,
        check: super::case::check_with,
        bench: super::bench::case,
    }),
    eval: Some(&Eval {
        name: "bootimage",
        action: super::eval_command::eval,
    }),
    run: Some(&Run {
        action: super::run_command::runner,
    }),
    status: Some(&Status(super::status::Section)),
    preflight: Some(super::preflight::checks),
    file_audit: Some(&super::audit::FROM_FILES),
    scaffold: Some(&super::scaffold::BootImageScaffold),
    ..Contract::new(
        "boot-image-selector",
        unchecked::<BootImageSelectorPre<GuestState>>,
    )
};
