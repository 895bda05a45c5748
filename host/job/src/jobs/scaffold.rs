//! What `guests new` asks of a job ([`Contract::scaffold`](super::Contract::scaffold)):
//! the files of a guest crate of the job and the words that fill them.
//! The files every crate has, the folder and name checks, the lock file
//! and the WIT are the command's (`cli/new.rs`).

/// A template: where it goes in the crate, and its text (`{{name}}`,
/// `{{platform}}`, … are filled in).
pub type Template = (&'static str, &'static str);

/// A job's crate template.
pub trait Scaffold: Sync {
    /// The help of the job's `--job` value.
    fn help(&self) -> &'static str;

    /// For a job whose guests each serve one platform: `--platform`,
    /// which a crate of the job then needs; none: one guest serves every
    /// platform, and `--platform` is refused.
    fn platform(&self) -> Option<&'static PlatformOption> {
        None
    }

    /// The job's own files (its guest and two cases its logic decides),
    /// beside the ones every crate has.
    fn templates(&self) -> Vec<Template>;

    /// The README's first sentence: what a guest of this job (for
    /// `platform`) does.
    fn what(&self, platform: Option<&str>) -> String;

    /// The README's word on what the host lets its decisions change.
    fn limits(&self, platform: Option<&str>) -> String;
}

/// `--platform` of a job whose guests each serve one platform.
pub struct PlatformOption {
    /// Its help, after "For `--job <job>`: ".
    pub help: &'static str,
    /// The names it takes (Infrastructure `status.platformStatus.type`).
    pub names: &'static [&'static str],
}
