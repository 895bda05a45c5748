//! Where boot image decisions get written: the user-data stub, then on
//! vSphere the template import, then the MachineSet (or
//! ControlPlaneMachineSet) merge patch (each write with the
//! resourceVersion the decision read as precondition), the controller's record, the two conditions on
//! MachineConfiguration `cluster`, and Events. Only the lease holder
//! writes, and only while its ownership state allows (never in observe
//! mode, which compares a plan with the cluster instead: `observe`);
//! nothing here decides.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::runtime::events::EventType;
use mco_bootimage::vcenter::TemplateImport;
use mco_bootimage::{Decision, MachineKind, UserDataUpgrade};
use mco_vsphere::Imported;
use serde_json::{Value, json};

use super::conditions::{self, Tally, Wanted};
use super::ec2::Unconsulted;
use super::error::{PassError, StateError, Subject};
use super::metrics::Metrics;
use super::metrics::{ResultLabels, SkewLabels};
use super::objects::{Decoded, MACHINE_API_NAMESPACE, MachineConfiguration};
use super::plan::{Action, Plan};
use super::skew;
use super::state::{ControllerState, decision_fingerprint};
use super::vcenter::live::Vcenters;
use mco_cluster::events::{Events, Note};
use mco_cluster::own_writes::OwnWrites;
use mco_cluster::resources::{
    CONTROL_PLANE_MACHINE_SET, MACHINE_CONFIGURATION, MACHINE_SET, ResourceType,
};
use mco_cluster::{FIELD_MANAGER, is_status};
use mco_job::leadership::Leadership;
use mco_job::ownership::{JobOwnership, SAMPLE_LIMIT};
use mco_registry::compare::{Outcome, Summary};

pub(super) struct Writer {
    pub(super) client: Client,
    /// The host's namespace, where the record lives.
    pub(super) namespace: String,
    pub(super) state_configmap: String,
    pub(super) metrics: Metrics,
    pub(super) events: Events,
    /// Whether this replica holds the lease. Every write here happens in a
    /// pass the controller runs under [`Leadership::guard`] (no request
    /// leaves once the lease is lost); the status writes also ask it.
    pub(super) leadership: Leadership,
    /// MachineConfiguration `cluster` as our last condition write left it.
    pub(super) written: OwnWrites<Decoded<MachineConfiguration>>,
    pub(super) ownership: JobOwnership,
    /// vSphere: where template imports go (and reads come from).
    pub(super) vcenters: Arc<Vcenters>,
}

/// How one patch went.
enum Applied {
    /// `imported`: the vSphere import that ran first, if one did.
    Patched { imported: Option<Imported> },
    /// The object changed after it was read; nothing was written.
    Conflict,
}

impl Writer {
    fn state_api(&self) -> Api<ConfigMap> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    pub(super) async fn load_state(&self) -> Result<ControllerState, StateError> {
        let (namespace, name) = (self.namespace.clone(), self.state_configmap.clone());
        match self.state_api().get_opt(&self.state_configmap).await {
            Ok(None) => Ok(ControllerState::default()),
            Ok(Some(cm)) => {
                ControllerState::from_data(&cm.data.unwrap_or_default()).map_err(|source| {
                    StateError::Unreadable {
                        namespace,
                        name,
                        source,
                    }
                })
            }
            Err(source) => Err(StateError::Read {
                namespace,
                name,
                source,
            }),
        }
    }

    /// Writes the whole record; callers write only when it changed.
    pub(super) async fn save_state(&self, state: &ControllerState) -> Result<(), StateError> {
        if !self.ownership.may_write() {
            return Ok(());
        }
        let name = &self.state_configmap;
        let body = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": FIELD_MANAGER}},
            "data": state.to_data(),
        });
        self.state_api()
            .patch(
                name,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&body),
            )
            .await
            .map_err(|source| StateError::Write {
                namespace: self.namespace.clone(),
                name: name.clone(),
                source,
            })?;
        self.metrics.cluster.count_write("boot_image_state");
        Ok(())
    }

    /// Executes the actions of a plan, in its order (ControlPlaneMachineSets,
    /// then MachineSets, by name), and tallies them per kind. Returns
    /// whether a write lost a race (retry soon).
    pub(super) async fn execute(
        &self,
        plan: Plan,
        mc: Option<&Arc<Decoded<MachineConfiguration>>>,
        reason: &'static str,
    ) -> (Tally, bool) {
        let Plan {
            mut state, actions, ..
        } = plan;
        let mut tally = Tally::default();
        for action in &actions {
            tally.count_mut(action.subject.kind).total += 1;
        }
        if actions
            .iter()
            .any(|a| matches!(a.outcome, Ok(Decision::Patch { .. })))
        {
            // Upstream shows Progressing while MachineSets are being patched.
            self.write_conditions(mc, &[tally.progressing()], reason)
                .await;
        }
        let mut counts: BTreeMap<&'static str, i64> = BTreeMap::new();
        let mut conflicted = false;
        for action in actions {
            let kind = action.subject.kind;
            let span =
                tracing::info_span!("boot_image", kind = kind.kind(), name = %action.subject.name);
            let _entered = span.enter();
            let reference = object_reference(kind, &action.object.metadata);
            let key = action.subject.key();
            let count = tally.count_mut(kind);
            let (result, mut event) = match self.act(&action, &mut state).await {
                Ok(ActOutcome::Current) => {
                    count.reconciled += 1;
                    ("current", None)
                }
                Ok(ActOutcome::Conflict) => {
                    tracing::info!("the object changed meanwhile; deciding again");
                    count.reconciled += 1;
                    conflicted = true;
                    ("current", None)
                }
                Ok(ActOutcome::Skipped(why)) => {
                    tracing::info!(%why, "left alone");
                    count.reconciled += 1;
                    count.skipped += 1;
                    let event = (EventType::Normal, "BootImageUpdateSkipped", why);
                    ("skipped", Some(event))
                }
                Ok(ActOutcome::Patched(note)) => {
                    tracing::info!(%note, "patched");
                    count.reconciled += 1;
                    // A patch is news even when it repeats.
                    self.events.forget(&key);
                    (
                        "patched",
                        Some((EventType::Normal, "BootImageUpdated", note)),
                    )
                }
                Err(err) => {
                    let message = err.to_string();
                    tracing::warn!(%message, "cannot update the boot image");
                    if matches!(err, PassError::HotLoop(_)) {
                        self.metrics.bootimage.hot_loops.inc();
                    }
                    // Upstream's `syncControlPlaneMachineSets` wraps its errors.
                    count.errors.push(match kind {
                        MachineKind::MachineSet => message.clone(),
                        MachineKind::ControlPlaneMachineSet => {
                            format!("error syncing {}: {message}", action.subject)
                        }
                    });
                    (
                        "degraded",
                        Some((EventType::Warning, err.reason(), message)),
                    )
                }
            };
            // Decided by the static AMI lists: the Event and Progressing
            // say that EC2 was not consulted, and why.
            if let Some(unconsulted) = &action.ec2_unconsulted {
                let objects = match unconsulted {
                    Unconsulted::Unreachable(_) => &mut tally.ec2_unconsulted,
                    Unconsulted::Denied(_) => &mut tally.ec2_denied,
                };
                objects.push(format!("{}: {}", action.subject, unconsulted.why()));
                if let Some((_, _, note)) = &mut event {
                    note.push_str("; ");
                    note.push_str(&super::conditions::ec2_unconsulted_note(unconsulted));
                }
            }
            // The gauge is about MachineSets, as its name says.
            if kind == MachineKind::MachineSet {
                *counts.entry(result).or_default() += 1;
            }
            if let Some((type_, why, note)) = event {
                let note = Note {
                    type_,
                    reason: why,
                    action: "UpdateBootImage",
                    note: &note,
                };
                if self.events.publish_once(&key, &reference, note).await {
                    self.metrics.cluster.count_write("event");
                }
            }
        }
        for result in ["patched", "current", "skipped", "degraded"] {
            self.metrics
                .bootimage
                .machinesets
                .get_or_create(&ResultLabels {
                    result: result.into(),
                })
                .set(counts.get(result).copied().unwrap_or(0));
        }
        (tally, conflicted)
    }

    async fn act(
        &self,
        action: &Action,
        state: &mut ControllerState,
    ) -> Result<ActOutcome, PassError> {
        match &action.outcome {
            Err(err) => Err(err.clone()),
            Ok(Decision::Noop { reason }) => {
                tracing::debug!(%reason, "nothing to do");
                Ok(ActOutcome::Current)
            }
            Ok(Decision::Skip { reason }) => Ok(ActOutcome::Skipped(reason.clone())),
            Ok(Decision::Error { message }) => Err(PassError::Undecidable(message.clone())),
            Ok(Decision::Patch {
                target,
                patch,
                user_data_secret,
                import,
            }) => {
                let upgrade = user_data_secret.as_ref();
                let applied = self
                    .apply(
                        action,
                        state,
                        patch,
                        import.as_deref(),
                        upgrade.map(|u| (u, action.secret_version.clone())),
                    )
                    .await?;
                Ok(match applied {
                    Applied::Conflict => ActOutcome::Conflict,
                    Applied::Patched { imported } => {
                        let mut note = format!("boot image updated to {target}");
                        if let (Some(import), Some(imported)) = (import, imported) {
                            let (template, release) = (&import.template, &import.release);
                            note.push_str(&match imported {
                                Imported::New { .. } => {
                                    format!("; template {template} imported from the release {release} OVA")
                                }
                                Imported::Current { .. } => format!(
                                    "; template {template} already held the release {release} (imported earlier in the pass)"
                                ),
                            });
                        }
                        if let Some(secret) = upgrade {
                            note.push_str(&format!(
                                "; user-data Secret {} upgraded to Ignition spec {}",
                                secret.name,
                                mco_bootimage::ignition::STUB_TARGET_VERSION
                            ));
                        }
                        ActOutcome::Patched(note)
                    }
                })
            }
        }
    }

    /// Applies one patch: first the stub upgrade (the new image must be able
    /// to read it), then on vSphere the template import (the MachineSet
    /// must not name a template that is not there yet), then the MachineSet
    /// or ControlPlaneMachineSet, with its resourceVersion as precondition
    /// so a decision made on a stale copy is never written.
    async fn apply(
        &self,
        action: &Action,
        state: &mut ControllerState,
        patch: &Value,
        import: Option<&TemplateImport>,
        upgrade: Option<(&UserDataUpgrade, Option<String>)>,
    ) -> Result<Applied, PassError> {
        let subject = &action.subject;
        if let Some((upgrade, version)) = upgrade {
            // The write is the decision: the guest binding already checked
            // that the upgrade is for the Secret this object references;
            // the writer holds to it too, against the object it patches.
            let view = action.object.object.as_ref().ok();
            let referenced = view.and_then(|v| v.user_data_secret_name().ok().flatten());
            if referenced != Some(upgrade.name.as_str()) {
                return Err(PassError::StubWrite {
                    namespace: MACHINE_API_NAMESPACE.into(),
                    secret: upgrade.name.clone(),
                    detail: format!(
                        "refusing to write it: {subject} references user-data Secret {}",
                        referenced.unwrap_or("(none)")
                    ),
                });
            }
            self.upgrade_stub(upgrade, version).await?;
        }
        let imported = match import {
            Some(import) => Some(self.import(action, import).await?),
            None => None,
        };
        // An import alone: the MachineSet already names the template.
        if patch.as_object().is_some_and(|p| p.is_empty()) {
            self.record(subject, state, patch, import).await?;
            return Ok(Applied::Patched { imported });
        }
        let mut body = patch.clone();
        body["metadata"] = json!({"resourceVersion": action.object.metadata.resource_version});
        let api: Api<DynamicObject> = Api::namespaced_with(
            self.client.clone(),
            MACHINE_API_NAMESPACE,
            &resource(subject.kind).api_resource(),
        );
        match api
            .patch(&subject.name, &PatchParams::default(), &Patch::Merge(&body))
            .await
        {
            Ok(_) => {}
            Err(err) if is_status(&err, 409) => return Ok(Applied::Conflict),
            Err(err) => {
                return Err(PassError::Patch {
                    subject: subject.clone(),
                    detail: err.to_string(),
                });
            }
        }
        self.metrics.cluster.count_write(match subject.kind {
            MachineKind::MachineSet => "patch_machineset",
            MachineKind::ControlPlaneMachineSet => "patch_controlplanemachineset",
        });
        self.metrics.bootimage.patches.inc();
        self.record(subject, state, patch, import).await?;
        Ok(Applied::Patched { imported })
    }

    /// Counts a written decision for the hot-loop guard, in the record.
    async fn record(
        &self,
        subject: &Subject,
        state: &mut ControllerState,
        patch: &Value,
        import: Option<&TemplateImport>,
    ) -> Result<(), PassError> {
        state.record_patch(&subject.key(), &decision_fingerprint(patch, import));
        self.save_state(state)
            .await
            .map_err(|err| PassError::StateAfterPatch {
                subject: subject.clone(),
                detail: err.to_string(),
            })
    }

    /// Imports the template a vSphere decision asks for, where the host's
    /// own lookup (the failure domain, the workspace) places it: the
    /// request itself was checked against the same inputs before.
    async fn import(
        &self,
        action: &Action,
        import: &TemplateImport,
    ) -> Result<Imported, PassError> {
        let subject = &action.subject;
        let server = action.vcenter.as_ref().map(|l| l.address());
        let error = |detail: String| PassError::Vcenter {
            subject: subject.clone(),
            server: server.clone().unwrap_or_else(|| import.server.clone()),
            detail,
        };
        let lookup = action.vcenter.as_ref().ok_or_else(|| {
            error("the host matched no failure domain for this MachineSet".into())
        })?;
        let plan = lookup.import_plan(import).map_err(error)?;
        let job = || super::job::job(super::platform::vsphere::NAME).to_string();
        let started = std::time::Instant::now();
        match self.vcenters.import(&plan).await {
            Ok(imported) => {
                let (result, swapped) = match imported {
                    Imported::New { swapped, .. } => ("imported", swapped),
                    Imported::Current { .. } => ("current", false),
                };
                mco_registry::metrics::count(
                    &self.metrics.bootimage.template_imports,
                    &job(),
                    result,
                );
                tracing::info!(
                    template = %plan.placement.template,
                    release = %plan.release,
                    moref = %imported.moref(),
                    result,
                    swapped,
                    seconds = started.elapsed().as_secs_f64(),
                    "template import done"
                );
                Ok(imported)
            }
            Err(detail) => {
                mco_registry::metrics::count(
                    &self.metrics.bootimage.template_imports,
                    &job(),
                    "failed",
                );
                Err(error(detail))
            }
        }
    }

    /// Writes the converted stub, with the Secret's resourceVersion as
    /// precondition: a Secret changed since it was read is not overwritten.
    /// A merge patch of key `userData` and the two upgrade annotations only:
    /// every other key and annotation of the Secret is kept, and no other
    /// annotation the decision might carry is written.
    async fn upgrade_stub(
        &self,
        upgrade: &UserDataUpgrade,
        version: Option<String>,
    ) -> Result<(), PassError> {
        let secrets: Api<k8s_openapi::api::core::v1::Secret> =
            Api::namespaced(self.client.clone(), MACHINE_API_NAMESPACE);
        // The decision carries both annotations (the planner stamped the
        // time of the pass); nothing else it might carry is written.
        let annotations: BTreeMap<&str, &str> = [
            mco_bootimage::ignition::ANNOTATION_UPGRADED_TO,
            mco_bootimage::ignition::ANNOTATION_UPGRADED_AT,
        ]
        .into_iter()
        .filter_map(|key| Some((key, upgrade.annotations.get(key)?.as_str())))
        .collect();
        let body = json!({
            "metadata": {"resourceVersion": version, "annotations": annotations},
            "data": {"userData": upgrade.data.user_data},
        });
        secrets
            .patch(&upgrade.name, &PatchParams::default(), &Patch::Merge(&body))
            .await
            .map_err(|e| PassError::StubWrite {
                namespace: MACHINE_API_NAMESPACE.into(),
                secret: upgrade.name.clone(),
                detail: e.to_string(),
            })?;
        self.metrics.cluster.count_write("update_secret");
        tracing::info!(secret = %upgrade.name, "upgraded the user-data stub to Ignition spec 3");
        Ok(())
    }

    pub(super) async fn write_degraded(
        &self,
        mc: Option<&Arc<Decoded<MachineConfiguration>>>,
        message: &str,
        reason: &'static str,
    ) {
        tracing::warn!(%message, "boot image updates degraded");
        self.write_conditions(mc, &[conditions::degraded_before_start(message)], reason)
            .await;
    }

    /// Brings the boot image skew record up to date: the metric always,
    /// the status of MachineConfiguration `cluster` only when the record
    /// changed, with a merge patch of `automatic` alone. No resourceVersion
    /// precondition: this pass's own condition writes move it, and a mode
    /// the operator changed meanwhile triggers a pass that decides again
    /// (upstream's CRD also refuses `automatic` outside mode Automatic).
    pub(super) async fn write_skew_record(&self, record: &skew::Record) {
        self.metrics.bootimage.skew.clear();
        self.metrics
            .bootimage
            .skew
            .get_or_create(&SkewLabels {
                ocp_version: record.ocp_version.clone(),
                outcome: record.outcome.label().into(),
            })
            .set(1);
        if !record.changed || self.leadership.check().is_err() || !self.ownership.may_write() {
            return;
        }
        let body = record.status_patch();
        let api: Api<DynamicObject> =
            Api::all_with(self.client.clone(), &MACHINE_CONFIGURATION.api_resource());
        match api
            .patch_status("cluster", &PatchParams::default(), &Patch::Merge(&body))
            .await
        {
            Ok(written) => {
                self.metrics.cluster.count_write("boot_image_skew_record");
                self.written.remember(decoded(&written));
                tracing::info!(
                    ocp_version = %record.ocp_version,
                    outcome = record.outcome.label(),
                    "updated the boot image skew enforcement record"
                );
            }
            Err(err) => {
                tracing::warn!(error = %err, "could not write the boot image skew enforcement record");
            }
        }
    }

    /// Applies the wanted conditions to MachineConfiguration `cluster` when
    /// any of them differs from what is there (or what this replica wrote
    /// last and the watch has not shown yet).
    pub(super) async fn write_conditions(
        &self,
        mc: Option<&Arc<Decoded<MachineConfiguration>>>,
        wanted: &[Wanted],
        reason: &'static str,
    ) {
        if self.leadership.check().is_err() || !self.ownership.may_write() {
            return;
        }
        let Some(stored) = mc else {
            return;
        };
        let newest = self
            .written
            .newest("cluster", Some(stored.clone()))
            .and_then(|mc| {
                mc.object
                    .as_ref()
                    .ok()
                    .map(MachineConfiguration::conditions)
            })
            .unwrap_or_default();
        let now = Time(Timestamp::now());
        let Some(conditions) = conditions::next_conditions(&newest, wanted, reason, &now) else {
            return;
        };
        let body = json!({
            "apiVersion": "operator.openshift.io/v1", "kind": "MachineConfiguration",
            "metadata": {"name": "cluster"},
            "status": {"conditions": conditions},
        });
        let api: Api<DynamicObject> =
            Api::all_with(self.client.clone(), &MACHINE_CONFIGURATION.api_resource());
        match api
            .patch_status(
                "cluster",
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&body),
            )
            .await
        {
            Ok(written) => {
                self.metrics.cluster.count_write("boot_image_conditions");
                self.written.remember(decoded(&written));
            }
            Err(err) => {
                tracing::warn!(error = %err, "could not write the boot image conditions");
            }
        }
    }
}

impl Writer {
    /// Observe mode: what the plan would do to each object, against the
    /// object as it is (a boot image already at the stream's is an
    /// agreement, one the plan would move a difference), with an Event
    /// about each difference. Writes nothing else.
    pub(super) async fn observe(&self, plan: &Plan) -> Summary {
        let mut summary = Summary::new(SAMPLE_LIMIT);
        for action in &plan.actions {
            let as_is = "left as it is".to_owned();
            let ours = match &action.outcome {
                Ok(Decision::Noop { .. } | Decision::Skip { .. }) => as_is.clone(),
                Ok(Decision::Patch {
                    import: Some(import),
                    ..
                }) => format!(
                    "boot image {}, imported from the release {} OVA",
                    import.template, import.release
                ),
                Ok(Decision::Patch { target, .. }) => format!("boot image {target}"),
                Ok(Decision::Error { message }) => format!("error: {message}"),
                Err(err) => format!("error: {err}"),
            };
            let key = format!("{}.bootImage", action.subject.kind.kind());
            let outcome = Outcome::new(key, Some(ours), Some(as_is));
            let object = action.subject.key();
            summary.add(&object, std::slice::from_ref(&outcome));
            if outcome.agrees() {
                self.events.forget(&object);
                continue;
            }
            let note = format!(
                "observe mode: the boot image controller would change {}: {}",
                action.subject, outcome.ours
            );
            let reference = object_reference(action.subject.kind, &action.object.metadata);
            let note = Note {
                type_: EventType::Normal,
                reason: "ObservedDifference",
                action: "Observe",
                note: &note,
            };
            if self.events.publish_once(&object, &reference, note).await {
                self.metrics.cluster.count_write("event");
            }
        }
        summary
    }
}

/// What executing one action came to, short of failing.
enum ActOutcome {
    Current,
    Conflict,
    Skipped(String),
    /// The Event note saying what changed.
    Patched(String),
}

/// MachineConfiguration `cluster` as a write returned it, read as the
/// watch reads it.
fn decoded(written: &DynamicObject) -> Decoded<MachineConfiguration> {
    let value = serde_json::to_value(written).unwrap_or(Value::Null);
    Decoded::of(&value)
}

/// Where the objects of `kind` are served.
fn resource(kind: MachineKind) -> ResourceType {
    match kind {
        MachineKind::MachineSet => MACHINE_SET,
        MachineKind::ControlPlaneMachineSet => CONTROL_PLANE_MACHINE_SET,
    }
}

/// What an Event about a MachineSet or ControlPlaneMachineSet points at.
fn object_reference(kind: MachineKind, metadata: &ObjectMeta) -> ObjectReference {
    let resource = resource(kind);
    ObjectReference {
        api_version: Some(format!("{}/{}", resource.group, resource.version)),
        kind: Some(resource.kind.into()),
        name: metadata.name.clone(),
        namespace: metadata.namespace.clone(),
        uid: metadata.uid.clone(),
        ..ObjectReference::default()
    }
}

/// The writer against a mock API server (`cluster::mock`): the exact calls
/// each outcome makes, with no cluster.
#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
    use mco_bootimage::ignition::{ANNOTATION_UPGRADED_AT, ANNOTATION_UPGRADED_TO};
    use mco_bootimage::{MachineSetView, UserData, UserDataUpgrade};
    use serde_json::json;

    use super::*;
    use crate::error::Subject;
    use crate::objects::machine_decoder;
    use mco_cluster::metrics::KindLabels;
    use mco_cluster::mock::{self, Call};

    const MACHINESET: &str =
        "/apis/machine.openshift.io/v1beta1/namespaces/openshift-machine-api/machinesets/a";
    const SECRET: &str = "/api/v1/namespaces/openshift-machine-api/secrets/a-user-data";
    const STATE: &str = "/api/v1/namespaces/mco-system/configmaps/state";
    const CONDITIONS: &str = "/apis/operator.openshift.io/v1/machineconfigurations/cluster/status";

    fn writer(client: Client) -> Writer {
        writer_in(client, mco_job::ownership::Mode::Own)
    }

    /// A writer of a job in `mode`; an own job is judged free to write.
    fn writer_in(client: Client, mode: mco_job::ownership::Mode) -> Writer {
        let metrics = mco_job::metrics::Metrics::register(&mut Default::default());
        let ownership =
            mco_job::ownership::Ownership::new(metrics.ownership.clone()).job("bootImage", mode);
        if mode == mco_job::ownership::Mode::Own {
            ownership.judge(None);
        }
        Writer {
            events: Events::new(client.clone(), "test"),
            // No test here reaches a vCenter: imports are e2e-tested on vcsim.
            vcenters: Vcenters::new(
                client.clone(),
                crate::vcenter::live::Options {
                    ova_cache: std::env::temp_dir().join("mco-host-write-tests-ova"),
                    ova_cache_max_bytes: 0,
                    trust: mco_vsphere::Trust::Public,
                    timeouts: mco_vsphere::Timeouts::default(),
                },
            ),
            client,
            namespace: "mco-system".into(),
            state_configmap: "state".into(),
            metrics: crate::run_command::job_metrics(&metrics, Default::default()),
            leadership: Leadership::fixed(true),
            written: OwnWrites::default(),
            ownership,
        }
    }

    #[tokio::test]
    async fn an_observing_or_refusing_job_writes_no_record_nor_condition() {
        for refusing in [false, true] {
            let (client, scenario) = mock::serve(vec![]);
            let writer = if refusing {
                let writer = writer(client);
                writer.ownership.judge(Some("upstream writes".into()));
                writer
            } else {
                writer_in(client, mco_job::ownership::Mode::Observe)
            };
            assert!(writer.save_state(&ControllerState::default()).await.is_ok());
            let wanted = [conditions::degraded_before_start("broken")];
            let mc = machineconfiguration(&[]);
            writer.write_conditions(Some(&mc), &wanted, "Resync").await;
            scenario.done().await;
            for kind in ["boot_image_state", "boot_image_conditions"] {
                assert_eq!(writes(&writer, kind), 0, "{kind}");
            }
        }
    }

    #[tokio::test]
    async fn observing_counts_a_move_as_a_difference_and_patches_nothing() {
        let (client, _scenario) = mock::serve(vec![]);
        let writer = writer_in(client, mco_job::ownership::Mode::Observe);
        let moving = Decision::Patch {
            target: "ami-new".into(),
            patch: patch(),
            user_data_secret: None,
            import: None,
        };
        let summary = writer.observe(&plan(moving, None)).await;
        assert_eq!(summary.keys["MachineSet.bootImage"].differ, 1);
        assert_eq!(summary.sample[0].object, "a");
        assert_eq!(summary.sample[0].outcome.ours, "boot image ami-new");
        assert_eq!(writes(&writer, "patch_machineset"), 0);
        let summary = writer
            .observe(&plan(Decision::noop("on target"), None))
            .await;
        assert_eq!(summary.keys["MachineSet.bootImage"].agree, 1);
        assert!(summary.sample.is_empty());
    }

    fn machineset() -> Arc<Decoded<MachineSetView>> {
        let object = json!({
            "kind": "MachineSet",
            "metadata": {"name": "a", "namespace": MACHINE_API_NAMESPACE, "resourceVersion": "41"},
            "spec": {"template": {"spec": {"providerSpec": {"value": {
                "ami": {"id": "ami-old"}, "userDataSecret": {"name": "a-user-data"}}}}}},
        });
        Arc::new(Decoded::read(
            &object,
            machine_decoder(MachineKind::MachineSet),
        ))
    }

    fn patch() -> Value {
        json!({"spec": {"template": {"spec": {"providerSpec": {"value": {"ami": {"id": "ami-new"}}}}}}})
    }

    fn plan(outcome: Decision, secret_version: Option<&str>) -> Plan {
        Plan {
            state: ControllerState::default(),
            save_state: false,
            stopped: None,
            actions: vec![Action {
                subject: Subject::machineset("a"),
                object: machineset(),
                outcome: Ok(outcome),
                secret_version: secret_version.map(str::to_owned),
                vcenter: None,
                ec2_unconsulted: None,
            }],
        }
    }

    fn machineconfiguration(conditions: &[Condition]) -> Arc<Decoded<MachineConfiguration>> {
        let object = json!({
            "kind": "MachineConfiguration",
            "metadata": {"name": "cluster", "resourceVersion": "7"},
            "status": {"conditions": conditions},
        });
        Arc::new(Decoded::of(&object))
    }

    fn writes(writer: &Writer, kind: &str) -> u64 {
        let labels = KindLabels { kind: kind.into() };
        writer
            .metrics
            .cluster
            .api_writes
            .get_or_create(&labels)
            .get()
    }

    #[tokio::test]
    async fn nothing_changed_writes_nothing() {
        let (client, scenario) = mock::serve(vec![]);
        let writer = writer(client);
        let (tally, conflicted) = writer
            .execute(plan(Decision::noop("on target"), None), None, "Resync")
            .await;
        assert_eq!((tally.machinesets.reconciled, conflicted), (1, false));
        // Conditions that already say what the pass would say stay as they are.
        let wanted = [tally.progressing(), tally.degraded()];
        let now = Time(Timestamp::now());
        let existing = conditions::next_conditions(&[], &wanted, "Resync", &now);
        let mc = machineconfiguration(&existing.unwrap_or_default());
        writer.write_conditions(Some(&mc), &wanted, "Resync").await;
        scenario.done().await;
        assert_eq!(writes(&writer, "boot_image_conditions"), 0);
    }

    #[tokio::test]
    async fn the_machineset_patch_lands_when_the_status_write_fails() {
        let (client, scenario) = mock::serve(vec![
            // Progressing, before any MachineSet is patched: refused.
            Call::patch(CONDITIONS).refuse(500, "InternalError"),
            Call::patch(MACHINESET)
                .body(json!({"metadata": {"resourceVersion": "41"},
                    "spec": {"template": {"spec": {"providerSpec": {"value": {"ami": {"id": "ami-new"}}}}}}}))
                .answer(json!({"apiVersion": "machine.openshift.io/v1beta1", "kind": "MachineSet",
                    "metadata": {"name": "a", "resourceVersion": "42"}})),
            // The hot-loop record of the patch.
            Call::patch(STATE).answer(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "state", "namespace": "mco-system"}})),
        ]);
        let writer = writer(client);
        let decision = Decision::Patch {
            target: "ami-new".into(),
            patch: patch(),
            user_data_secret: None,
            import: None,
        };
        let mc = machineconfiguration(&[]);
        let (tally, conflicted) = writer
            .execute(plan(decision, None), Some(&mc), "Resync")
            .await;
        scenario.done().await;
        assert!(!conflicted);
        assert_eq!(tally.machinesets.reconciled, 1);
        assert!(tally.machinesets.errors.is_empty());
        assert_eq!(writer.metrics.bootimage.patches.get(), 1);
        assert_eq!(writes(&writer, "boot_image_state"), 1);
        assert_eq!(writes(&writer, "boot_image_conditions"), 0);
    }

    #[tokio::test]
    async fn a_conflict_on_the_resource_version_writes_nothing_more() {
        let (client, scenario) = mock::serve(vec![Call::patch(MACHINESET).refuse(409, "Conflict")]);
        let writer = writer(client);
        let decision = Decision::Patch {
            target: "ami-new".into(),
            patch: patch(),
            user_data_secret: None,
            import: None,
        };
        let (tally, conflicted) = writer.execute(plan(decision, None), None, "Resync").await;
        scenario.done().await;
        assert!(conflicted, "a conflict asks for an early retry");
        assert!(tally.machinesets.errors.is_empty());
        assert_eq!(writer.metrics.bootimage.patches.get(), 0);
        assert_eq!(writes(&writer, "boot_image_state"), 0);
    }

    #[tokio::test]
    async fn a_secret_changed_since_it_was_read_is_not_overwritten() {
        let (client, scenario) = mock::serve(vec![
            Call::patch(SECRET)
                .body(json!({
                    "metadata": {"resourceVersion": "7", "annotations": {
                        ANNOTATION_UPGRADED_AT: "2026-12-01T09:30:00Z",
                        ANNOTATION_UPGRADED_TO: "3.4.0"}},
                    "data": {"userData": "e30="},
                }))
                .refuse(409, "Conflict"),
        ]);
        let writer = writer(client);
        let decision = Decision::Patch {
            target: "ami-new".into(),
            patch: patch(),
            user_data_secret: Some(UserDataUpgrade {
                name: "a-user-data".into(),
                data: UserData {
                    user_data: "e30=".into(),
                },
                annotations: [
                    (ANNOTATION_UPGRADED_TO, "3.4.0"),
                    (ANNOTATION_UPGRADED_AT, "2026-12-01T09:30:00Z"),
                    ("unasked", "x"),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            }),
            import: None,
        };
        let (tally, _) = writer
            .execute(plan(decision, Some("7")), None, "Resync")
            .await;
        scenario.done().await;
        let errors = &tally.machinesets.errors;
        assert!(
            errors.len() == 1
                && errors[0]
                    .starts_with("could not update secret openshift-machine-api/a-user-data: "),
            "{errors:?}"
        );
        // The MachineSet is not moved to an image its stub cannot boot.
        assert_eq!(writer.metrics.bootimage.patches.get(), 0);
    }
}
