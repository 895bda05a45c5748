//! What `mco-host preflight` checks for the MachineConfigNode job: the
//! feature gates (what the writer writes follows them), the
//! MachineConfigNode CRD served and declaring every field written, the
//! operator's daemon not writing MCN conditions itself (`observe.rs`), and
//! what the host's ServiceAccount may do with MCNs and Nodes.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, ListParams};

use super::crd::MachineConfigNode;
use super::{observe, write};
use mco_cluster::served_crd;
use mco_job::feature_gates::{self, FeatureGates, Modelled};
use mco_job::preflight::{BOTH, Check, Checks, OWN, can};
use mco_mcn::IMAGE_MODE_STATUS_REPORTING;

/// The checks, in the order `preflight` shows them; `gates`: every job's.
pub fn checks<'a>(client: &'a Client, user: &'a str, gates: &'a Modelled) -> Checks<'a> {
    Box::pin(async move {
        // What the writer writes follows the gates: configImage only with
        // ImageModeStatusReporting on.
        let (gates, gates_check) = match feature_gates::read_cluster(client, gates).await {
            Ok(gates) => {
                let detail = gates.to_string();
                (
                    gates,
                    Check {
                        check: "feature gates",
                        ok: Some(true),
                        detail,
                        blocks: &[],
                    },
                )
            }
            Err(err) => (
                FeatureGates::default_of(gates),
                Check {
                    check: "feature gates",
                    ok: None,
                    detail: format!("{err}; assuming the Default feature set"),
                    blocks: &[],
                },
            ),
        };
        let mut checks = vec![gates_check];
        checks.append(&mut crd(client, &gates).await);
        checks.push(writers(client).await);
        let mco = "machineconfiguration.openshift.io";
        for (blocks, access) in [
            (BOTH, (mco, "machineconfignodes", "", "watch", None)),
            (BOTH, ("", "nodes", "", "watch", None)),
            (OWN, (mco, "machineconfignodes", "status", "patch", None)),
            (OWN, (mco, "machineconfignodes", "", "create", None)),
        ] {
            checks.push(can(client, user, blocks, access).await);
        }
        checks
    })
}

/// The CRD served, and declaring what the writer writes under `gates`.
async fn crd(client: &Client, gates: &FeatureGates) -> Vec<Check> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    match crds.get_opt(write::CRD_NAME).await {
        Ok(Some(crd)) => {
            let fields = write::written_fields(gates.enabled(IMAGE_MODE_STATUS_REPORTING));
            let declared = served_crd::check(&crd, write::VERSION, &fields);
            vec![
                Check {
                    check: "MachineConfigNode CRD served",
                    ok: Some(true),
                    detail: write::CRD_NAME.into(),
                    blocks: BOTH,
                },
                Check {
                    check: "MachineConfigNode CRD takes the host's writes",
                    ok: Some(declared.is_ok()),
                    detail: declared.err().map_or_else(
                        || format!("{} declares every field written", write::VERSION),
                        |e| e.to_string(),
                    ),
                    blocks: OWN,
                },
            ]
        }
        Ok(None) => vec![Check {
            check: "MachineConfigNode CRD served",
            ok: Some(false),
            detail: "not installed (plain Kubernetes: add deploy/components/machineconfignode-crd)"
                .into(),
            blocks: BOTH,
        }],
        Err(err) => vec![Check {
            check: "MachineConfigNode CRD served",
            ok: None,
            detail: format!("cannot read it: {err}"),
            blocks: BOTH,
        }],
    }
}

/// Whether the operator's daemon writes MCN conditions, which the host
/// then must not own.
async fn writers(client: &Client) -> Check {
    let mcns: Api<MachineConfigNode> = Api::all(client.clone());
    match mcns.list(&ListParams::default()).await {
        Ok(list) => {
            let items: Vec<_> = list.items.into_iter().map(std::sync::Arc::new).collect();
            let refusal = observe::operator_writes(&items);
            Check {
                check: "operator's daemon writes MCN conditions",
                ok: Some(refusal.is_none()),
                detail: refusal.unwrap_or_else(|| format!("not seen on {} MCNs", items.len())),
                blocks: OWN,
            }
        }
        Err(err) => Check {
            check: "operator's daemon writes MCN conditions",
            ok: None,
            detail: format!("cannot list MachineConfigNodes: {err}"),
            blocks: OWN,
        },
    }
}
