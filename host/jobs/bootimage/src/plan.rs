//! The boot image pass, sans-IO. From a snapshot of the watched objects and
//! the controller's state, [`gates`] and [`Pass::new`] apply the host rules;
//! the pass then asks for guest decisions ([`Pass::take_requests`]) and for
//! the user-data Secrets of the objects it would patch
//! ([`Pass::secrets`]), and [`Pass::finish`] says what to write. The
//! controller only gathers what is asked for; `eval bootimage` drives the
//! same pass from files. Nothing here reads the cluster or calls a guest.
//!
//! Over 500 lines because its unit tests (the second half) live beside it:
//! they are the planner's specification.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;
use mco_bootimage::ignition::ANNOTATION_UPGRADED_AT;
use mco_bootimage::{Decision, MachineKind, MachineSetView};

use super::ec2::{Ec2Answer, Ec2Progress, Ec2Read, Unconsulted};
use super::error::{PassError, Subject};
use super::guest::{BatchItem, StreamInput};
use super::objects::{
    ClusterVersion, ConfigMapData, Decoded, Infrastructure, MachineConfiguration,
};
use super::rules::{self, MachineSetInputs, Step};
use super::state::{ControllerState, Guard, decision_fingerprint};
use super::vcenter::{Answer, Lookup, VcenterRead};
use mco_job::feature_gates::FeatureGates;

/// A MachineSet or ControlPlaneMachineSet as the watches hold it.
pub type Machine = Arc<Decoded<MachineSetView>>;

/// What a pass reads, as the watches hold it at one instant.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub machineconfiguration: Option<Arc<Decoded<MachineConfiguration>>>,
    pub clusterversion: Option<Arc<Decoded<ClusterVersion>>>,
    pub infrastructure: Option<Arc<Decoded<Infrastructure>>>,
    /// The `coreos-bootimages` ConfigMap.
    pub stream: Option<Arc<Decoded<ConfigMapData>>>,
    /// Its `data.stream`, with the host's parse of it (once per ConfigMap
    /// version, by the caller).
    pub stream_input: Arc<StreamInput>,
    /// The images that stream publishes, recorded as known before any
    /// MachineSet moves off them.
    pub published_images: Arc<BTreeSet<String>>,
    /// The administrator's own list of RHCOS images.
    pub known_images: BTreeSet<String>,
    /// Every MachineSet in the machine API namespace.
    pub machinesets: Vec<Machine>,
    /// ControlPlaneMachineSet `cluster`, when it (and its CRD) exists.
    pub controlplanemachinesets: Vec<Machine>,
    /// Stream arch name of the control plane.
    pub control_plane_arch: String,
    /// Platforms a boot image guest is registered for.
    pub platforms: BTreeSet<String>,
    /// The instant of the pass: a stub upgrade is stamped with it.
    pub now: Timestamp,
    /// The feature gates in force: which kinds a pass takes up, and
    /// whether it keeps the skew record.
    pub gates: Arc<FeatureGates>,
}

/// Why a pass stops before any MachineSet is decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// MachineConfiguration `cluster` is missing or behind its spec: the
    /// controller waits, then reports Degraded.
    NotReady(String),
    /// The cluster is installing or upgrading, or the stream is for
    /// another release: nothing is written.
    Deferred(String),
    /// Boot image updates cannot run at all: reported Degraded.
    Degraded(String),
}

/// A MachineSet (or ControlPlaneMachineSet) enrolled for boot image
/// updates, or one that cannot be read (which fails in the pass).
#[derive(Debug, Clone)]
pub struct Enrolled {
    pub subject: Subject,
    pub object: Machine,
}

/// The cluster-wide gates, then enrollment: the ControlPlaneMachineSets
/// first (upstream's `syncControlPlaneMachineSets` runs before its
/// `syncMAPIMachineSets`; none with `ManagedBootImagesCPMS` off), then the
/// MachineSets, each in name order.
pub fn gates(snapshot: &Snapshot) -> Result<Vec<Enrolled>, Gate> {
    let mc = match &snapshot.machineconfiguration {
        None => return Err(Gate::NotReady(rules::not_ready(None).unwrap_or_default())),
        Some(mc) => mc.object.as_ref(),
    };
    // One that cannot be read is reported by the enrollment gate below.
    if let Ok(read) = mc
        && let Some(why) = rules::not_ready(Some(read))
    {
        return Err(Gate::NotReady(why));
    }
    let Some(cv) = &snapshot.clusterversion else {
        return Err(Gate::Deferred("ClusterVersion version not found".into()));
    };
    match &cv.object {
        Ok(cv) => {
            if let Some(deferred) = rules::stability_gate(cv) {
                return Err(Gate::Deferred(deferred.to_json().to_string()));
            }
        }
        Err(err) => return Err(Gate::Deferred(format!("unreadable ClusterVersion: {err}"))),
    }
    // Enrollment defaults depend on the platform; without a readable
    // Infrastructure no platform is enrolled by default.
    let platform = snapshot
        .infrastructure
        .as_deref()
        .and_then(|infra| infra.object.as_ref().ok())
        .and_then(|infra| rules::platform_type(infra).ok())
        .unwrap_or_default();
    let mut enrolled = Vec::new();
    for (kind, objects) in [
        (
            MachineKind::ControlPlaneMachineSet,
            &snapshot.controlplanemachinesets,
        ),
        (MachineKind::MachineSet, &snapshot.machinesets),
    ] {
        if !rules::in_pass(&snapshot.gates, kind) {
            let gates = &snapshot.gates;
            tracing::debug!(kind = kind.kind(), %gates, "not in the pass under these feature gates");
            continue;
        }
        let mut objects: Vec<&Machine> = objects.iter().collect();
        objects.sort_by(|a, b| a.name().cmp(b.name()));
        for object in objects {
            let subject = Subject {
                kind,
                name: object.name().to_owned(),
            };
            let Ok(view) = &object.object else {
                enrolled.push(Enrolled {
                    subject,
                    object: object.clone(),
                });
                continue;
            };
            let mc = mc.map_err(|err| Gate::Degraded(err.to_string()))?;
            match rules::enrollment_gate(mc, view, &platform) {
                None => enrolled.push(Enrolled {
                    subject: Subject {
                        kind,
                        name: view.name.clone(),
                    },
                    object: object.clone(),
                }),
                Some(Decision::Error { message }) => return Err(Gate::Degraded(message)),
                // Not enrolled: not part of the pass at all.
                Some(_) => {}
            }
        }
    }
    Ok(enrolled)
}

/// One guest decision to make: for the object at `index` of the pass.
#[derive(Debug)]
pub struct Request {
    pub index: usize,
    /// Infrastructure `status.platformStatus.type`: which guest decides.
    pub platform: String,
    pub item: BatchItem,
    /// Whether the user data was read for this request (the second round).
    with_user_data: bool,
}

impl Request {
    /// What the request decides for.
    pub fn subject(&self) -> Subject {
        Subject {
            kind: self.item.machineset.kind,
            name: self.item.machineset.name.clone(),
        }
    }
}

/// An EC2 read the pass needs before an AWS MachineSet's guest can decide;
/// its answer comes back through [`Pass::give_ec2`]. Reads repeat across
/// MachineSets (one AMI, one product): the caller answers each distinct
/// read once per pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ec2Request {
    pub index: usize,
    pub read: Ec2Read,
}

/// A user-data Secret the pass needs before it can decide a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRequest {
    pub index: usize,
    pub name: String,
}

/// The user data of a Secret, as read.
#[derive(Debug, Clone)]
pub struct UserData {
    /// The decoded `userData` stub.
    pub text: String,
    /// The Secret's resourceVersion: the stub is written against it.
    pub resource_version: Option<String>,
}

/// Where one MachineSet is in the pass.
#[derive(Debug)]
enum Progress {
    /// The guest decides once vCenter has been read.
    Vcenter(Request),
    /// The guest decides once EC2 has been read (one or two rounds).
    Ec2(Request),
    Guest(Request),
    /// Handed out by `take_requests`, awaiting `answer`.
    Asked,
    /// A patch waits for the user data of Secret `secret`.
    Secret {
        request: Request,
        secret: String,
        first: Decision,
    },
    Done(Result<Decision, PassError>),
}

#[derive(Debug)]
struct Item {
    subject: Subject,
    object: Machine,
    progress: Progress,
    secret_version: Option<String>,
    /// vSphere: what the host read vCenter for, and where an import goes.
    vcenter: Option<Arc<Lookup>>,
    /// AWS: where its EC2 reads stand.
    ec2: Option<Ec2Progress>,
}

impl Item {
    fn new(
        index: usize,
        subject: Subject,
        object: Machine,
        step: Result<Step, PassError>,
        platforms: &BTreeSet<String>,
    ) -> Item {
        let (vcenter, ec2) = match &step {
            Ok(Step::Guest(prepared)) => (
                prepared.vcenter.clone().map(Arc::from),
                prepared.ec2.clone().map(Ec2Progress::Image),
            ),
            _ => (None, None),
        };
        let progress = match step {
            Ok(step) => Progress::of(index, step, platforms),
            Err(err) => Progress::Done(Err(err)),
        };
        Item {
            subject,
            object,
            progress,
            secret_version: None,
            vcenter,
            ec2,
        }
    }
}

/// A pass in progress.
#[derive(Debug)]
pub struct Pass {
    items: Vec<Item>,
    state: ControllerState,
    save_state: bool,
    stopped: Option<Gate>,
    stream: Arc<StreamInput>,
    now: Timestamp,
}

/// What one object's decision comes to.
#[derive(Debug)]
pub struct Action {
    pub subject: Subject,
    pub object: Machine,
    pub outcome: Result<Decision, PassError>,
    /// resourceVersion of the user-data Secret the decision read.
    pub secret_version: Option<String>,
    /// vSphere: where the decision's import goes.
    pub vcenter: Option<Arc<Lookup>>,
    /// AWS: why EC2 was not consulted, when the guest decided without it
    /// (the static AMI lists decided).
    pub ec2_unconsulted: Option<Unconsulted>,
}

/// What to write, in order: the state (when `save_state`), then either the
/// gate's report or each action.
#[derive(Debug)]
pub struct Plan {
    pub state: ControllerState,
    pub save_state: bool,
    pub stopped: Option<Gate>,
    pub actions: Vec<Action>,
}

impl Pass {
    /// The host rules for every enrolled MachineSet, under `state` (the
    /// hot-loop record and the images seen so far).
    pub fn new(snapshot: &Snapshot, enrolled: Vec<Enrolled>, mut state: ControllerState) -> Pass {
        // Opting out (or deleting a MachineSet) forgets its hot loop; each
        // kind's entries go with its own enrollment.
        let keys: BTreeSet<String> = enrolled.iter().map(|e| e.subject.key()).collect();
        let mut save_state = state.retain_hot_loops(|key| keys.contains(key));
        let mut pass = Pass {
            items: Vec::new(),
            state,
            save_state,
            stopped: None,
            stream: Arc::default(),
            now: snapshot.now,
        };
        if enrolled.is_empty() {
            return pass;
        }
        let Some(cm) = &snapshot.stream else {
            pass.stopped = Some(Gate::Degraded(
                "failed to fetch coreos-bootimages config map: configmaps \"coreos-bootimages\" not found"
                    .into(),
            ));
            return pass;
        };
        let cv = snapshot.clusterversion.as_deref();
        let cv = cv.and_then(|cv| cv.object.as_ref().ok());
        let cm = cm.object.as_ref().ok();
        if let (Some(cm), Some(cv)) = (cm, cv)
            && let Some(why) = rules::release_mismatch(cm, cv)
        {
            pass.stopped = Some(Gate::Deferred(why));
            return pass;
        }
        pass.stream = snapshot.stream_input.clone();
        // Remember this stream's images before any MachineSet moves off
        // them, so nothing installed from it is ever unknown.
        let added = pass.state.learn(snapshot.published_images.iter().cloned());
        if added > 0 {
            tracing::info!(added, "recorded the stream's boot images as known");
            save_state = true;
        }
        pass.save_state = save_state;
        let mut known = pass.state.known_images.clone();
        known.extend(snapshot.known_images.iter().cloned());
        // Without one, no platform is named: every MachineSet says so.
        let missing = Ok(Infrastructure::default());
        let infrastructure = match snapshot.infrastructure.as_deref() {
            Some(infra) => &infra.object,
            None => &missing,
        };
        let multi_arch = cv.is_some_and(rules::is_multi_arch);
        for (index, Enrolled { subject, object }) in enrolled.into_iter().enumerate() {
            let rules_error = |err: &dyn std::fmt::Display| PassError::Rules {
                subject: subject.clone(),
                detail: err.to_string(),
            };
            let step = match (&object.object, infrastructure) {
                (Err(err), _) => Err(PassError::Unreadable {
                    kind: subject.kind.kind(),
                    detail: err.to_string(),
                }),
                (Ok(_), Err(err)) => Err(rules_error(err)),
                (Ok(view), Ok(infrastructure)) => rules::prepare(&MachineSetInputs {
                    machineset: view,
                    infrastructure,
                    multi_arch,
                    known_images: &known,
                    control_plane_arch: &snapshot.control_plane_arch,
                })
                .map_err(|err| rules_error(&err)),
            };
            pass.items
                .push(Item::new(index, subject, object, step, &snapshot.platforms));
        }
        pass
    }

    /// A pass of one object that already went through the host rules (as
    /// `eval` applies them), with no controller state.
    pub fn single(
        subject: Subject,
        object: Machine,
        step: Step,
        stream: Arc<StreamInput>,
        platforms: &BTreeSet<String>,
        now: Timestamp,
    ) -> Pass {
        Pass {
            items: vec![Item::new(0, subject, object, Ok(step), platforms)],
            state: ControllerState::default(),
            save_state: false,
            stopped: None,
            stream,
            now,
        }
    }

    /// The stream every guest call is given, and its decisions are checked
    /// against.
    pub fn stream(&self) -> Arc<StreamInput> {
        self.stream.clone()
    }

    /// The vCenter reads the pass waits for; each comes back through
    /// [`Pass::give_vcenter`].
    pub fn vcenter_reads(&self) -> Vec<VcenterRead> {
        self.items
            .iter()
            .enumerate()
            .filter_map(|(index, item)| match (&item.progress, &item.vcenter) {
                (Progress::Vcenter(_), Some(lookup)) => Some(VcenterRead {
                    index,
                    lookup: lookup.clone(),
                }),
                _ => None,
            })
            .collect()
    }

    /// What vCenter holds for a [`VcenterRead`]: the guest decides with it,
    /// or the MachineSet fails with the step that could not be done
    /// (`detail`, naming the vCenter's own words).
    pub fn give_vcenter(&mut self, index: usize, answer: Result<Answer, String>) {
        let Some(item) = self.items.get_mut(index) else {
            return;
        };
        let Progress::Vcenter(mut request) = std::mem::replace(&mut item.progress, Progress::Asked)
        else {
            return;
        };
        item.progress = match (answer, &item.vcenter) {
            (Ok(answer), Some(lookup)) => {
                request.item.cluster.vcenter = Some(lookup.facts(answer));
                Progress::Guest(request)
            }
            (Err(detail), lookup) => Progress::Done(Err(PassError::Vcenter {
                subject: item.subject.clone(),
                server: lookup.as_ref().map(|l| l.address()).unwrap_or_default(),
                detail,
            })),
            // A read is only handed out with its lookup.
            (Ok(_), None) => Progress::Guest(request),
        };
    }

    /// The EC2 reads the pass waits for, one round at a time: a marketplace
    /// AMI's product is read once its image is described.
    pub fn ec2_reads(&self) -> Vec<Ec2Request> {
        self.items
            .iter()
            .enumerate()
            .filter_map(|(index, item)| match (&item.progress, &item.ec2) {
                (Progress::Ec2(_), Some(progress)) => progress.read().map(|read| Ec2Request {
                    index,
                    read: read.clone(),
                }),
                _ => None,
            })
            .collect()
    }

    /// EC2's answer to the [`Ec2Request`] of `index`: the next round, or
    /// the guest decides with what was read (without EC2 facts when EC2
    /// could not be reached: the static AMI lists decide, and the action
    /// says why).
    pub fn give_ec2(&mut self, index: usize, answer: Ec2Answer) {
        let Some(item) = self.items.get_mut(index) else {
            return;
        };
        if !matches!(item.progress, Progress::Ec2(_)) {
            return;
        }
        let Some(progress) = item.ec2.take() else {
            return;
        };
        let progress = progress.next(answer);
        if let Ec2Progress::Done(done) = &progress
            && let Progress::Ec2(mut request) =
                std::mem::replace(&mut item.progress, Progress::Asked)
        {
            request.item.cluster.ec2 = done.as_ref().ok().cloned();
            item.progress = Progress::Guest(request);
        }
        item.ec2 = Some(progress);
    }

    /// The guest decisions the pass waits for; each comes back through
    /// [`Pass::answer`].
    pub fn take_requests(&mut self) -> Vec<Request> {
        let mut requests = Vec::new();
        for item in &mut self.items {
            if matches!(item.progress, Progress::Guest(_)) {
                let Progress::Guest(request) =
                    std::mem::replace(&mut item.progress, Progress::Asked)
                else {
                    continue;
                };
                requests.push(request);
            }
        }
        requests
    }

    /// A guest's answer to `request`. A patch is checked against the
    /// hot-loop guard; a first-round patch then asks for the MachineSet's
    /// user-data Secret (read only now, and not at all for a refused patch),
    /// and is decided again with it.
    pub fn answer(&mut self, request: Request, result: Result<Decision, PassError>) {
        let Some(item) = self.items.get_mut(request.index) else {
            return;
        };
        item.progress = match result {
            Ok(Decision::Patch { patch, import, .. })
                if self.state.guard(
                    &item.subject.key(),
                    &decision_fingerprint(&patch, import.as_deref()),
                ) == Guard::HotLoop =>
            {
                Progress::Done(Err(PassError::HotLoop(item.subject.clone())))
            }
            Ok(first @ Decision::Patch { .. }) if !request.with_user_data => {
                match request.item.machineset.user_data_secret_name() {
                    Ok(Some(secret)) => Progress::Secret {
                        secret: secret.to_owned(),
                        request,
                        first,
                    },
                    // The guest reports a missing name itself.
                    Ok(None) => Progress::Done(Ok(first)),
                    Err(err) => Progress::Done(Err(PassError::SecretRead {
                        subject: item.subject.clone(),
                        detail: err.to_string(),
                    })),
                }
            }
            done => Progress::Done(done),
        };
    }

    /// The user-data Secrets the pass waits for; each comes back through
    /// [`Pass::give_secret`].
    pub fn secrets(&self) -> Vec<SecretRequest> {
        self.items
            .iter()
            .enumerate()
            .filter_map(|(index, item)| match &item.progress {
                Progress::Secret { secret, .. } => Some(SecretRequest {
                    index,
                    name: secret.clone(),
                }),
                _ => None,
            })
            .collect()
    }

    /// The Secret a [`SecretRequest`] asked for: read (the patch is decided
    /// again with its user data), unreadable (the MachineSet fails), or not
    /// available at all (`eval` without `--user-data-secret`: the first
    /// decision stands).
    pub fn give_secret(&mut self, index: usize, secret: Option<Result<UserData, String>>) {
        let Some(item) = self.items.get_mut(index) else {
            return;
        };
        let Progress::Secret {
            mut request, first, ..
        } = std::mem::replace(&mut item.progress, Progress::Asked)
        else {
            return;
        };
        item.progress = match secret {
            None => Progress::Done(Ok(first)),
            Some(Err(detail)) => Progress::Done(Err(PassError::SecretRead {
                subject: item.subject.clone(),
                detail,
            })),
            Some(Ok(user_data)) => {
                item.secret_version = user_data.resource_version;
                request.item.user_data = Some(user_data.text);
                request.with_user_data = true;
                Progress::Guest(request)
            }
        };
    }

    /// What to write. A MachineSet still waiting for an answer (a caller
    /// that stopped early) is reported, not patched.
    pub fn finish(self) -> Plan {
        let now = self.now;
        let actions = self
            .items
            .into_iter()
            .map(|item| Action {
                outcome: match item.progress {
                    Progress::Done(outcome) => outcome.map(|d| stamp_upgrade(d, now)),
                    _ => Err(PassError::Rules {
                        subject: item.subject.clone(),
                        detail: "the pass ended before its guest decided".into(),
                    }),
                },
                ec2_unconsulted: match item.ec2 {
                    Some(Ec2Progress::Done(Err(why))) => Some(why),
                    _ => None,
                },
                subject: item.subject,
                object: item.object,
                secret_version: item.secret_version,
                vcenter: item.vcenter,
            })
            .collect();
        Plan {
            state: self.state,
            save_state: self.save_state,
            stopped: self.stopped,
            actions,
        }
    }
}

/// Stamps a decision's stub upgrade with the time of the pass
/// (`…-upgraded-at`, RFC 3339): guests have no clock, and what `eval`
/// prints must be what the controller writes. Other decisions pass as
/// they are.
pub fn stamp_upgrade(mut decision: Decision, now: Timestamp) -> Decision {
    if let Decision::Patch {
        user_data_secret: Some(upgrade),
        ..
    } = &mut decision
    {
        upgrade
            .annotations
            .insert(ANNOTATION_UPGRADED_AT.to_owned(), now.to_string());
    }
    decision
}

impl Progress {
    fn of(index: usize, step: Step, platforms: &BTreeSet<String>) -> Progress {
        match step {
            Step::Decided(decision) => Progress::Done(Ok(decision)),
            Step::Guest(prepared) if !platforms.contains(&prepared.platform_type) => {
                Progress::Done(Ok(prepared.without_guest()))
            }
            Step::Guest(prepared) => {
                let prepared = *prepared;
                let (vcenter, ec2) = (prepared.vcenter.is_some(), prepared.ec2.is_some());
                let request = Request {
                    index,
                    platform: prepared.platform_type,
                    item: BatchItem {
                        machineset: prepared.machineset,
                        cluster: prepared.cluster,
                        user_data: None,
                    },
                    with_user_data: false,
                };
                match (vcenter, ec2) {
                    (true, _) => Progress::Vcenter(request),
                    (false, true) => Progress::Ec2(request),
                    (false, false) => Progress::Guest(request),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use mco_bootimage::{UserData as Stub, UserDataUpgrade};
    use serde_json::{Value, json};

    use super::*;
    use crate::ec2::Ec2Facts;
    use crate::objects::{Input, machine_decoder};

    fn decoded<T: Input>(object: Value) -> Arc<Decoded<T>> {
        Arc::new(Decoded::of(&object))
    }

    fn machine(kind: MachineKind, object: Value) -> Machine {
        Arc::new(Decoded::read(&object, machine_decoder(kind)))
    }

    fn machineset(name: &str, labels: Value) -> Machine {
        machine(
            MachineKind::MachineSet,
            json!({
                "kind": "MachineSet",
                "metadata": {"name": name, "namespace": "openshift-machine-api", "labels": labels},
                "spec": {"template": {"spec": {"providerSpec": {"value": {
                    "kind": "AWSMachineProviderConfig",
                    "ami": {"id": "ami-old"},
                    "userDataSecret": {"name": format!("{name}-user-data")},
                }}}}},
            }),
        )
    }

    fn enrollment(mode: Value) -> Arc<Decoded<MachineConfiguration>> {
        decoded(json!({
            "kind": "MachineConfiguration",
            "metadata": {"name": "cluster", "generation": 1},
            "status": {"observedGeneration": 1, "managedBootImagesStatus": {"machineManagers": [
                {"resource": "machinesets", "apiGroup": "machine.openshift.io", "selection": mode}]}},
        }))
    }

    fn snapshot(machinesets: &[&str]) -> Snapshot {
        Snapshot {
            machineconfiguration: Some(enrollment(json!({"mode": "All"}))),
            clusterversion: Some(decoded(json!({"kind": "ClusterVersion",
                "status": {"history": [{"state": "Completed"}], "desired": {"version": "4.21.0"}}}))),
            infrastructure: Some(decoded(json!({"kind": "Infrastructure",
                "status": {"platformStatus": {"type": "AWS"}}}))),
            stream: Some(decoded(
                json!({"kind": "ConfigMap", "data": {"stream": "{}"}}),
            )),
            published_images: Arc::new(BTreeSet::from(["ami-new".to_owned()])),
            machinesets: machinesets
                .iter()
                .map(|n| machineset(n, json!({})))
                .collect(),
            control_plane_arch: "x86_64".into(),
            platforms: BTreeSet::from(["AWS".to_owned()]),
            stream_input: Arc::default(),
            known_images: BTreeSet::new(),
            controlplanemachinesets: Vec::new(),
            now: Timestamp::default(),
            gates: Arc::new(FeatureGates::default_of(crate::FEATURE_GATES)),
        }
    }

    fn patch(ami: &str) -> Decision {
        Decision::Patch {
            target: ami.into(),
            patch: json!({"spec": {"template": {"spec": {"providerSpec": {"value": {"ami": {"id": ami}}}}}}}),
            user_data_secret: None,
            import: None,
        }
    }

    /// What `action` failed with, as text; empty when it did not fail.
    fn failure(action: &Action) -> String {
        (action.outcome.as_ref().err())
            .map(ToString::to_string)
            .unwrap_or_default()
    }

    fn start(snapshot: &Snapshot, state: ControllerState) -> Pass {
        let enrolled = gates(snapshot).unwrap_or_else(|gate| panic!("stopped at {gate:?}"));
        Pass::new(snapshot, enrolled, state)
    }

    #[test]
    fn gates_stop_the_pass_before_any_machineset() {
        let mut s = snapshot(&["a"]);
        s.machineconfiguration = None;
        assert!(matches!(gates(&s), Err(Gate::NotReady(why)) if why.contains("not found")));

        let mut s = snapshot(&["a"]);
        s.clusterversion = Some(decoded(
            json!({"kind": "ClusterVersion", "status": {"history": [{"state": "Partial"}]}}),
        ));
        assert!(matches!(gates(&s), Err(Gate::Deferred(why)) if why.contains("not stable")));

        let mut s = snapshot(&["a"]);
        s.clusterversion = None;
        assert!(matches!(gates(&s), Err(Gate::Deferred(_))));

        let mut s = snapshot(&["a"]);
        s.machineconfiguration = Some(enrollment(json!({"mode": "Sometimes"})));
        assert!(matches!(gates(&s), Err(Gate::Degraded(why)) if why.contains("Sometimes")));

        let mut s = snapshot(&["a"]);
        s.stream = None;
        let plan = start(&s, ControllerState::default()).finish();
        assert!(
            matches!(plan.stopped, Some(Gate::Degraded(why)) if why.contains("coreos-bootimages"))
        );

        let mut s = snapshot(&["a"]);
        s.stream = Some(decoded(
            json!({"kind": "ConfigMap", "data": {"releaseVersion": "4.22.0"}}),
        ));
        let plan = start(&s, ControllerState::default()).finish();
        assert!(matches!(plan.stopped, Some(Gate::Deferred(why)) if why.contains("4.22.0")));
    }

    #[test]
    fn only_enrolled_machinesets_are_in_the_pass_in_name_order() {
        let mut s = snapshot(&[]);
        s.machinesets = vec![
            machineset("b", json!({"env": "prod"})),
            machineset("a", json!({"env": "prod"})),
            machineset("c", json!({"env": "dev"})),
        ];
        s.machineconfiguration = Some(enrollment(json!({"mode": "Partial",
            "partial": {"machineResourceSelector": {"matchLabels": {"env": "prod"}}}})));
        let names: Vec<String> = gates(&s)
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.subject.name)
            .collect();
        assert_eq!(names, ["a", "b"]);
        s.machineconfiguration = Some(enrollment(json!({"mode": "None"})));
        assert!(gates(&s).unwrap_or_default().is_empty());
    }

    #[test]
    fn a_patch_reads_its_secret_and_is_decided_again_with_it() {
        let s = Snapshot {
            now: "2026-12-01T09:30:00Z".parse().unwrap(),
            ..snapshot(&["a", "b"])
        };
        let mut pass = start(&s, ControllerState::default());
        let requests = pass.take_requests();
        assert_eq!(requests.len(), 2);
        assert!(
            requests
                .iter()
                .all(|r| r.item.user_data.is_none() && r.platform == "AWS")
        );
        assert!(
            pass.take_requests().is_empty(),
            "requests are handed out once"
        );
        let mut requests = requests.into_iter();
        let (a, b) = (requests.next().unwrap(), requests.next().unwrap());
        pass.answer(a, Ok(patch("ami-new")));
        pass.answer(b, Ok(Decision::noop("current")));
        assert_eq!(
            pass.secrets(),
            [SecretRequest {
                index: 0,
                name: "a-user-data".into()
            }]
        );
        pass.give_secret(
            0,
            Some(Ok(UserData {
                text: "{}".into(),
                resource_version: Some("7".into()),
            })),
        );
        let again = pass.take_requests();
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].item.user_data.as_deref(), Some("{}"));
        let upgraded = Decision::Patch {
            target: "ami-new".into(),
            patch: json!({"spec": {}}),
            user_data_secret: Some(UserDataUpgrade {
                name: "a-user-data".into(),
                data: Stub {
                    user_data: "e30=".into(),
                },
                annotations: Default::default(),
            }),
            import: None,
        };
        pass.answer(again.into_iter().next().unwrap(), Ok(upgraded.clone()));
        assert!(pass.secrets().is_empty() && pass.take_requests().is_empty());
        let plan = pass.finish();
        assert!(plan.save_state, "the stream's images were learned");
        assert!(plan.state.known_images.contains("ami-new"));
        // The stub upgrade carries the time of the pass, as written.
        let Decision::Patch {
            user_data_secret: Some(stamped),
            ..
        } = plan.actions[0].outcome.as_ref().ok().unwrap()
        else {
            panic!("{:?}", plan.actions[0].outcome);
        };
        assert_eq!(
            stamped
                .annotations
                .get(ANNOTATION_UPGRADED_AT)
                .map(String::as_str),
            Some("2026-12-01T09:30:00Z")
        );
        assert_eq!(
            plan.actions[0].outcome.as_ref().ok(),
            Some(&stamp_upgrade(
                upgraded,
                "2026-12-01T09:30:00Z".parse().unwrap()
            ))
        );
        assert_eq!(plan.actions[0].secret_version.as_deref(), Some("7"));
        assert_eq!(
            plan.actions[1].outcome.as_ref().ok(),
            Some(&Decision::noop("current"))
        );
    }

    #[test]
    fn the_fourth_identical_patch_is_refused_without_reading_the_secret() {
        let mut state = ControllerState::default();
        let fingerprint = match patch("ami-new") {
            Decision::Patch { patch, .. } => decision_fingerprint(&patch, None),
            _ => unreachable!(),
        };
        for _ in 0..super::super::state::HOT_LOOP_LIMIT {
            state.record_patch("a", &fingerprint);
        }
        let s = snapshot(&["a"]);
        let mut pass = start(&s, state);
        let request = pass.take_requests().pop().unwrap();
        pass.answer(request, Ok(patch("ami-new")));
        assert!(pass.secrets().is_empty());
        let plan = pass.finish();
        let err = failure(&plan.actions[0]);
        assert!(
            err.starts_with("refusing to reconcile machineset a, hot loop detected"),
            "{err}"
        );
        assert_eq!(
            plan.actions[0]
                .outcome
                .as_ref()
                .err()
                .map(PassError::reason),
            Some("HotLoopDetected")
        );
    }

    #[test]
    fn a_guest_failure_or_an_unreadable_secret_fails_that_machineset_only() {
        let s = snapshot(&["a", "b", "c"]);
        let mut pass = start(&s, ControllerState::default());
        let mut requests = pass.take_requests().into_iter();
        pass.answer(
            requests.next().unwrap(),
            Err(PassError::Undecidable("no image".into())),
        );
        pass.answer(requests.next().unwrap(), Ok(patch("ami-new")));
        pass.answer(requests.next().unwrap(), Ok(Decision::skip("custom image")));
        pass.give_secret(1, Some(Err("secrets \"b-user-data\" not found".into())));
        let plan = pass.finish();
        let outcomes: Vec<String> = plan
            .actions
            .iter()
            .map(|a| match &a.outcome {
                Ok(d) => d.action().to_owned(),
                Err(e) => e.to_string(),
            })
            .collect();
        assert_eq!(outcomes[0], "no image");
        assert!(
            outcomes[1].contains("error grabbing user data secret"),
            "{}",
            outcomes[1]
        );
        assert_eq!(outcomes[2], "skip");
    }

    #[test]
    fn a_platform_without_a_guest_and_an_unreadable_machineset_are_decided_by_the_host() {
        let mut s = snapshot(&["a"]);
        s.platforms.clear();
        s.machinesets.push(machine(
            MachineKind::MachineSet,
            json!({"kind": "MachineSet", "metadata": {"name": "z", "labels": 5}}),
        ));
        let mut pass = start(&s, ControllerState::default());
        assert!(pass.take_requests().is_empty());
        let plan = pass.finish();
        assert_eq!(
            plan.actions[0].outcome.as_ref().map(Decision::action).ok(),
            Some("noop")
        );
        let unreadable = failure(&plan.actions[1]);
        assert!(
            unreadable.starts_with("unreadable MachineSet: "),
            "{unreadable}"
        );
    }

    fn cpms() -> Machine {
        machine(
            MachineKind::ControlPlaneMachineSet,
            json!({
                "kind": "ControlPlaneMachineSet",
                "metadata": {"name": "cluster", "namespace": "openshift-machine-api"},
                "spec": {"template": {"machineType": "machines_v1beta1_machine_openshift_io",
                    "machines_v1beta1_machine_openshift_io": {"spec": {"providerSpec": {"value": {
                        "kind": "AWSMachineProviderConfig",
                        "ami": {"id": "ami-old"},
                        "userDataSecret": {"name": "master-user-data"},
                    }}}}}},
            }),
        )
    }

    fn with_cpms_mode(mode: &str) -> Snapshot {
        let mut s = snapshot(&["cluster"]);
        s.controlplanemachinesets = vec![cpms()];
        s.machineconfiguration = Some(decoded(json!({
            "kind": "MachineConfiguration",
            "metadata": {"name": "cluster", "generation": 1},
            "status": {"observedGeneration": 1, "managedBootImagesStatus": {"machineManagers": [
                {"resource": "machinesets", "apiGroup": "machine.openshift.io", "selection": {"mode": "All"}},
                {"resource": "controlplanemachinesets", "apiGroup": "machine.openshift.io", "selection": {"mode": mode}}]}},
        })));
        s
    }

    #[test]
    fn an_enrolled_control_plane_machine_set_comes_first_and_reads_its_own_secret() {
        let s = with_cpms_mode("All");
        let enrolled = gates(&s).unwrap_or_default();
        let subjects: Vec<String> = enrolled.iter().map(|e| e.subject.to_string()).collect();
        assert_eq!(
            subjects,
            ["ControlPlaneMachineSet cluster", "machineset cluster"]
        );
        let mut pass = Pass::new(&s, enrolled, ControllerState::default());
        let requests = pass.take_requests();
        assert_eq!(
            requests[0].item.machineset.kind,
            MachineKind::ControlPlaneMachineSet
        );
        for request in requests {
            pass.answer(request, Ok(patch("ami-new")));
        }
        assert_eq!(
            pass.secrets(),
            [
                SecretRequest {
                    index: 0,
                    name: "master-user-data".into()
                },
                SecretRequest {
                    index: 1,
                    name: "cluster-user-data".into()
                }
            ]
        );

        // Opt-in only: no entry or None leaves it out of the pass.
        let names = |s: &Snapshot| {
            gates(s)
                .unwrap_or_default()
                .into_iter()
                .map(|e| e.subject.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&with_cpms_mode("None")), ["machineset cluster"]);
        let mut no_entry = with_cpms_mode("All");
        no_entry.machineconfiguration = Some(enrollment(json!({"mode": "All"})));
        assert_eq!(names(&no_entry), ["machineset cluster"]);
    }

    #[test]
    fn without_the_cpms_gate_an_enrolled_control_plane_machine_set_is_not_in_the_pass() {
        let mut s = with_cpms_mode("All");
        s.gates = Arc::new(crate::gates_without(&[crate::MANAGED_BOOT_IMAGES_CPMS]));
        let subjects: Vec<String> = gates(&s)
            .unwrap_or_default()
            .iter()
            .map(|e| e.subject.to_string())
            .collect();
        assert_eq!(subjects, ["machineset cluster"]);
        // Not even one that cannot be read; and its machine manager is not
        // read at all (an invalid mode degrades the pass only with the gate on).
        s.controlplanemachinesets.push(machine(
            MachineKind::ControlPlaneMachineSet,
            json!({"kind": "ControlPlaneMachineSet", "metadata": {"name": "broken", "labels": 5}}),
        ));
        assert_eq!(gates(&s).map(|e| e.len()), Ok(1));
        let mut invalid = with_cpms_mode("Sometimes");
        assert!(matches!(gates(&invalid), Err(Gate::Degraded(why)) if why.contains("Sometimes")));
        invalid.gates = s.gates.clone();
        assert_eq!(gates(&invalid).map(|e| e.len()), Ok(1));
        // Its hot-loop entry goes, as with opting out.
        let mut state = ControllerState::default();
        state.record_patch("ControlPlaneMachineSet/cluster", "f");
        let plan = start(&s, state).finish();
        assert!(plan.save_state && plan.state.hot_loops.is_empty());
        assert!(
            plan.actions
                .iter()
                .all(|a| a.subject.kind == MachineKind::MachineSet)
        );
    }

    #[test]
    fn the_control_plane_machine_set_hot_loop_is_its_own() {
        let fingerprint = match patch("ami-new") {
            Decision::Patch { patch, .. } => decision_fingerprint(&patch, None),
            _ => unreachable!(),
        };
        let mut state = ControllerState::default();
        for _ in 0..super::super::state::HOT_LOOP_LIMIT {
            state.record_patch("ControlPlaneMachineSet/cluster", &fingerprint);
        }
        // The MachineSet named `cluster` is not held back by it.
        let s = with_cpms_mode("All");
        let mut pass = start(&s, state.clone());
        for request in pass.take_requests() {
            pass.answer(request, Ok(patch("ami-new")));
        }
        pass.give_secret(1, None);
        let plan = pass.finish();
        let err = failure(&plan.actions[0]);
        assert!(
            err.starts_with(
                "refusing to reconcile ControlPlaneMachineSet cluster, hot loop detected"
            ),
            "{err}"
        );
        assert!(matches!(
            plan.actions[1].outcome,
            Ok(Decision::Patch { .. })
        ));
        // Opting the ControlPlaneMachineSet out forgets its entry only.
        state.record_patch("cluster", &fingerprint);
        let plan = start(&with_cpms_mode("None"), state).finish();
        assert!(plan.save_state);
        assert_eq!(plan.state.hot_loops.keys().collect::<Vec<_>>(), ["cluster"]);
    }

    fn in_region(name: &str, ami: &str) -> Machine {
        machine(
            MachineKind::MachineSet,
            json!({
                "kind": "MachineSet",
                "metadata": {"name": name, "namespace": "openshift-machine-api",
                    "annotations": {"capacity.cluster-autoscaler.kubernetes.io/labels": "kubernetes.io/arch=amd64"}},
                "spec": {"template": {"spec": {"providerSpec": {"value": {
                    "kind": "AWSMachineProviderConfig",
                    "ami": {"id": ami},
                    "placement": {"region": "us-east-1"},
                    "userDataSecret": {"name": format!("{name}-user-data")},
                }}}}},
            }),
        )
    }

    fn image_read(ami: &str) -> Ec2Read {
        Ec2Read::Image {
            region: "us-east-1".into(),
            image_id: ami.into(),
        }
    }

    #[test]
    fn an_aws_machineset_is_decided_after_its_ec2_rounds() {
        use mco_bootimage::ec2::{Ec2Image, MARKETPLACE_OWNER, RED_HAT_OWNER};
        const OCP: &str = "59ead7de-2540-4653-a8b0-fa7926d5c845";
        let mut s = snapshot(&[]);
        s.machinesets = vec![
            in_region("market", "ami-m"),
            in_region("redhat", "ami-r"),
            in_region("unreachable", "ami-u"),
            // No region: no read, the guest decides from the lists.
            machineset("plain", json!({})),
        ];
        // In name order: market 0, plain 1, redhat 2, unreachable 3.
        let mut pass = start(&s, ControllerState::default());
        let first = pass.take_requests();
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].item.machineset.name, "plain");
        assert_eq!(first[0].item.cluster.ec2, None);
        let reads: Vec<Ec2Read> = pass.ec2_reads().into_iter().map(|r| r.read).collect();
        assert_eq!(
            reads,
            [
                image_read("ami-m"),
                image_read("ami-r"),
                image_read("ami-u")
            ]
        );
        let market = Ec2Image {
            image_id: "ami-m".into(),
            owner_id: MARKETPLACE_OWNER.into(),
            name: format!("RHCOS-9.4-{OCP}"),
            ..Ec2Image::default()
        };
        let redhat = Ec2Image {
            image_id: "ami-r".into(),
            owner_id: RED_HAT_OWNER.into(),
            ..Ec2Image::default()
        };
        pass.give_ec2(0, Ec2Answer::Image(Some(market.clone())));
        pass.give_ec2(2, Ec2Answer::Image(Some(redhat.clone())));
        pass.give_ec2(3, Ec2Answer::Unreachable("no credentials".into()));
        // The marketplace AMI's product is the second round; the others
        // go to their guest.
        assert_eq!(
            pass.ec2_reads(),
            [Ec2Request {
                index: 0,
                read: Ec2Read::Marketplace {
                    region: "us-east-1".into(),
                    product_id: OCP.into()
                }
            }]
        );
        let decided_requests = pass.take_requests();
        let decided: Vec<(String, Option<Ec2Facts>)> = decided_requests
            .iter()
            .map(|r| (r.item.machineset.name.clone(), r.item.cluster.ec2.clone()))
            .collect();
        assert_eq!(
            decided,
            [
                (
                    "redhat".to_owned(),
                    Some(Ec2Facts {
                        image: Some(redhat),
                        marketplace: vec![]
                    })
                ),
                ("unreachable".to_owned(), None)
            ]
        );
        // An answer for a MachineSet not waiting for one changes nothing.
        pass.give_ec2(1, Ec2Answer::Image(None));
        pass.give_ec2(2, Ec2Answer::Image(None));
        pass.give_ec2(99, Ec2Answer::Image(None));
        pass.give_ec2(0, Ec2Answer::Marketplace(vec![market.clone()]));
        assert!(pass.ec2_reads().is_empty());
        let requests = pass.take_requests();
        assert_eq!(
            requests[0].item.cluster.ec2,
            Some(Ec2Facts {
                image: Some(market.clone()),
                marketplace: vec![market]
            })
        );
        for request in first.into_iter().chain(decided_requests).chain(requests) {
            pass.answer(request, Ok(Decision::noop("decided")));
        }
        let plan = pass.finish();
        let unconsulted: Vec<(&str, Option<&str>)> = plan
            .actions
            .iter()
            .map(|a| {
                (
                    a.subject.name.as_str(),
                    a.ec2_unconsulted.as_ref().map(Unconsulted::why),
                )
            })
            .collect();
        assert_eq!(
            unconsulted,
            [
                ("market", None),
                ("plain", None),
                ("redhat", None),
                ("unreachable", Some("no credentials"))
            ]
        );
    }

    #[test]
    fn opting_out_forgets_a_hot_loop() {
        let mut state = ControllerState::default();
        state.record_patch("gone", "f");
        let s = snapshot(&["a"]);
        let plan = start(&s, state).finish();
        assert!(plan.save_state && plan.state.hot_loops.is_empty());
    }
}
