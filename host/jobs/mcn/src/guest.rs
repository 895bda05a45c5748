//! The node-state guest: the conversions between WIT (world
//! `node-state-reporter`, bound in `inputs` beside the handles lent for a
//! call) and the guest library's types, and the one place where what a
//! guest returns is checked before anyone acts on it.

use mco_mcn as logic;

use mco_runtime::{Guest, GuestError, GuestState, World};
use wasmtime::Store;
use wasmtime::component::{ComponentType, HasSelf, Linker, Lower, Resource};
use wasmtime_wasi::WasiView as _;

use super::inputs::wit_bindings::exports::mco::machine_config::node_state as wit;
use super::inputs::wit_bindings::mco::machine_config::types as wit_types;
use super::inputs::wit_bindings::{NodeStateReporter, NodeStateReporterPre};
use super::inputs::wit_inputs;
use super::inputs::{Keys, Lent};

/// The interface a node-state guest must export.
pub const NODE_STATE_INTERFACE: &str = "mco:machine-config/node-state@0.6.0";

impl World for NodeStateReporterPre<GuestState> {
    const INTERFACE: &'static str = NODE_STATE_INTERFACE;
    fn bind(pre: wasmtime::component::InstancePre<GuestState>) -> wasmtime::Result<Self> {
        NodeStateReporterPre::new(pre)
    }
    fn link(linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
        wit_inputs::add_to_linker::<_, HasSelf<_>>(linker, |state| state)
    }
}

/// A loaded node-state guest, ready for any number of evaluations.
pub type McnGuest = Guest<NodeStateReporterPre<GuestState>>;

/// What the host asks of a node-state guest. The guest handle lives in
/// `mco-runtime`, which knows no job, so the job's calls on it are a trait;
/// each is documented where it is implemented, below.
pub trait McnGuestExt {
    fn derive(&self, facts: &logic::Facts) -> Result<logic::Decision, GuestError>;
    fn derive_batch(&self, batch: &[logic::Facts]) -> Vec<Result<logic::Decision, GuestError>>;
}

impl McnGuestExt for McnGuest {
    /// Runs the guest on `facts` in a fresh instance. What it returns is
    /// checked against what the CRD accepts and what the job promises
    /// (`mco_mcn::validate`: every default condition present, names the API
    /// server accepts, bounded texts); output that fails is the guest's
    /// failure, never something to write.
    fn derive(&self, facts: &logic::Facts) -> Result<logic::Decision, GuestError> {
        let mut store = self.store();
        let result = self
            .bindings()
            .instantiate(&mut store)
            .and_then(|guest| call(&guest, &mut store, facts));
        let decision = from_wit(self.finish(&store, result)?);
        checked(self, facts, decision)
    }

    /// Derives several nodes in one fresh instance: guests are pure, so
    /// nothing carries over from one node to the next, and instantiation is
    /// paid once. If the instance fails, the nodes it had not finished are
    /// retried one instance each, so only the culprit fails.
    fn derive_batch(&self, batch: &[logic::Facts]) -> Vec<Result<logic::Decision, GuestError>> {
        let mut store = self.store();
        let Ok(instance) = self.bindings().instantiate(&mut store) else {
            return batch.iter().map(|facts| self.derive(facts)).collect();
        };
        let mut results = Vec::with_capacity(batch.len());
        for (done, facts) in batch.iter().enumerate() {
            self.rearm(&mut store);
            match call(&instance, &mut store, facts) {
                Ok(decision) => results.push(checked(self, facts, from_wit(decision))),
                Err(_) => {
                    results.extend(batch[done..].iter().map(|facts| self.derive(facts)));
                    break;
                }
            }
        }
        store.data().log_stderr(&self.module().name);
        results
    }
}

/// The interface of the guest's offline entry (`derive-records`).
pub const NODE_STATE_RECORDS_INTERFACE: &str = "mco:machine-config/node-state-records@0.6.0";

/// A rendered config as `node-state-records` takes it: by value.
#[derive(ComponentType, Lower)]
#[component(record)]
struct RecordsConfig {
    name: String,
    summary: wit_inputs::Summary,
}

/// Runs `facts` through the guest's offline entry, `derive-records` (the
/// labels and configs as records, as the stock `wasmtime run --invoke`
/// passes them), in a fresh instance, checked as `derive`'s answer is.
/// The host decides through `derive` only: this is how the tests check that
/// a guest exporting both entries decides the same through each.
pub fn derive_records(
    guest: &McnGuest,
    facts: &logic::Facts,
) -> Result<logic::Decision, GuestError> {
    let mut store = guest.store();
    let result = guest
        .bindings()
        .instance_pre()
        .instantiate(&mut store)
        .and_then(|instance| {
            let missing = || {
                wasmtime::format_err!(
                    "the guest does not export {NODE_STATE_RECORDS_INTERFACE}.derive-records"
                )
            };
            let interface = instance
                .get_export_index(&mut store, None, NODE_STATE_RECORDS_INTERFACE)
                .ok_or_else(missing)?;
            let func = instance
                .get_export_index(&mut store, Some(&interface), "derive-records")
                .ok_or_else(missing)?;
            let labels = pairs(&facts.node.labels);
            let configs: Vec<RecordsConfig> = facts
                .configs
                .iter()
                .map(|c| RecordsConfig {
                    name: c.name.clone(),
                    summary: super::inputs::summary(&c.spec, Keys::default()),
                })
                .collect();
            with_wit(facts, |input| {
                let derive = instance.get_typed_func::<
                    (&[(&str, &str)], &[RecordsConfig], wit::Facts<'_>),
                    (wit::Decision,),
                >(&mut store, &func)?;
                let (decision,) = derive.call(&mut store, (&labels, &configs, input))?;
                Ok(decision)
            })
        });
    let decision = from_wit(guest.finish(&store, result)?);
    checked(guest, facts, decision)
}

/// One `derive` call: `facts`' labels and configs are lent as handles for
/// the call, the rest lowered as WIT values.
fn call(
    guest: &NodeStateReporter,
    store: &mut Store<GuestState>,
    facts: &logic::Facts,
) -> wasmtime::Result<wit::Decision> {
    let lent = Lent::new(store.data_mut().ctx().table, facts)?;
    let labels = Resource::new_borrow(lent.labels.rep());
    let configs = Resource::new_borrow(lent.configs.rep());
    // A failed call leaves them in the table: its store is not used again.
    let decision = with_wit(facts, |input| {
        guest
            .mco_machine_config_node_state()
            .call_derive(&mut *store, labels, configs, input)
    })?;
    lent.reclaim(store.data_mut().ctx().table)?;
    Ok(decision)
}

/// The one place MCN output is checked: what the CRD accepts
/// (`mco_mcn::validate`), then what this node's facts allow
/// (`authority::check`: its pools, config names, images, condition
/// types, observedGeneration).
fn checked(
    guest: &McnGuest,
    facts: &logic::Facts,
    decision: logic::Decision,
) -> Result<logic::Decision, GuestError> {
    logic::validate(&decision, facts.image_mode_status_reporting())
        .and_then(|()| super::authority::check(facts, &decision).map_err(|e| e.to_string()))
        .map_err(|detail| guest.invalid_output(detail))?;
    Ok(decision)
}

fn pairs(map: &std::collections::BTreeMap<String, String>) -> Vec<(&str, &str)> {
    map.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// The lists a pool's borrowed selector points into.
struct SelectorLists<'f> {
    match_labels: Vec<(&'f str, &'f str)>,
    values: Vec<Vec<&'f str>>,
}

/// Calls `call` with `facts` (but for the labels and configs, which are
/// lent as handles) as the WIT facts, every string borrowed from
/// `facts`: only the lists that hold the references are built, each before
/// what points at it (the selectors' lists before their pools, the actions
/// before their policies).
fn with_wit<R>(facts: &logic::Facts, call: impl FnOnce(wit::Facts<'_>) -> R) -> R {
    let node = &facts.node;
    let annotations = pairs(&node.annotations);
    let selector_lists: Vec<Option<SelectorLists<'_>>> = facts
        .pools
        .iter()
        .map(|pool| {
            pool.node_selector.as_ref().map(|s| SelectorLists {
                match_labels: pairs(&s.match_labels),
                values: s
                    .match_expressions
                    .iter()
                    .map(|r| r.values.iter().map(String::as_str).collect())
                    .collect(),
            })
        })
        .collect();
    let requirements: Vec<Vec<wit::LabelSelectorRequirement<'_>>> = facts
        .pools
        .iter()
        .zip(&selector_lists)
        .map(|(pool, lists)| match (&pool.node_selector, lists) {
            (Some(s), Some(lists)) => s
                .match_expressions
                .iter()
                .zip(&lists.values)
                .map(|(r, values)| wit::LabelSelectorRequirement {
                    key: &r.key,
                    operator: &r.operator,
                    values,
                })
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    let pools: Vec<wit::Pool<'_>> = facts
        .pools
        .iter()
        .zip(selector_lists.iter().zip(&requirements))
        .map(|(pool, (lists, requirements))| wit::Pool {
            name: &pool.name,
            node_selector: lists.as_ref().map(|lists| wit::LabelSelector {
                match_labels: &lists.match_labels,
                match_expressions: requirements,
            }),
            target_config: &pool.target_config,
        })
        .collect();
    let policies = &facts.policies;
    let file_actions: Vec<Vec<wit::DisruptionAction<'_>>> =
        policies.files.iter().map(|f| actions(&f.actions)).collect();
    let unit_actions: Vec<Vec<wit::DisruptionAction<'_>>> =
        policies.units.iter().map(|u| actions(&u.actions)).collect();
    let files: Vec<wit::FilePolicy<'_>> = policies
        .files
        .iter()
        .zip(&file_actions)
        .map(|(f, actions)| wit::FilePolicy {
            path: &f.path,
            actions,
        })
        .collect();
    let units: Vec<wit::UnitPolicy<'_>> = policies
        .units
        .iter()
        .zip(&unit_actions)
        .map(|(u, actions)| wit::UnitPolicy {
            name: &u.name,
            actions,
        })
        .collect();
    let ssh_key = actions(&policies.ssh_key);
    let previous: Vec<wit_types::ConditionParam<'_>> = facts
        .previous
        .iter()
        .map(|c| wit_types::ConditionParam {
            type_: &c.type_,
            status: status_to_wit(c.status),
            reason: &c.reason,
            message: &c.message,
        })
        .collect();
    let feature_gates: Vec<&str> = facts.feature_gates.iter().map(String::as_str).collect();
    call(wit::Facts {
        node: wit::Node {
            name: &node.name,
            phase: &node.phase,
            unschedulable: node.unschedulable,
            annotations: &annotations,
        },
        pools: &pools,
        policies: wit::DisruptionPolicies {
            files: &files,
            units: &units,
            ssh_key: &ssh_key,
        },
        stored: facts.stored.as_ref().map(|s| wit::StoredNode {
            generation: s.generation,
            observed_generation: s.observed_generation,
            pool: &s.pool,
            desired_config: &s.desired_config,
            desired_image: s.desired_image.as_deref(),
            current_config: s.current_config.as_deref(),
        }),
        previous: &previous,
        feature_gates: &feature_gates,
    })
}

fn status_to_wit(status: logic::ConditionStatus) -> wit_types::ConditionStatus {
    match status {
        logic::ConditionStatus::True => wit_types::ConditionStatus::True,
        logic::ConditionStatus::False => wit_types::ConditionStatus::False,
        logic::ConditionStatus::Unknown => wit_types::ConditionStatus::Unknown,
    }
}

fn actions(actions: &[logic::DisruptionAction]) -> Vec<wit::DisruptionAction<'_>> {
    use logic::DisruptionAction as A;
    actions
        .iter()
        .map(|action| match action {
            A::Reboot => wit::DisruptionAction::Reboot,
            A::Drain => wit::DisruptionAction::Drain,
            A::Reload(service) => wit::DisruptionAction::Reload(service),
            A::Restart(service) => wit::DisruptionAction::Restart(service),
            A::DaemonReload => wit::DisruptionAction::DaemonReload,
            A::None => wit::DisruptionAction::None,
            A::Special => wit::DisruptionAction::Special,
        })
        .collect()
}

fn from_wit(decision: wit::Decision) -> logic::Decision {
    match decision {
        wit::Decision::Apply(mcn) => logic::Decision::Apply(logic::MachineConfigNode {
            pool: mcn.pool,
            desired_config: mcn.desired_config,
            desired_image: mcn.desired_image,
            status: mcn.status.map(|status| logic::NodeStatus {
                observed_generation: status.observed_generation,
                config_version: logic::ConfigVersion {
                    current: status.config_version.current,
                    desired: status.config_version.desired,
                },
                config_image: status.config_image.map(|i| logic::ConfigImage {
                    current_image: i.current_image,
                    desired_image: i.desired_image,
                }),
                conditions: status
                    .conditions
                    .into_iter()
                    .map(|c| logic::Condition {
                        type_: c.type_,
                        status: match c.status {
                            wit_types::ConditionStatus::True => logic::ConditionStatus::True,
                            wit_types::ConditionStatus::False => logic::ConditionStatus::False,
                            wit_types::ConditionStatus::Unknown => logic::ConditionStatus::Unknown,
                        },
                        reason: c.reason,
                        message: c.message,
                    })
                    .collect(),
            }),
        }),
        wit::Decision::Skip(reason) => logic::Decision::Skip(reason),
        wit::Decision::Error(message) => logic::Decision::Error(message),
    }
}
