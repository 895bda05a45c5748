//! The live side of vCenter, over `mco-vsphere`: the connections that
//! answer what the planner asks (`vcenter`, sans-IO). The credentials
//! (Secret `kube-system/vsphere-creds`, keys `<server>.username` and
//! `<server>.password`, read for the workspace's vCenter only), the reads
//! the planner asks for (one session per vCenter and pass; an interrupted
//! template swap is undone first, in own mode only), install-config's disk
//! type for a template made anew, and, in the writer, the OVA download
//! into the digest-keyed cache and the import. Every call has a timeout
//! (`mco_vsphere::Timeouts`), and every failure is a text that names the
//! step, which the pass reports against the MachineSet and the vCenter.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Client;
use kube::api::Api;
use mco_bootimage::vcenter::{VcenterVm, same_folder};
use mco_vsphere::{Endpoint, Imported, Ova, OvaCache, Recovery, Session, Timeouts, Trust};
use tokio::sync::OnceCell;
use tracing::Instrument;

use super::{
    Answer, INSTALL_CONFIG_CONFIGMAP, INSTALL_CONFIG_NAMESPACE, ImportPlan, Lookup, VcenterRead,
};
use crate::objects::ConfigMapData;

/// Where vSphere credentials are kept (upstream `reconcileVSphereProviderSpec`).
pub const CREDENTIALS_NAMESPACE: &str = "kube-system";
pub const CREDENTIALS_SECRET: &str = "vsphere-creds";

/// `--ova-cache-max-mib`'s default: two RHCOS OVAs (about 1.2 GiB each),
/// the cached one and the next release's download, within the Deployment's
/// 4 GiB `emptyDir` (`host/tests/deploy.rs` checks the bound fits it).
pub const DEFAULT_OVA_CACHE_MAX_MIB: u64 = 3072;

/// How the job talks to vCenters and where it keeps OVAs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The digest-keyed OVA cache (the Deployment's `emptyDir`).
    pub ova_cache: PathBuf,
    /// The cache directory's size bound, downloads included; an OVA
    /// larger than it is refused.
    pub ova_cache_max_bytes: u64,
    pub trust: Trust,
    pub timeouts: Timeouts,
}

/// The job's vCenter client: shared by the controller (reads) and the
/// writer (imports).
pub struct Vcenters {
    client: Client,
    trust: Trust,
    timeouts: Timeouts,
    cache: OvaCache,
}

impl Vcenters {
    pub fn new(client: Client, options: Options) -> Arc<Vcenters> {
        Arc::new(Vcenters {
            client,
            trust: options.trust,
            timeouts: options.timeouts,
            cache: OvaCache::new(options.ova_cache, options.ova_cache_max_bytes),
        })
    }

    /// A session on the vCenter at `address`, as the user the credentials
    /// Secret names for `server`.
    async fn login(&self, server: &str, address: &str) -> Result<Session, String> {
        let endpoint = self.endpoint(server, address).await?;
        Session::login(&endpoint, &self.trust, self.timeouts)
            .await
            .map_err(|e| format!("logging in as {}: {e}", endpoint.username))
    }

    async fn endpoint(&self, server: &str, address: &str) -> Result<Endpoint, String> {
        let secrets: Api<Secret> = Api::namespaced(self.client.clone(), CREDENTIALS_NAMESPACE);
        let secret = secrets.get(CREDENTIALS_SECRET).await.map_err(|e| {
            format!("reading Secret {CREDENTIALS_NAMESPACE}/{CREDENTIALS_SECRET}: {e}")
        })?;
        let data = secret.data.unwrap_or_default();
        let key = |suffix: &str| {
            let key = format!("{server}.{suffix}");
            let value = data
                .get(&key)
                .map(|bytes| String::from_utf8_lossy(&bytes.0).into_owned());
            value.filter(|v| !v.is_empty()).ok_or_else(|| {
                format!(
                    "Secret {CREDENTIALS_NAMESPACE}/{CREDENTIALS_SECRET} has no {key} for this vCenter"
                )
            })
        };
        Ok(Endpoint {
            server: address.to_owned(),
            username: key("username")?,
            password: key("password")?,
        })
    }

    /// The reads a pass asks for, each answered: one session per vCenter,
    /// logged out after. `recover`: undo a template swap a crash
    /// interrupted before reading (own mode only: it renames a VM).
    pub async fn read(
        &self,
        reads: Vec<VcenterRead>,
        recover: bool,
    ) -> Vec<(usize, Result<Answer, String>)> {
        let mut by_server: BTreeMap<(String, String), Vec<VcenterRead>> = BTreeMap::new();
        for read in reads {
            let key = (read.lookup.workspace.server.clone(), read.lookup.address());
            by_server.entry(key).or_default().push(read);
        }
        // install-config is read once a pass, and only if a template is new.
        let install_config = OnceCell::new();
        let mut answers = Vec::new();
        for ((server, address), reads) in by_server {
            let span = tracing::info_span!("vcenter", %address);
            let read = self.read_server((&server, &address), reads, recover, &install_config);
            answers.extend(read.instrument(span).await);
        }
        answers
    }

    /// The reads of one vCenter, in one session.
    async fn read_server(
        &self,
        (server, address): (&str, &str),
        reads: Vec<VcenterRead>,
        recover: bool,
        install_config: &OnceCell<Result<Option<String>, String>>,
    ) -> Vec<(usize, Result<Answer, String>)> {
        let session = match self.login(server, address).await {
            Ok(session) => session,
            Err(detail) => {
                tracing::warn!(%detail, "cannot read vCenter");
                return reads
                    .into_iter()
                    .map(|r| (r.index, Err(detail.clone())))
                    .collect();
            }
        };
        let mut answers = Vec::with_capacity(reads.len());
        for read in reads {
            let answer = self
                .read_one(&session, &read.lookup, recover, install_config)
                .await;
            answers.push((read.index, answer));
        }
        if let Err(err) = session.logout().await {
            tracing::debug!(error = %err, "vCenter logout failed");
        }
        answers
    }

    async fn read_one(
        &self,
        session: &Session,
        lookup: &Lookup,
        recover: bool,
        install_config: &OnceCell<Result<Option<String>, String>>,
    ) -> Result<Answer, String> {
        let datacenter = &lookup.failure_domain.topology.datacenter;
        let managed = lookup.managed();
        if recover {
            let folder = &lookup.workspace.folder;
            match session.recover_swap(datacenter, folder, &managed).await {
                Ok(Recovery::Nothing) => {}
                Ok(Recovery::RenamedBack { from }) => {
                    tracing::warn!(%from, template = %managed, "an interrupted template swap was undone");
                }
                Ok(Recovery::RemovedLeftover { name }) => {
                    tracing::warn!(%name, template = %managed, "removed the old template an interrupted swap left");
                }
                Err(e) => return Err(format!("undoing an interrupted swap of {managed}: {e}")),
            }
        }
        let found = session
            .find_vms(datacenter, &lookup.names)
            .await
            .map_err(|e| format!("looking up templates {}: {e}", lookup.names.join(", ")))?;
        let vms: Vec<VcenterVm> = found
            .into_iter()
            .map(|vm| VcenterVm {
                name: vm.name,
                folder: vm.folder,
                template: vm.template,
                release: vm.release,
                disk_type: vm.disk_type.map(|d| d.as_str().to_owned()),
            })
            .collect();
        let folder = &lookup.workspace.folder;
        let new_template = !vms.iter().any(|vm| same_folder(&vm.folder, folder));
        let install_disk_type = if new_template {
            let read = install_config
                .get_or_init(|| self.install_disk_type())
                .await;
            read.clone().map_err(|e| {
                format!(
                    "failed to determine disk provisioning type for new template {managed}: {e}"
                )
            })?
        } else {
            None
        };
        Ok(Answer {
            vms,
            install_disk_type,
        })
    }

    async fn install_disk_type(&self) -> Result<Option<String>, String> {
        let configmaps: Api<ConfigMap> =
            Api::namespaced(self.client.clone(), INSTALL_CONFIG_NAMESPACE);
        let cm = configmaps
            .get(INSTALL_CONFIG_CONFIGMAP)
            .await
            .map_err(|e| format!("failed to fetch {INSTALL_CONFIG_CONFIGMAP} configmap: {e}"))?;
        super::install_disk_type(&ConfigMapData {
            data: cm.data.unwrap_or_default(),
        })
    }

    /// Downloads the OVA (or finds it in the cache, its digest checked),
    /// checks that it holds the stream's release, then imports it as the
    /// plan's template and swaps it in, unless the folder's template holds
    /// that release already. `Err` names the step. It runs inside the
    /// pass, which is dropped at whatever step it stands when the lease is
    /// lost: what it leaves then is what a crash leaves (`mco_vsphere`'s
    /// import docs), and the next leader's pass clears it.
    pub async fn import(&self, plan: &ImportPlan) -> Result<Imported, String> {
        let path = self
            .cache
            .fetch(&plan.url, &plan.sha256, self.timeouts.transfer)
            .await
            .map_err(|e| format!("downloading the OVA: {e}"))?;
        // Reading the tar's headers is blocking file I/O.
        let ova = tokio::task::spawn_blocking(move || Ova::open(&path))
            .await
            .map_err(|e| format!("reading the OVA: {e}"))?
            .map_err(|e| format!("reading the OVA: {e}"))?;
        // The digest is the stream's, but the release is what the template
        // will say it holds: an OVA of another release would be imported
        // again on every pass.
        if ova.product_version() != Some(plan.release.as_str()) {
            return Err(format!(
                "the OVA {} holds release {}, not the stream's {}",
                plan.url,
                ova.product_version().unwrap_or("(none)"),
                plan.release
            ));
        }
        let session = self.login(&plan.server, &plan.address).await?;
        let result = session
            .import_template(&plan.placement, &ova)
            .await
            .map_err(|e| e.to_string());
        if let Err(err) = session.logout().await {
            tracing::debug!(error = %err, "vCenter logout failed");
        }
        result
    }
}
