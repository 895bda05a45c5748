//! Where MachineConfigNodes get written: server-side apply of spec, then
//! status, with the one field manager, each only when it differs from the
//! newest copy known, and deletes. What was written is kept until the
//! watch shows it (`OwnWrites`).

use std::sync::Arc;

use kube::api::{Api, DeleteParams, Patch, PatchParams, Preconditions, ValidationDirective};
use kube::{Client, Resource, ResourceExt};
use serde_json::json;

use super::crd::{MachineConfigNode, MachineConfigNodeStatus};
use super::metrics::Metrics;
use mco_cluster::own_writes::OwnWrites;
use mco_cluster::{FIELD_MANAGER, is_status};

/// The MachineConfigNode version every write is made in.
pub const VERSION: &str = "v1";

/// The CRD's name, which the served-CRD check reads.
pub const CRD_NAME: &str = "machineconfignodes.machineconfiguration.openshift.io";

/// Every field the applies below may write (the served-CRD check asks the
/// cluster's CRD for them). `configImage` in spec and status only when
/// the writer writes it (upstream: feature gate `ImageModeStatusReporting`).
pub fn written_fields(config_image: bool) -> Vec<&'static str> {
    let mut fields = vec![
        "spec.node.name",
        "spec.pool.name",
        "spec.configVersion.desired",
        "status.conditions[].type",
        "status.conditions[].status",
        "status.conditions[].reason",
        "status.conditions[].message",
        "status.conditions[].lastTransitionTime",
        "status.observedGeneration",
        "status.configVersion.desired",
        "status.configVersion.current",
    ];
    if config_image {
        fields.extend([
            "spec.configImage.desiredImage",
            "status.configImage.currentImage",
            "status.configImage.desiredImage",
        ]);
    }
    fields
}

pub(super) struct Writer {
    api: Api<MachineConfigNode>,
    metrics: Metrics,
    /// Shared with the MCN watch's filter, which drops the echoes of these writes.
    pub(super) written: Arc<OwnWrites<MachineConfigNode>>,
}

/// The part of a stored status our apply owns. The daemon-only fields
/// (`pinnedImageSets`, `irreconcilableChanges`, `internalReleaseImage`)
/// are never in our apply, so another writer's values there survive it and
/// must not make a resync look like a change.
fn ours(status: &MachineConfigNodeStatus) -> MachineConfigNodeStatus {
    MachineConfigNodeStatus {
        pinned_image_sets: Vec::new(),
        irreconcilable_changes: Vec::new(),
        internal_release_image: None,
        ..status.clone()
    }
}

/// Server-side apply as the host's field manager, taking over fields
/// another manager set. Field validation is off: the bodies are this
/// host's own typed objects, already checked against the CRD's rules
/// (`mco_mcn::validate`), and kube-rs drops the apiserver's `Warning`
/// headers, so the default (`Warn`) only cost the apiserver its
/// unknown-field check: 6.2–6.5 ms of apiserver and etcd CPU per MCN write
/// with it, 4.8 ms without (3,000 MCNs, 32 in flight, 2 cores).
fn params() -> PatchParams {
    let mut params = PatchParams::apply(FIELD_MANAGER).force();
    params.field_validation = Some(ValidationDirective::Ignore);
    params
}

impl Writer {
    pub(super) fn new(client: Client, metrics: Metrics) -> Writer {
        Writer {
            api: Api::all(client),
            metrics,
            written: Arc::default(),
        }
    }

    /// Applies spec, then status, each only when it differs from what is
    /// stored (status compared with transition times, which are kept for
    /// unchanged conditions, so a resync of an unchanged node writes nothing).
    /// Returns whether the watch showed someone else's change to the MCN
    /// while these writes were in flight: the node should be decided again.
    pub(super) async fn apply(
        &self,
        previous: Option<&MachineConfigNode>,
        desired: &MachineConfigNode,
    ) -> Result<bool, kube::Error> {
        let spec_changed = previous.is_none_or(|p| {
            p.spec != desired.spec
                || p.metadata.owner_references != desired.metadata.owner_references
        });
        // A Windows node's MCN has no status to write (no daemon reports
        // on it); whatever another writer put there stays.
        let status = desired.status.as_ref().filter(|status| {
            previous.and_then(|p| p.status.as_ref()).map(ours).as_ref() != Some(*status)
        });
        if !spec_changed && status.is_none() {
            return Ok(false);
        }
        let name = desired.name_any();
        let (api_version, kind) = (
            MachineConfigNode::api_version(&()),
            MachineConfigNode::kind(&()),
        );
        let flight = self.written.take_off(&name);
        let mut written = None;
        if spec_changed {
            let body = json!({
                "apiVersion": api_version, "kind": kind,
                "metadata": {"name": name, "ownerReferences": desired.metadata.owner_references},
                "spec": desired.spec,
            });
            written = Some(
                self.api
                    .patch(&name, &params(), &Patch::Apply(&body))
                    .await?,
            );
            self.metrics.cluster.count_write(if previous.is_none() {
                "create"
            } else {
                "apply_spec"
            });
        }
        if let Some(status) = status {
            let body = json!({
                "apiVersion": api_version, "kind": kind,
                "metadata": {"name": name},
                "status": status,
            });
            match self
                .api
                .patch_status(&name, &params(), &Patch::Apply(&body))
                .await
            {
                Ok(object) => written = Some(object),
                Err(err) => {
                    // The spec went in: the next decision starts from it.
                    if let Some(spec) = written {
                        flight.land(spec);
                    }
                    return Err(err);
                }
            }
            self.metrics.cluster.count_write("apply_status");
        }
        Ok(written.is_some_and(|written| flight.land(written)))
    }

    /// Deletes `mcn`, that very object: its UID is a precondition, so an
    /// MCN created again under its name since it was read stays. Returns
    /// whether it was deleted (not when it was gone already, or replaced).
    pub(super) async fn delete(&self, mcn: &MachineConfigNode) -> Result<bool, kube::Error> {
        let name = mcn.name_any();
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: mcn.metadata.uid.clone(),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match self.api.delete(&name, &params).await {
            Ok(_) => {
                self.metrics.cluster.count_write("delete");
                self.written.forget(&name);
                tracing::info!(mcn = name, "deleted MachineConfigNode");
                Ok(true)
            }
            Err(err) if is_status(&err, 404) || is_status(&err, 409) => Ok(false),
            Err(err) => Err(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use prometheus_client::registry::Registry;
    use serde_json::Value;

    use super::*;
    use mco_cluster::mock::{self, Call};

    const PATH: &str = "/apis/machineconfiguration.openshift.io/v1/machineconfignodes/worker-0";
    const APPLY: &str = "fieldManager=mco-host&force=true&fieldValidation=Ignore";

    fn spec(desired: &str) -> Value {
        json!({"node": {"name": "worker-0"}, "pool": {"name": "worker"}, "configVersion": {"desired": desired}})
    }

    fn status(updated: &str) -> Value {
        json!({"conditions": [{
            "type": "Updated", "status": updated, "reason": "R", "message": "m",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }]})
    }

    /// An MCN as stored at `resource_version`, or as decided (`""`: none).
    fn mcn(resource_version: &str, spec: Value, status: Option<Value>) -> MachineConfigNode {
        let mut object = json!({
            "apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigNode",
            "metadata": {"name": "worker-0"},
            "spec": spec,
        });
        if !resource_version.is_empty() {
            object["metadata"]["resourceVersion"] = json!(resource_version);
        }
        if let Some(status) = status {
            object["status"] = status;
        }
        serde_json::from_value(object).unwrap_or_else(|err| panic!("{err}"))
    }

    fn spec_apply(desired: &str) -> Call {
        Call::patch(PATH).query(APPLY).body(json!({
            "apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigNode",
            "metadata": {"name": "worker-0", "ownerReferences": null},
            "spec": spec(desired),
        }))
    }

    fn status_apply(updated: &str) -> Call {
        Call::patch(&format!("{PATH}/status"))
            .query(APPLY)
            .body(json!({
                "apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigNode",
                "metadata": {"name": "worker-0"},
                "status": status(updated),
            }))
    }

    fn serve(calls: Vec<Call>) -> (Writer, Registry, mock::Scenario) {
        let mut registry = Registry::default();
        let metrics = crate::run_command::registered_metrics(&mut registry);
        let (client, scenario) = mock::serve(calls);
        (Writer::new(client, metrics), registry, scenario)
    }

    /// The `mco_api_writes_total` counts, by kind.
    /// The write counter's samples, sorted: a metric family encodes its
    /// label sets in hash order.
    fn writes(registry: &Registry) -> Vec<String> {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, registry)
            .unwrap_or_else(|err| panic!("{err}"));
        let mut samples: Vec<String> = text
            .lines()
            .filter(|line| line.starts_with("mco_api_writes_total{"))
            .map(str::to_string)
            .collect();
        samples.sort();
        samples
    }

    /// What the writer remembers of its own writes, by resource version.
    fn remembered(writer: &Writer) -> Option<String> {
        let newest = writer.written.newest("worker-0", None)?;
        newest.metadata.resource_version.clone()
    }

    #[tokio::test]
    async fn nothing_changed_writes_nothing() {
        let (writer, registry, scenario) = serve(vec![]);
        let mut stored = mcn("5", spec("rendered-b"), Some(status("True")));
        // The daemon's own fields are not ours to compare.
        let daemon = json!([{"fieldPath": "spec.config.storage.disks[0]", "diff": "d"}]);
        if let Some(status) = stored.status.as_mut() {
            status.irreconcilable_changes =
                serde_json::from_value(daemon).unwrap_or_else(|err| panic!("{err}"));
        }
        let desired = mcn("", spec("rendered-b"), Some(status("True")));
        let changed = writer.apply(Some(&stored), &desired).await;
        assert!(matches!(changed, Ok(false)), "{changed:?}");
        // A Windows node's MCN has no status of ours: only the spec counts.
        let windows = mcn("", spec("rendered-b"), None);
        let changed = writer.apply(Some(&stored), &windows).await;
        assert!(matches!(changed, Ok(false)), "{changed:?}");
        scenario.done().await;
        assert_eq!(writes(&registry), Vec::<String>::new());
        assert_eq!(remembered(&writer), None);
    }

    #[tokio::test]
    async fn a_new_node_gets_its_spec_then_its_status() {
        let (writer, registry, scenario) = serve(vec![
            spec_apply("rendered-b").answer(mcn("5", spec("rendered-b"), None)),
            status_apply("False").answer(mcn("6", spec("rendered-b"), Some(status("False")))),
        ]);
        let desired = mcn("", spec("rendered-b"), Some(status("False")));
        let changed = writer.apply(None, &desired).await;
        assert!(matches!(changed, Ok(false)), "{changed:?}");
        scenario.done().await;
        assert_eq!(
            writes(&registry),
            [
                r#"mco_api_writes_total{kind="apply_status"} 1"#,
                r#"mco_api_writes_total{kind="create"} 1"#,
            ]
        );
        assert_eq!(remembered(&writer).as_deref(), Some("6"));
    }

    #[tokio::test]
    async fn only_what_differs_is_written() {
        let stored = mcn("5", spec("rendered-a"), Some(status("True")));
        for ((desired, updated), call, kind) in [
            (
                ("rendered-a", "False"),
                status_apply("False"),
                "apply_status",
            ),
            (
                ("rendered-b", "True"),
                spec_apply("rendered-b"),
                "apply_spec",
            ),
        ] {
            let answer = mcn("6", spec(desired), Some(status(updated)));
            let (writer, registry, scenario) = serve(vec![call.answer(answer)]);
            let desired = mcn("", spec(desired), Some(status(updated)));
            let changed = writer.apply(Some(&stored), &desired).await;
            assert!(matches!(changed, Ok(false)), "{kind}: {changed:?}");
            scenario.done().await;
            let counted = format!(r#"mco_api_writes_total{{kind="{kind}"}} 1"#);
            assert_eq!(writes(&registry), [counted]);
            assert_eq!(remembered(&writer).as_deref(), Some("6"), "{kind}");
        }
    }

    #[tokio::test]
    async fn a_spec_that_lands_is_remembered_when_the_status_fails() {
        let stored = mcn("5", spec("rendered-a"), Some(status("True")));
        let (writer, registry, scenario) = serve(vec![
            spec_apply("rendered-b").answer(mcn("6", spec("rendered-b"), Some(status("True")))),
            status_apply("False").refuse(500, "InternalError"),
        ]);
        let desired = mcn("", spec("rendered-b"), Some(status("False")));
        let failed = writer.apply(Some(&stored), &desired).await;
        assert!(
            failed.as_ref().is_err_and(|err| is_status(err, 500)),
            "{failed:?}"
        );
        scenario.done().await;
        assert_eq!(
            writes(&registry),
            [r#"mco_api_writes_total{kind="apply_spec"} 1"#]
        );
        // The next decision starts from the spec that went in.
        assert_eq!(remembered(&writer).as_deref(), Some("6"));
        assert!(writer.written.is_echo(&mcn("6", spec("rendered-b"), None)));
    }

    #[tokio::test]
    async fn a_conflict_is_returned_and_nothing_remembered() {
        let stored = mcn("5", spec("rendered-a"), Some(status("True")));
        let (writer, registry, scenario) =
            serve(vec![spec_apply("rendered-b").refuse(409, "Conflict")]);
        let desired = mcn("", spec("rendered-b"), Some(status("False")));
        let failed = writer.apply(Some(&stored), &desired).await;
        assert!(
            failed.as_ref().is_err_and(|err| is_status(err, 409)),
            "{failed:?}"
        );
        scenario.done().await;
        assert_eq!(writes(&registry), Vec::<String>::new());
        assert_eq!(remembered(&writer), None);
        // The failed write's flight ended: the watch is news again.
        assert!(!writer.written.is_echo(&mcn("7", spec("rendered-c"), None)));
    }

    #[tokio::test]
    async fn deletes_only_the_mcn_it_read() {
        let precondition = json!({"preconditions": {"uid": "u-1"}});
        let delete = || Call::delete(PATH).body(precondition.clone());
        let (writer, registry, scenario) = serve(vec![
            delete().answer(mcn("7", spec("rendered-b"), None)),
            delete().refuse(404, "NotFound"),
            // Created again under its name since it was read: another UID.
            delete().refuse(409, "Conflict"),
            delete().refuse(403, "Forbidden"),
        ]);
        writer.written.remember(mcn("6", spec("rendered-b"), None));
        let mut read = mcn("6", spec("rendered-b"), None);
        read.metadata.uid = Some("u-1".into());
        assert!(matches!(writer.delete(&read).await, Ok(true)));
        assert_eq!(remembered(&writer), None, "a deleted node is forgotten");
        assert!(
            matches!(writer.delete(&read).await, Ok(false)),
            "gone already"
        );
        assert!(matches!(writer.delete(&read).await, Ok(false)), "replaced");
        let failed = writer.delete(&read).await;
        assert!(failed.is_err_and(|err| is_status(&err, 403)));
        scenario.done().await;
        assert_eq!(
            writes(&registry),
            [r#"mco_api_writes_total{kind="delete"} 1"#]
        );
    }
}
