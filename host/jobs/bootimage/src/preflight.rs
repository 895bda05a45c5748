//! What `mco-host preflight` checks for the boot image job: the
//! operator's boot image controller not writing its conditions on
//! MachineConfiguration `cluster` (`controller.rs`), and what the host's
//! ServiceAccount may do with MachineSets and that status.

use kube::Client;
use kube::api::{Api, DynamicObject};

use super::objects::{Decoded, MACHINE_API_NAMESPACE, MachineConfiguration};
use mco_cluster::resources::MACHINE_CONFIGURATION;
use mco_job::feature_gates::Modelled;
use mco_job::preflight::{BOTH, Check, Checks, OWN, can};

/// The checks, in the order `preflight` shows them (the gates are the
/// MachineConfigNode job's concern, not this job's).
pub fn checks<'a>(client: &'a Client, user: &'a str, _: &'a Modelled) -> Checks<'a> {
    Box::pin(async move {
        let machine = "machine.openshift.io";
        let ns = Some(MACHINE_API_NAMESPACE);
        let mut checks = vec![writers(client).await];
        for (blocks, access) in [
            (BOTH, (machine, "machinesets", "", "watch", ns)),
            (OWN, (machine, "machinesets", "", "patch", ns)),
            (
                OWN,
                (
                    "operator.openshift.io",
                    "machineconfigurations",
                    "status",
                    "patch",
                    None,
                ),
            ),
        ] {
            checks.push(can(client, user, blocks, access).await);
        }
        checks
    })
}

/// Whether the operator's boot image controller writes its conditions,
/// which the host then must not own.
async fn writers(client: &Client) -> Check {
    let api: Api<DynamicObject> =
        Api::all_with(client.clone(), &MACHINE_CONFIGURATION.api_resource());
    match api.get_opt("cluster").await {
        Ok(object) => {
            let decoded = object
                .and_then(|o| serde_json::to_value(o).ok())
                .map(|v| Decoded::<MachineConfiguration>::of(&v));
            let refusal = super::controller::operator_writes(decoded.as_ref());
            Check {
                check: "operator's boot image controller writes its conditions",
                ok: Some(refusal.is_none()),
                detail: refusal
                    .unwrap_or_else(|| "not seen on MachineConfiguration cluster".into()),
                blocks: OWN,
            }
        }
        Err(err) => Check {
            check: "operator's boot image controller writes its conditions",
            ok: None,
            detail: format!("cannot read MachineConfiguration cluster: {err}"),
            blocks: OWN,
        },
    }
}
