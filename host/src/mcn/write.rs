//! Where MachineConfigNodes get written: server-side apply of spec, then
//! status, with the one field manager, each only when it differs from the
//! newest copy known, and deletes. What was written is kept until the
//! watch shows it (`OwnWrites`).

use std::sync::Arc;

use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::{Client, Resource, ResourceExt};
use serde_json::json;

use super::crd::{MachineConfigNode, MachineConfigNodeStatus};
use crate::kube::own_writes::OwnWrites;
use crate::kube::{FIELD_MANAGER, is_status};
use crate::metrics::Metrics;

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
    pub(super) async fn apply(
        &self,
        previous: Option<&MachineConfigNode>,
        desired: &MachineConfigNode,
    ) -> Result<(), kube::Error> {
        let params = PatchParams::apply(FIELD_MANAGER).force();
        let name = desired.name_any();
        let (api_version, kind) = (
            MachineConfigNode::api_version(&()),
            MachineConfigNode::kind(&()),
        );
        let spec_changed = previous.is_none_or(|p| {
            p.spec != desired.spec
                || p.metadata.owner_references != desired.metadata.owner_references
        });
        if spec_changed {
            let body = json!({
                "apiVersion": api_version, "kind": kind,
                "metadata": {"name": name, "ownerReferences": desired.metadata.owner_references},
                "spec": desired.spec,
            });
            let written = self.api.patch(&name, &params, &Patch::Apply(&body)).await?;
            self.metrics.count_write(if previous.is_none() {
                "create"
            } else {
                "apply_spec"
            });
            self.written.remember(written);
        }
        // A Windows node's MCN has no status to write (no daemon reports
        // on it); whatever another writer put there stays.
        let Some(status) = &desired.status else {
            return Ok(());
        };
        if previous.and_then(|p| p.status.as_ref()).map(ours) != Some(status.clone()) {
            let body = json!({
                "apiVersion": api_version, "kind": kind,
                "metadata": {"name": name},
                "status": desired.status,
            });
            let written = self
                .api
                .patch_status(&name, &params, &Patch::Apply(&body))
                .await?;
            self.metrics.count_write("apply_status");
            self.written.remember(written);
        }
        Ok(())
    }

    pub(super) async fn delete(&self, name: &str) -> Result<(), kube::Error> {
        match self.api.delete(name, &DeleteParams::default()).await {
            Ok(_) => {
                self.metrics.count_write("delete");
                self.written.forget(name);
                tracing::info!(mcn = name, "deleted MachineConfigNode");
                Ok(())
            }
            Err(err) if is_status(&err, 404) => Ok(()),
            Err(err) => Err(err),
        }
    }
}
