//! Where MachineConfigNodes get written: server-side apply of spec, then
//! status, with the one field manager, each only when it differs from the
//! newest copy known, and deletes. What was written is kept until the
//! watch shows it (`OwnWrites`).

use std::sync::Arc;

use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::{Client, Resource, ResourceExt};
use serde_json::json;

use super::crd::MachineConfigNode;
use crate::kube::own_writes::OwnWrites;
use crate::kube::{FIELD_MANAGER, is_status};
use crate::metrics::Metrics;

pub(super) struct Writer {
    api: Api<MachineConfigNode>,
    metrics: Metrics,
    /// Shared with the MCN watch's filter, which drops the echoes of these writes.
    pub(super) written: Arc<OwnWrites<MachineConfigNode>>,
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
        if previous.and_then(|p| p.status.as_ref()) != desired.status.as_ref() {
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
