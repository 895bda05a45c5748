//! The registry as cluster objects: one `MachineConfigGuest` per job, so
//! that `kubectl get machineconfigguests` answers "what runs where?", each job
//! with its own row, conditions and RBAC-able name, and a team owning one
//! guest edits its object alone. The spec is a registry entry in its full
//! form, parsed by the same code as a registry file; a job without an object
//! runs the guest installed in the image. The status is written by the lease
//! holder only, at most once per `--registry-poll` (or at once, when a
//! rollout moves) and only when it changed. What it shows:
//! docs/reference/crds.md and docs/guests/rollout.md.

pub mod audit;
mod audit_status;

pub use audit_status::{AuditSpec, AuditState, AuditStatus};

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use kube::api::{ListParams, Patch, PatchParams};
use kube::{Api, CustomResource, CustomResourceExt, KubeSchema, Resource, ResourceExt};
use serde::{Deserialize, Serialize};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{JSON, ValidationRule};

use super::canary::{self, CanaryError, CanarySchemaError, Selection};
use super::entries::RawFull;
use super::job::{EntryName, JobKind, Jobs};
use super::rollout::{self, Declared, RolloutSpec, RolloutStatus, Stage};
use super::serving::{JobStatus, Status};
use super::set::GuestSet;
use super::table::{Registry, RegistryError};
use crate::metrics::{JobResultLabels, Metrics};
use mco_cluster::FIELD_MANAGER;
use mco_cluster::conditions::{Transition, merge};

/// Which module serves one job of the host. Cluster-scoped; the name is
/// free, the job is in the spec.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "mco-wasm.io",
    version = "v1alpha1",
    kind = "MachineConfigGuest",
    plural = "machineconfigguests",
    singular = "machineconfigguest",
    shortname = "mcg",
    status = "MachineConfigGuestStatus",
    doc = "MachineConfigGuest names the WebAssembly module that serves one job of mco-host.",
    validation = Rule::new("[has(self.spec.module), has(self.spec.configMap), has(self.spec.oci)].filter(x, x).size() == 1").message("give exactly one of spec.module, spec.configMap and spec.oci"),
    validation = Rule::new("!has(self.spec.rollout) || has(self.spec.candidate)").message("spec.rollout rolls out spec.candidate, which is missing"),
    validation = Rule::new("!has(self.spec.audit) || has(self.spec.candidate)").message("spec.audit compares spec.candidate with the module, and spec.candidate is missing"),
    printcolumn(name = "Job", type_ = "string", json_path = ".spec.job"),
    printcolumn(name = "Platform", type_ = "string", json_path = ".spec.platform"),
    printcolumn(name = "Serving", type_ = "string", json_path = ".status.serving.digest"),
    printcolumn(name = "Candidate", type_ = "string", json_path = ".status.candidate.digest"),
    printcolumn(name = "Stage", type_ = "string", json_path = ".status.rollout.stage"),
    printcolumn(name = "Ready", type_ = "string", json_path = ".status.conditions[?(@.type==\"Ready\")].status"),
    printcolumn(name = "Degraded", type_ = "string", json_path = ".status.conditions[?(@.type==\"Degraded\")].status"),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp"),
    printcolumn(name = "Module", type_ = "string", json_path = ".status.serving.module", priority = "1"),
    printcolumn(name = "Loaded", type_ = "date", json_path = ".status.serving.loadedAt", priority = "1"),
    printcolumn(name = "Error", type_ = "string", json_path = ".status.lastError", priority = "1")
)]
#[serde(rename_all = "camelCase")]
pub struct MachineConfigGuestSpec {
    /// The jobs a guest can serve.
    // Its values are the registered jobs' names (see `machine_config_guest_crd`).
    pub job: String,
    // The entry key of a keyed job, whatever the job keys by: its
    // description is the job's (see `machine_config_guest_crd`), its wire
    // name `KEY_FIELD` is the CRD's.
    #[serde(rename = "platform", default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub key: Option<String>,
    #[serde(flatten)]
    pub entry: RawFull,
    /// Moves the candidate from shadowing the module to deciding a canary
    /// subset of the objects, then every object (see docs/guests/rollout.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<RolloutSpec>,
    /// Asks the lease holder to decide every current object of the job
    /// with both the module and the candidate, and to say in
    /// `status.audit` where they differ (see docs/guests/audit.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<AuditSpec>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct MachineConfigGuestStatus {
    /// The spec generation the rest of the status is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving: Option<ModuleStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<ModuleStatus>,
    /// Why the spec does not serve, while it does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// How the candidate's decisions compared with the serving module's,
    /// counted by the lease holder since it took the lease.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shadow: Option<ShadowCounts>,
    /// Where the rollout of the candidate is; written by the lease holder,
    /// and where a replica that takes the lease carries on from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<RolloutStatus>,
    /// The answer to `spec.audit.request`, or the audit under way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<AuditStatus>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 8), extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModuleStatus {
    /// Where the module came from: a path, `configmap/NAME[KEY]` or
    /// `oci:REFERENCE`.
    pub module: String,
    /// The module's sha256, 64 hex digits.
    pub sha256: String,
    /// `sha256:` and the first 12 hex digits, for the printer columns.
    pub digest: String,
    /// When this module started serving (RFC 3339), as far as the lease
    /// holder knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded_at: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
pub struct ShadowCounts {
    pub agree: u64,
    pub differ: u64,
    pub failed: u64,
}

/// `spec.platform`: where a MachineConfigGuest of a keyed job names its
/// entry key. The name is the first keyed job's and part of the
/// v1alpha1 API (the printer column, the validation messages); any keyed
/// job uses this one field, with its own description.
pub const KEY_FIELD: &str = "platform";

/// Why a spec names no job of this host.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("job {0} is not one this host serves")]
    Unknown(String),
    #[error("{KEY_FIELD} is not allowed for job {0}")]
    KeyNotAllowed(&'static str),
    #[error("{KEY_FIELD} is required for job {0}")]
    KeyRequired(&'static str),
}

/// The job `object` serves, if its spec names one of `jobs`.
pub fn job_of(object: &MachineConfigGuest, jobs: &Jobs) -> Option<EntryName> {
    object.spec.job(jobs).ok()
}

impl MachineConfigGuestSpec {
    fn job(&self, jobs: &Jobs) -> Result<EntryName, SpecError> {
        let kind = jobs
            .named(&self.job)
            .ok_or_else(|| SpecError::Unknown(self.job.clone()))?;
        match (kind.key(), &self.key) {
            (None, None) => Ok(EntryName::single(kind)),
            (Some(_), Some(key)) if !key.is_empty() => Ok(EntryName::keyed(kind, key.clone())),
            (None, Some(_)) => Err(SpecError::KeyNotAllowed(kind.name())),
            (Some(_), _) => Err(SpecError::KeyRequired(kind.name())),
        }
    }

    /// `rollout.canary` as `job` reads it, if given.
    fn canary(&self, job: &EntryName, jobs: &Jobs) -> Result<Option<Selection>, CanaryError> {
        let canary = self.rollout.as_ref().and_then(|r| r.canary.as_ref());
        let kind = job.kind();
        (canary.map(|c| c.read(kind.name(), kind.canary(), &jobs.canaries()))).transpose()
    }
}

/// The CRD as `deploy/crds/` ships it: its description lists what the
/// jobs serve, `spec.job` takes the name of one of `jobs`, the key field
/// is there exactly for the keyed ones, and `spec.rollout.canary` has
/// every job's field, the job's own one given.
pub fn machine_config_guest_crd(
    jobs: &Jobs,
) -> Result<CustomResourceDefinition, CanarySchemaError> {
    let mut crd = MachineConfigGuest::crd();
    crd.spec.names.list_kind = Some("MachineConfigGuestList".into());
    let (keyed, single): (Vec<_>, Vec<_>) = jobs.iter().partition(|kind| kind.key().is_some());
    let names = |kinds: &[&dyn JobKind]| kinds.iter().map(|k| k.name()).collect::<Vec<_>>();
    let quoted = |kinds: &[&dyn JobKind]| {
        let names: Vec<String> = kinds.iter().map(|k| format!("'{}'", k.name())).collect();
        match names.as_slice() {
            [one] => format!("self.spec.job == {one}"),
            many => format!("self.spec.job in [{}]", many.join(", ")),
        }
    };
    let key_rule = ValidationRule {
        rule: format!(
            "{} ? has(self.spec.{KEY_FIELD}) : !has(self.spec.{KEY_FIELD})",
            quoted(&keyed)
        ),
        message: Some(format!(
            "spec.{KEY_FIELD} is required for job {} and not allowed for job {}",
            names(&keyed).join(", "),
            names(&single).join(", ")
        )),
        ..ValidationRule::default()
    };
    let canary_rules = canary::canary_rules(jobs.iter().map(|k| (k.name(), k.canary())));
    let key_description = keyed.iter().filter_map(|k| k.key()).collect::<Vec<_>>();
    let schemas = crd
        .spec
        .versions
        .iter_mut()
        .filter_map(|v| v.schema.as_mut()?.open_api_v3_schema.as_mut());
    let serves: Vec<&str> = jobs.iter().map(|k| k.serves()).collect();
    let description = format!(
        "MachineConfigGuest names the WebAssembly module that serves one job of mco-host ({}).",
        serves.join(", or ")
    );
    for schema in schemas {
        schema.description = Some(description.clone());
        schema
            .x_kubernetes_validations
            .get_or_insert_with(Vec::new)
            .splice(
                0..0,
                std::iter::once(key_rule.clone()).chain(canary_rules.clone()),
            );
        let spec = schema.properties.as_mut().and_then(|p| p.get_mut("spec"));
        let Some(fields) = spec.and_then(|s| s.properties.as_mut()) else {
            continue;
        };
        if let Some(job) = fields.get_mut("job") {
            let names = jobs.iter().map(|k| JSON(k.name().into())).collect();
            job.enum_ = Some(names);
        }
        if let Some(key) = fields.get_mut(KEY_FIELD) {
            key.description = Some(key_description.join("\n"));
        }
        let rollout = fields
            .get_mut("rollout")
            .and_then(|r| r.properties.as_mut());
        if let Some(canary) = rollout.and_then(|r| r.get_mut("canary")) {
            canary::canary_schema(&jobs.canaries(), canary)?;
        }
    }
    Ok(crd)
}

/// What shows where: the registry as the objects spell it, over the guests
/// installed in `guest_dir`. Two objects for one job are refused as a
/// whole, as a registry file with a bad entry is: the serving guests keep
/// serving until it is fixed.
pub fn registry(
    objects: &[MachineConfigGuest],
    guest_dir: &Path,
    jobs: &Jobs,
) -> Result<Registry, RegistryError> {
    let mut registry = Registry::installed(guest_dir, jobs);
    let mut owners: BTreeMap<EntryName, String> = BTreeMap::new();
    for object in objects {
        let name = object.name_any();
        let fail = |entry: String, detail: String| RegistryError::Entry {
            path: format!("machineconfigguest/{name}"),
            entry,
            detail,
        };
        let job = object
            .spec
            .job(jobs)
            .map_err(|e| fail("spec".into(), e.to_string()))?;
        if let Some(other) = owners.insert(job.clone(), name.clone()) {
            return Err(fail(
                job.to_string(),
                format!("machineconfigguest/{other} serves this job too; delete one of them"),
            ));
        }
        let entry = object
            .spec
            .entry
            .clone()
            .resolve(guest_dir, None)
            .map_err(|e| fail(job.to_string(), e.to_string()))?;
        object
            .spec
            .canary(&job, jobs)
            .map_err(|e| fail(job.to_string(), e.to_string()))?;
        registry.insert(job, entry);
    }
    Ok(registry)
}

/// Lists the objects, once per poll: a handful of small objects.
pub async fn list(api: &Api<MachineConfigGuest>) -> Result<Vec<MachineConfigGuest>, RegistryError> {
    api.list(&ListParams::default())
        .await
        .map(|list| list.items)
        .map_err(|e| RegistryError::Parse {
            path: "machineconfigguests".into(),
            detail: format!("cannot list them: {e}"),
        })
}

/// What the host knows about one job, for its object's status.
pub struct Observed<'a> {
    pub jobs: &'a Jobs,
    pub status: &'a Status,
    /// The failure that keeps each entry's spec from serving, by entry.
    pub failures: &'a BTreeMap<String, String>,
    pub metrics: &'a Metrics,
    /// Each job's rollout, where one is declared (`Rollouts::statuses`).
    pub rollouts: &'a BTreeMap<EntryName, (RolloutSpec, RolloutStatus)>,
    /// Audits under way or answered and not yet written, by object
    /// (`Audits::statuses`).
    pub audits: &'a BTreeMap<String, AuditStatus>,
}

/// The status `object` should have; `None` while its spec names no valid
/// job (the registry error says why).
pub fn status_of(
    object: &MachineConfigGuest,
    observed: &Observed<'_>,
    now: &Time,
) -> Option<MachineConfigGuestStatus> {
    let job_entry = object.spec.job(observed.jobs).ok()?;
    let job = job_entry.to_string();
    let rollout = observed.rollouts.get(&job_entry);
    let stored = object.status.clone().unwrap_or_default();
    let serving = observed.status.jobs.get(&job);
    // A fallback at start says what serves instead, so it wins over the
    // same failure repeated by later polls.
    let error = observed
        .status
        .degraded
        .get(&job)
        .map(|e| ("FellBack", e.clone()))
        .or_else(|| {
            observed
                .failures
                .get(&job)
                .map(|e| ("SwapFailed", e.clone()))
        })
        .or_else(|| {
            observed
                .status
                .registry_error
                .clone()
                .map(|e| ("RegistryUnreadable", e))
        });
    let serving_module = serving.map(|s| module_status(s, stored.serving.as_ref()));
    let mut wanted = conditions(serving_module.as_ref(), error.as_ref());
    if let Some((spec, status)) = rollout {
        wanted.extend(rollout_conditions(spec, status, now.0));
    }
    let (conditions, _) = merge(&stored.conditions, wanted, now, Transition::Status);
    Some(MachineConfigGuestStatus {
        observed_generation: object.metadata.generation,
        candidate: serving
            .and_then(|s| s.candidate.as_ref())
            .map(|c| ModuleStatus {
                module: c.module.clone(),
                sha256: c.sha256.clone(),
                digest: short_digest(&c.sha256),
                loaded_at: None,
            }),
        serving: serving_module,
        last_error: error.map(|(_, e)| e),
        shadow: serving
            .and_then(|s| s.candidate.as_ref())
            .map(|_| shadow_counts(observed.metrics, &job)),
        rollout: rollout.map(|(_, status)| status.clone()),
        audit: (object.metadata.name.as_ref())
            .and_then(|name| observed.audits.get(name).cloned())
            .or(stored.audit),
        conditions,
    })
}

/// What each job's object declares of its rollout, for the jobs whose
/// candidate serves: a rollout is about the candidate loaded, not one the
/// spec names but the host refused. A canary its job cannot read refuses
/// them all, as it refuses the registry ([`registry`]): nothing is routed
/// from part of the objects.
pub fn declared<'a>(
    objects: &'a [MachineConfigGuest],
    jobs: &Jobs,
    set: &'a GuestSet,
) -> Result<BTreeMap<EntryName, Declared<'a>>, CanaryError> {
    let mut declared = BTreeMap::new();
    for object in objects {
        let (Ok(job), Some(spec), Some(name)) = (
            object.spec.job(jobs),
            object.spec.rollout.as_ref(),
            object.metadata.name.as_deref(),
        ) else {
            continue;
        };
        let canary = object.spec.canary(&job, jobs)?;
        let Some(served) = set.served(&job) else {
            continue;
        };
        let Some(candidate) = served.candidate() else {
            continue;
        };
        declared.insert(
            job,
            Declared {
                object: name,
                spec,
                canary,
                stored: object.status.as_ref().and_then(|s| s.rollout.as_ref()),
                active: &served.active().0.digest,
                candidate: &candidate.digest,
            },
        );
    }
    Ok(declared)
}

/// `Progressing`, `Promotable` and `RolledBack` for a declared rollout.
fn rollout_conditions(
    spec: &RolloutSpec,
    status: &RolloutStatus,
    now: Timestamp,
) -> Vec<Condition> {
    let counts = format!(
        "{} since {}: {} agree, {} differ, {} failed",
        status.stage.as_str(),
        status.since,
        status.agree,
        status.differ,
        status.failed
    );
    let progressing = match status.stage {
        Stage::Shadow | Stage::Canary => condition(
            "Progressing",
            true,
            &format!("In{}", status.stage.as_str()),
            counts.clone(),
        ),
        Stage::Active => condition(
            "Progressing",
            false,
            "Active",
            format!("the candidate decides every object; {counts}"),
        ),
        Stage::RolledBack => condition(
            "Progressing",
            false,
            "RolledBack",
            status.message.clone().unwrap_or_default(),
        ),
    };
    let promotable = match (status.stage, rollout::promotion_pending(status, spec, now)) {
        (Stage::Active | Stage::RolledBack, _) => condition(
            "Promotable",
            false,
            "LastStage",
            format!("nothing follows {}", status.stage.as_str()),
        ),
        (_, Some(None)) => condition("Promotable", true, "CriteriaMet", counts.clone()),
        (_, Some(Some(waits))) => condition(
            "Promotable",
            false,
            "Waiting",
            format!("waits for {waits}; {counts}"),
        ),
        (_, None) => match spec.validate() {
            Err(err) => condition("Promotable", false, "InvalidPromotion", err.to_string()),
            Ok(()) if status.agree > 0 => condition(
                "Promotable",
                true,
                "ByHand",
                format!("{counts}; promote by setting spec.rollout.stage"),
            ),
            Ok(()) => condition(
                "Promotable",
                false,
                "NoEvidence",
                format!("{counts}; no agreeing evaluation yet"),
            ),
        },
    };
    let rolled_back = if status.stage == Stage::RolledBack {
        let reason = status.reason.as_deref().unwrap_or("RolledBack");
        condition(
            "RolledBack",
            true,
            reason,
            status.message.clone().unwrap_or_default(),
        )
    } else {
        condition("RolledBack", false, "NotRolledBack", String::new())
    };
    vec![progressing, promotable, rolled_back]
}

/// A condition whose time `merge` sets.
fn condition(type_: &str, status: bool, reason: &str, message: String) -> Condition {
    Condition {
        type_: type_.into(),
        status: if status { "True" } else { "False" }.into(),
        reason: reason.into(),
        message,
        observed_generation: None,
        last_transition_time: Time(Timestamp::UNIX_EPOCH),
    }
}

/// The serving module, with the time it loaded: that of the last change
/// when it loaded this module, else the time already recorded for it.
fn module_status(job: &JobStatus, stored: Option<&ModuleStatus>) -> ModuleStatus {
    let loaded_now = job
        .last_change
        .as_ref()
        .filter(|c| c.result != "failed" && c.sha256.as_deref() == Some(job.sha256.as_str()))
        .map(|c| c.at.clone());
    let loaded_before = stored
        .filter(|s| s.sha256 == job.sha256)
        .and_then(|s| s.loaded_at.clone());
    ModuleStatus {
        module: job.module.clone(),
        sha256: job.sha256.clone(),
        digest: short_digest(&job.sha256),
        loaded_at: loaded_now.or(loaded_before),
    }
}

fn short_digest(sha256: &str) -> String {
    format!("sha256:{}", &sha256[..sha256.len().min(12)])
}

fn conditions(serving: Option<&ModuleStatus>, error: Option<&(&str, String)>) -> Vec<Condition> {
    let serving_text = serving.map_or_else(
        || "no module serves this job".to_string(),
        |m| format!("{} ({}) serves", m.module, m.digest),
    );
    match error {
        Some((reason, error)) => vec![
            condition(
                "Ready",
                false,
                reason,
                format!("the spec does not serve; {serving_text}"),
            ),
            condition("Degraded", true, reason, error.clone()),
        ],
        None => vec![
            condition("Ready", true, "Serving", serving_text),
            condition("Degraded", false, "AsSpecified", String::new()),
        ],
    }
}

fn shadow_counts(metrics: &Metrics, job: &str) -> ShadowCounts {
    // `get`, not `get_or_create`: reading a count must not add a series.
    let count = |result: &str| {
        metrics
            .shadow_evaluations
            .get(&JobResultLabels::new(job, result))
            .map_or(0, |c| c.get())
    };
    ShadowCounts {
        agree: count("agree"),
        differ: count("differ"),
        failed: count("failed"),
    }
}

/// Writes each of `objects` (as the poll listed them) a status where it
/// differs from the stored one. Failures are logged and retried next poll:
/// a status is a report, and nothing waits for it.
pub async fn publish(
    api: &Api<MachineConfigGuest>,
    objects: &[MachineConfigGuest],
    observed: &Observed<'_>,
) {
    let now = Time(Timestamp::now());
    for object in objects {
        let Some(status) = status_of(object, observed, &now) else {
            continue;
        };
        if object.status.as_ref() == Some(&status) {
            continue;
        }
        let name = object.name_any();
        let patch = serde_json::json!({
            "apiVersion": MachineConfigGuest::api_version(&()),
            "kind": MachineConfigGuest::kind(&()),
            "status": status,
        });
        let params = PatchParams::apply(FIELD_MANAGER).force();
        if let Err(err) = api
            .patch_status(&name, &params, &Patch::Apply(&patch))
            .await
        {
            tracing::warn!(machineconfigguest = %name, error = %err, "cannot write the status");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;
    use crate::entries::Source;
    use crate::job::tests::JOBS;
    use crate::serving::{CandidateStatus, Change};

    fn job(name: &str, key: Option<&str>) -> EntryName {
        let kind = JOBS
            .named(name)
            .unwrap_or_else(|| panic!("no job {name} registered"));
        match key {
            Some(key) => EntryName::keyed(kind, key),
            None => EntryName::single(kind),
        }
    }

    fn object(name: &str, spec: serde_json::Value) -> MachineConfigGuest {
        serde_json::from_value(json!({
            "apiVersion": "mco-wasm.io/v1alpha1",
            "kind": "MachineConfigGuest",
            "metadata": {"name": name, "generation": 3},
            "spec": spec,
        }))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn guest_dir() -> PathBuf {
        PathBuf::from("/guests")
    }

    #[test]
    fn objects_override_the_installed_guests_job_by_job() {
        let objects = [
            object(
                "mcn",
                json!({"job": "mcn", "oci": "quay.io/t/mcn@sha256:".to_string() + &"a".repeat(64), "deadline": "2s"}),
            ),
            object(
                "vsphere",
                json!({"job": "bootImage", "platform": "VSphere", "module": "vs.wasm"}),
            ),
        ];
        let registry = registry(&objects, &guest_dir(), &JOBS).unwrap_or_else(|e| panic!("{e}"));
        let mcn = registry
            .get(&job("mcn", None))
            .cloned()
            .unwrap_or_else(|| panic!("no mcn entry"));
        assert!(
            matches!(&mcn.module.source, Source::Oci(o) if o.reference.starts_with("quay.io/t/mcn@"))
        );
        assert_eq!(mcn.deadline, Some(std::time::Duration::from_secs(2)));
        assert_eq!(
            registry
                .get(&job("bootImage", Some("VSphere")))
                .map(|e| e.module.source.clone()),
            Some(Source::Path(PathBuf::from("/guests/vs.wasm")))
        );
        assert_eq!(
            registry
                .get(&job("bootImage", Some("AWS")))
                .map(|e| e.module.source.clone()),
            Some(Source::Path(PathBuf::from("/guests/bootimage-aws.wasm"))),
            "a job without an object runs its installed guest"
        );
    }

    #[test]
    fn two_objects_for_one_job_are_refused_naming_both() {
        let objects = [
            object(
                "a",
                json!({"job": "bootImage", "platform": "AWS", "module": "a.wasm"}),
            ),
            object(
                "b",
                json!({"job": "bootImage", "platform": "AWS", "module": "b.wasm"}),
            ),
        ];
        let err = registry(&objects, &guest_dir(), &JOBS)
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some(
                "registry machineconfigguest/b, entry bootImage.AWS: machineconfigguest/a serves this job too; delete one of them"
            )
        );
    }

    /// A spec of `job` rolling a candidate out to `canary`.
    fn canary(job: &str, platform: Option<&str>, canary: serde_json::Value) -> serde_json::Value {
        json!({"job": job, "platform": platform, "module": "m.wasm",
               "candidate": {"module": "c.wasm"},
               "rollout": {"stage": "Canary", "canary": canary}})
    }

    #[test]
    fn a_broken_spec_is_refused_with_the_object_and_field_named() {
        let cases = [
            (
                json!({"job": "mcn", "platform": "AWS", "module": "m.wasm"}),
                "entry spec: platform is not allowed for job mcn",
            ),
            (
                json!({"job": "bootImage", "module": "m.wasm"}),
                "entry spec: platform is required for job bootImage",
            ),
            (
                json!({"job": "mcn", "module": "m.wasm", "oci": "quay.io/x/y:1"}),
                "entry mcn: give one of module, configMap and oci",
            ),
            (
                json!({"job": "mcn", "module": "m.wasm", "deadline": "soon"}),
                "entry mcn: deadline \"soon\"",
            ),
            (
                json!({"job": "mcn", "oci": "quay.io/x/y:1", "sha256": "a".repeat(64)}),
                "by digest",
            ),
            (
                canary("mcn", None, json!({"machineSets": {}})),
                "entry mcn: spec.rollout.canary of job mcn names its objects by pools",
            ),
            (
                canary("bootImage", Some("AWS"), json!({"pools": ["a"]})),
                "entry bootImage.AWS: spec.rollout.canary of job bootImage names its objects by machineSets",
            ),
            (
                canary("mcn", None, json!({"pools": ["a"], "machineSets": {}})),
                "entry mcn: give one of pools (the mcn job) and machineSets (a bootImage job)",
            ),
            (
                canary("mcn", None, json!({})),
                "entry mcn: give one of pools (the mcn job) and machineSets (a bootImage job)",
            ),
            (
                canary("mcn", None, json!({"pools": [1]})),
                "entry mcn: spec.rollout.canary.pools: invalid type: integer `1`, expected a string",
            ),
        ];
        for (spec, expected) in cases {
            let err = registry(&[object("bad", spec.clone())], &guest_dir(), &JOBS)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                err.starts_with("registry machineconfigguest/bad"),
                "{spec}: {err}"
            );
            assert!(err.contains(expected), "{spec}: {err} lacks {expected}");
        }
    }

    fn job_status(sha256: &str, candidate: bool, change: Option<Change>) -> JobStatus {
        JobStatus {
            module: "oci:quay.io/t/mcn@sha256:…".into(),
            sha256: sha256.into(),
            candidate: candidate.then(|| CandidateStatus {
                module: "/guests/next.wasm".into(),
                sha256: "c".repeat(64),
            }),
            last_change: change,
            ..JobStatus::default()
        }
    }

    fn loaded(at: &str, result: &'static str, sha256: &str) -> Change {
        Change {
            at: at.into(),
            result,
            module: None,
            sha256: Some(sha256.into()),
            error: None,
        }
    }

    /// What [`status_of`] reads, with no rollout and no audit under way.
    fn observing<'a>(
        status: &'a Status,
        failures: &'a BTreeMap<String, String>,
        metrics: &'a Metrics,
    ) -> Observed<'a> {
        const NO_ROLLOUTS: &BTreeMap<EntryName, (RolloutSpec, RolloutStatus)> = &BTreeMap::new();
        const NO_AUDITS: &BTreeMap<String, AuditStatus> = &BTreeMap::new();
        Observed {
            jobs: &JOBS,
            status,
            failures,
            metrics,
            rollouts: NO_ROLLOUTS,
            audits: NO_AUDITS,
        }
    }

    fn condition<'a>(status: &'a MachineConfigGuestStatus, type_: &str) -> (&'a str, &'a str) {
        status
            .conditions
            .iter()
            .find(|c| c.type_ == type_)
            .map(|c| (c.status.as_str(), c.reason.as_str()))
            .unwrap_or_else(|| panic!("no {type_} condition"))
    }

    #[test]
    fn the_status_says_what_serves_and_keeps_its_load_time() {
        let serving = "a".repeat(64);
        let mut status = Status::default();
        status.jobs.insert(
            "mcn".into(),
            job_status(
                &serving,
                true,
                Some(loaded("2026-12-01T10:00:00Z", "swapped", &serving)),
            ),
        );
        let metrics = Metrics::register(&mut prometheus_client::registry::Registry::default());
        metrics
            .shadow_evaluations
            .get_or_create(&JobResultLabels::new("mcn", "differ"))
            .inc();
        let failures = BTreeMap::new();
        let observed = observing(&status, &failures, &metrics);
        let now = Time(Timestamp::UNIX_EPOCH);
        let mut mcn = object("mcn", json!({"job": "mcn", "module": "m.wasm"}));
        let first = status_of(&mcn, &observed, &now).unwrap_or_else(|| panic!("no status"));
        let module = first
            .serving
            .clone()
            .unwrap_or_else(|| panic!("nothing serving"));
        assert_eq!(module.digest, "sha256:aaaaaaaaaaaa");
        assert_eq!(module.loaded_at.as_deref(), Some("2026-12-01T10:00:00Z"));
        assert_eq!(
            first.candidate.as_ref().map(|c| c.digest.as_str()),
            Some("sha256:cccccccccccc")
        );
        assert_eq!(
            first.shadow,
            Some(ShadowCounts {
                agree: 0,
                differ: 1,
                failed: 0
            })
        );
        assert_eq!(first.observed_generation, Some(3));
        assert_eq!(condition(&first, "Ready"), ("True", "Serving"));
        assert_eq!(condition(&first, "Degraded"), ("False", "AsSpecified"));

        // A later failed attempt with another module: the load time of the
        // module still serving stays, and the failure degrades the object.
        status.jobs.insert(
            "mcn".into(),
            job_status(
                &serving,
                false,
                Some(loaded("2026-12-01T11:00:00Z", "failed", &"b".repeat(64))),
            ),
        );
        let failures = BTreeMap::from([("mcn".to_string(), "signature refused".to_string())]);
        let observed = observing(&status, &failures, &metrics);
        mcn.status = Some(first.clone());
        let second = status_of(&mcn, &observed, &now).unwrap_or_else(|| panic!("no status"));
        assert_eq!(
            second.serving.clone().and_then(|m| m.loaded_at).as_deref(),
            Some("2026-12-01T10:00:00Z")
        );
        assert_eq!(second.last_error.as_deref(), Some("signature refused"));
        assert_eq!(second.shadow, None, "no candidate, no shadow counts");
        assert_eq!(condition(&second, "Ready"), ("False", "SwapFailed"));
        assert_eq!(condition(&second, "Degraded"), ("True", "SwapFailed"));
    }

    #[test]
    fn a_rollout_shows_its_stage_and_what_promotion_waits_for() {
        use crate::canary::CanarySpec;
        use crate::rollout::{Promotion, reconcile};

        let mut status = Status::default();
        status
            .jobs
            .insert("mcn".into(), job_status(&"a".repeat(64), true, None));
        let metrics = Metrics::register(&mut prometheus_client::registry::Registry::default());
        let failures = BTreeMap::new();
        let spec = RolloutSpec {
            canary: Some(CanarySpec(BTreeMap::from([(
                "pools".into(),
                json!(["worker-canary"]),
            )]))),
            promotion: Some(Promotion {
                evaluations: 10,
                minimum_time: "1h".into(),
            }),
            ..RolloutSpec::default()
        };
        let now = Time(Timestamp::UNIX_EPOCH);
        let (mut rollout, _) = reconcile(None, &spec, &"c".repeat(64), &"a".repeat(64), now.0);
        rollout.agree = 4;
        let rollouts = BTreeMap::from([(job("mcn", None), (spec.clone(), rollout.clone()))]);
        let observed = Observed {
            rollouts: &rollouts,
            ..observing(&status, &failures, &metrics)
        };
        let mcn = object(
            "mcn",
            json!({"job": "mcn", "module": "m.wasm", "candidate": {"module": "c.wasm"}}),
        );
        let shown = status_of(&mcn, &observed, &now).unwrap_or_else(|| panic!("no status"));
        assert_eq!(shown.rollout.as_ref(), Some(&rollout));
        assert_eq!(condition(&shown, "Progressing"), ("True", "InShadow"));
        assert_eq!(condition(&shown, "Promotable"), ("False", "Waiting"));
        let waits = shown
            .conditions
            .iter()
            .find(|c| c.type_ == "Promotable")
            .map(|c| c.message.clone());
        assert_eq!(
            waits.as_deref(),
            Some(
                "waits for 6 more agreeing evaluations and 1h more in the stage; Shadow since 1970-01-01T00:00:00Z: 4 agree, 0 differ, 0 failed"
            )
        );
        assert_eq!(condition(&shown, "RolledBack"), ("False", "NotRolledBack"));
        assert_eq!(
            condition(&shown, "Ready"),
            ("True", "Serving"),
            "a rollout leaves Ready alone"
        );

        rollout.failed = 1;
        let moved = crate::rollout::judge(&mut rollout, &spec, &"a".repeat(64), now.0);
        assert_eq!(moved.map(|m| m.reason), Some("CandidateFailed"));
        let rollouts = BTreeMap::from([(job("mcn", None), (spec, rollout))]);
        let observed = Observed {
            rollouts: &rollouts,
            ..observed
        };
        let shown = status_of(&mcn, &observed, &now).unwrap_or_else(|| panic!("no status"));
        assert_eq!(condition(&shown, "RolledBack"), ("True", "CandidateFailed"));
        assert_eq!(condition(&shown, "Progressing"), ("False", "RolledBack"));
        assert_eq!(condition(&shown, "Promotable"), ("False", "LastStage"));

        // Without a rollout the three conditions are gone again.
        let observed = Observed {
            rollouts: &BTreeMap::new(),
            ..observed
        };
        let plain = status_of(&mcn, &observed, &now).unwrap_or_else(|| panic!("no status"));
        assert_eq!(plain.rollout, None);
        assert_eq!(plain.conditions.len(), 2);
    }

    #[test]
    fn a_start_fallback_and_an_unreadable_registry_degrade_the_object() {
        let mut status = Status::default();
        status.jobs.insert(
            "bootImage.AWS".into(),
            job_status(&"a".repeat(64), false, None),
        );
        status.degraded.insert(
            "bootImage.AWS".into(),
            "registry down; the last good module serves".into(),
        );
        let metrics = Metrics::register(&mut prometheus_client::registry::Registry::default());
        let failures = BTreeMap::new();
        let observed = observing(&status, &failures, &metrics);
        let aws = object(
            "aws",
            json!({"job": "bootImage", "platform": "AWS", "oci": "r.io/aws:1"}),
        );
        let now = Time(Timestamp::UNIX_EPOCH);
        let fell_back = status_of(&aws, &observed, &now).unwrap_or_else(|| panic!("no status"));
        assert_eq!(condition(&fell_back, "Degraded"), ("True", "FellBack"));

        status.degraded.clear();
        status.registry_error = Some("registry machineconfigguests: cannot list them".into());
        let observed = observing(&status, &failures, &metrics);
        let unreadable = status_of(&aws, &observed, &now).unwrap_or_else(|| panic!("no status"));
        assert_eq!(
            condition(&unreadable, "Degraded"),
            ("True", "RegistryUnreadable")
        );
        assert!(
            status_of(
                &object("x", json!({"job": "bootImage", "module": "m"})),
                &observed,
                &now
            )
            .is_none()
        );
    }
}
