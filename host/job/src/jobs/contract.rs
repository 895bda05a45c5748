//! A job's [`Contract`]: what is constant of it, and each capability it
//! has. A capability that takes flags holds them as its own typed
//! `clap::Args` beside its action ([`Eval`], [`Run`], [`Status`]), so the
//! flags a command adds and the ones its action reads are one type (for
//! `status`, the section's [`StatusSection::Flags`]); the host sees each
//! through an object-safe trait ([`EvalCommand`], [`RunCommand`],
//! [`StatusCommand`]) that builds the flags and hands the action what it
//! parsed, so no job reads a `clap::ArgMatches`.

use std::path::Path;

use clap::{ArgMatches, Args, Command, FromArgMatches};
use futures::future::BoxFuture;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use prometheus_client::registry::Registry;
use serde_json::Value;

use super::bench::{BenchCaseError, BenchModule, Timed};
use super::scaffold::Scaffold;
use super::{EvalError, Modules, Role};
use crate::audit_files::FileAudit;
use crate::case_check::{CaseFailure, Pass};
use crate::feature_gates::Modelled;
use crate::preflight::Checks;
use crate::run_context::{Runner, RunnerError};
use crate::status_section::{Changes, Flags, ReadError, SectionInputs, StatusSection};
use mco_registry::{Fetched, Served};
use mco_runtime::{LoadError, Runtime};

/// What the command line and `run` know of a job: constant, built with
/// [`Contract::new`] and a field for each capability the job has, so a
/// job has only the capabilities it names.
pub struct Contract {
    /// The WIT world a module of the job is built for (it exports the
    /// job's interface), as `guests inspect` names it.
    pub world: &'static str,
    /// Loads a fetched entry's modules with every check `run` makes but
    /// the smoke evaluation, so a case, `eval` or `guests audit` runs any
    /// module that links ([`unchecked`]).
    pub load_unchecked: fn(&Runtime, &Fetched) -> Result<Served, LoadError>,
    /// The feature gates the job's decisions follow, each with its value
    /// in the Default feature set of the release the project models
    /// (openshift/api `features/features.go`): the host follows every
    /// job's, reports them (`mco_feature_gate`) and hands them to guests.
    pub feature_gates: &'static Modelled,
    /// `guests test`, `guests bench` and the golden tests: its case
    /// folders.
    pub cases: Option<&'static Cases>,
    /// `eval <name>`.
    pub eval: Option<&'static dyn EvalCommand>,
    /// `run`: its flags and what it starts.
    pub run: Option<&'static dyn RunCommand>,
    /// `status`: its section of the view and its flags.
    pub status: Option<&'static dyn StatusCommand>,
    /// `preflight`: what it checks of a cluster before the host is
    /// installed there; without it, `preflight` does not list the job.
    pub preflight: Option<Preflight>,
    /// `guests audit --job <this job>` from files; without it, the job is
    /// audited on the cluster only (`JobKind::audit`).
    pub file_audit: Option<&'static FileAudit>,
    /// `guests new --job <this job>`: its crate template.
    pub scaffold: Option<&'static dyn Scaffold>,
    /// `crds`: the CustomResourceDefinitions the job writes to that the
    /// host ships, each with the path under `deploy/` that keeps it.
    pub crds: Option<fn() -> Vec<Crd>>,
}

/// A CustomResourceDefinition and the path under `deploy/` that keeps it.
pub type Crd = (&'static str, CustomResourceDefinition);

impl Contract {
    /// A job of `world` whose modules load with `load_unchecked`, with no
    /// capability and no feature gate.
    pub const fn new(
        world: &'static str,
        load_unchecked: fn(&Runtime, &Fetched) -> Result<Served, LoadError>,
    ) -> Contract {
        Contract {
            world,
            load_unchecked,
            feature_gates: &[],
            cases: None,
            eval: None,
            run: None,
            status: None,
            preflight: None,
            file_audit: None,
            scaffold: None,
            crds: None,
        }
    }
}

/// [`Contract::load_unchecked`] of a job whose modules are guests of
/// world `W`.
pub fn unchecked<W>(runtime: &Runtime, fetched: &Fetched) -> Result<Served, LoadError>
where
    W: mco_runtime::World + Send + Sync + 'static,
{
    Served::load(runtime, fetched, |_: &mco_runtime::Guest<W>| {
        Ok::<_, std::convert::Infallible>(())
    })
}

/// A job's case folders (in the layout of `tests/golden/<job>/`) and what
/// is done with one.
pub struct Cases {
    /// The object files that make a case folder this job's, beside
    /// `expected.json`.
    pub files: &'static [&'static str],
    /// Checks the case in a folder against a role's module of the job's
    /// entry, from the modules given, under every job's modelled feature
    /// gates (as `run` follows them): the entry that decided (none: the
    /// host rules decided alone, or no module is named for it) and the
    /// outcome.
    pub check: fn(&Path, &mut dyn Modules, Role, &Modelled) -> Checked,
    /// `guests bench`: times some decisions of the case in a folder with
    /// the module under test as the guest of the entry the case reaches,
    /// under every job's modelled feature gates; `Ok(None)`: the host
    /// rules decide the case alone.
    pub bench: fn(&Path, &mut BenchModule, u32, &Modelled) -> Benched,
}

/// What timing a case's decisions gave: `None` when the host rules
/// decide the case alone.
pub type Benched = Result<Option<Timed>, BenchCaseError>;

/// The entry that decided a case, if any, and the outcome.
pub type Checked = (Option<mco_registry::EntryName>, Result<Pass, CaseFailure>);

/// A job's checks of a cluster for the host's ServiceAccount (the user
/// name given), with every job's modelled feature gates.
pub type Preflight = for<'a> fn(&'a kube::Client, &'a str, &'a Modelled) -> Checks<'a>;

/// `eval <name>`: the subcommand's arguments `A` and the decision made
/// of them, as the eval contract prints it.
pub struct Eval<A> {
    /// The subcommand's name.
    pub name: &'static str,
    /// The decision on the arguments given, with the modules of the
    /// entries it needs and every job's modelled feature gates.
    pub action: fn(A, &mut dyn Modules, &Modelled) -> Result<Value, EvalError>,
}

/// What the host asks of an [`Eval`], whatever its arguments.
pub trait EvalCommand: Sync {
    fn name(&self) -> &'static str;

    /// The subcommand with its arguments.
    fn command(&self) -> Command;

    /// The decision on the subcommand's `matches`.
    fn eval(
        &self,
        matches: &ArgMatches,
        modules: &mut dyn Modules,
        gates: &Modelled,
    ) -> Result<Value, EvalError>;
}

impl<A: Args> EvalCommand for Eval<A> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn command(&self) -> Command {
        A::augment_args(Command::new(self.name))
    }

    fn eval(
        &self,
        matches: &ArgMatches,
        modules: &mut dyn Modules,
        gates: &Modelled,
    ) -> Result<Value, EvalError> {
        let args = A::from_arg_matches(matches).map_err(|e| EvalError::Other(e.to_string()))?;
        (self.action)(args, modules, gates)
    }
}

/// `run`: the job's flags `A` and what it starts with them.
pub struct Run<A> {
    /// Registers the job's series in the registry given (prefixed
    /// already) whether the job starts or not, so `/metrics` describes
    /// the same families on every replica, and makes what starts from
    /// the flags; none: nothing to start.
    pub action: fn(A, &mut Registry) -> Started,
}

/// What a job's `run` side makes of its flags: what starts, if anything.
pub type Started = Result<Option<Box<dyn Runner>>, RunnerError>;

/// What `run` asks of a [`Run`], whatever its flags.
pub trait RunCommand: Sync {
    /// `command` with the job's flags added.
    fn args(&self, command: Command) -> Command;

    /// The job's registration and runner, its flags read from `matches`
    /// (the `run` subcommand's, with every job's).
    fn runner(&self, matches: &ArgMatches, registry: &mut Registry) -> Started;
}

impl<A: Args> RunCommand for Run<A> {
    fn args(&self, command: Command) -> Command {
        A::augment_args(command)
    }

    fn runner(&self, matches: &ArgMatches, registry: &mut Registry) -> Started {
        (self.action)(A::from_arg_matches(matches)?, registry)
    }
}

/// `status`: the job's section of the view, which the view shows after
/// the sections of the jobs listed before it, with the section's own
/// flags ([`StatusSection::Flags`]).
pub struct Status<S>(pub S);

/// What the view asks of a [`Status`], whatever its flags: the
/// [`StatusSection`]'s, each given its flags parsed from the command's.
pub trait StatusCommand: Sync {
    /// `command` with the job's flags added, after the view's own.
    fn args(&self, command: Command) -> Command;

    /// [`StatusSection::read`].
    fn read<'a>(
        &'a self,
        client: &'a kube::Client,
        flags: &'a Flags,
    ) -> BoxFuture<'a, Result<Box<dyn SectionInputs>, ReadError>>;

    /// [`StatusSection::decode`].
    fn decode(&self, objects: &[Value], flags: &Flags)
    -> Result<Box<dyn SectionInputs>, ReadError>;

    /// [`StatusSection::changes`].
    fn changes(&self, client: &kube::Client) -> Vec<Changes>;
}

impl<S: StatusSection> StatusCommand for Status<S> {
    fn args(&self, command: Command) -> Command {
        S::Flags::augment_args(command)
    }

    fn read<'a>(
        &'a self,
        client: &'a kube::Client,
        flags: &'a Flags,
    ) -> BoxFuture<'a, Result<Box<dyn SectionInputs>, ReadError>> {
        match S::Flags::from_arg_matches(&flags.matches) {
            Ok(own) => self.0.read(client, &flags.namespace, own),
            Err(e) => Box::pin(std::future::ready(Err(e.into()))),
        }
    }

    fn decode(
        &self,
        objects: &[Value],
        flags: &Flags,
    ) -> Result<Box<dyn SectionInputs>, ReadError> {
        self.0
            .decode(objects, S::Flags::from_arg_matches(&flags.matches)?)
    }

    fn changes(&self, client: &kube::Client) -> Vec<Changes> {
        self.0.changes(client)
    }
}
