//! The boot image section of the status summary: the controller's
//! conditions on MachineConfiguration `cluster`, and per MachineSet its
//! image, the stream's, whether it is enrolled, and the last thing the
//! controller did with it (its Events, hot-loop record and conditions).

use k8s_openapi::api::events::v1::Event;
use k8s_openapi::jiff::Timestamp;
use mco_bootimage::{Decision, MachineSetView};
use serde::Serialize;

use super::Objects;
use crate::objects::MachineConfiguration;
use crate::platform;
use crate::state::{ControllerState, HOT_LOOP_LIMIT};

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct BootImages {
    /// `BootImageUpdateProgressing` on MachineConfiguration `cluster`.
    pub progressing: Option<ConditionText>,
    /// `BootImageUpdateDegraded`.
    pub degraded: Option<ConditionText>,
    pub machinesets: Vec<MachineSetRow>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ConditionText {
    pub status: String,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetRow {
    pub name: String,
    pub arch: Option<String>,
    pub current_image: Option<String>,
    pub stream_image: Option<String>,
    pub enrolled: bool,
    pub outcome: Outcome,
    /// Why: the Event note, the hot-loop record, or the condition text.
    pub detail: Option<String>,
}

/// The last thing the boot image controller did with a MachineSet.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    Updated,
    /// On the stream's image, nothing recorded.
    Current,
    Skipped,
    Failed,
    HotLoop,
    /// Nothing known.
    None,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Updated => "updated",
            Outcome::Current => "current",
            Outcome::Skipped => "skipped",
            Outcome::Failed => "failed",
            Outcome::HotLoop => "hot loop",
            Outcome::None => "-",
        }
    }
}

fn condition_text(mc: Option<&MachineConfiguration>, type_: &str) -> Option<ConditionText> {
    let conditions = mc?.conditions();
    let c = conditions.into_iter().find(|c| c.type_ == type_)?;
    Some(ConditionText {
        status: c.status,
        message: c.message,
    })
}

pub fn summarize(objects: &Objects) -> BootImages {
    let stream = objects
        .stream
        .as_ref()
        .and_then(|cm| cm.stream())
        .and_then(|text| mco_bootimage::Stream::parse(text).ok());
    let record = objects
        .record
        .as_ref()
        .and_then(|cm| ControllerState::from_data(&cm.data).ok())
        .unwrap_or_default();
    let degraded = condition_text(
        objects.machine_configuration.as_ref(),
        crate::conditions::DEGRADED,
    );
    let mut machinesets: Vec<MachineSetRow> = objects
        .machinesets
        .iter()
        .map(|view| machineset_row(objects, view, stream.as_ref(), &record, degraded.as_ref()))
        .collect();
    machinesets.sort_by(|a, b| a.name.cmp(&b.name));
    BootImages {
        progressing: condition_text(
            objects.machine_configuration.as_ref(),
            crate::conditions::PROGRESSING,
        ),
        degraded,
        machinesets,
    }
}

fn machineset_row(
    objects: &Objects,
    view: &MachineSetView,
    stream: Option<&mco_bootimage::Stream>,
    record: &ControllerState,
    degraded: Option<&ConditionText>,
) -> MachineSetRow {
    let cluster = mco_bootimage::ClusterFacts {
        control_plane_arch: objects
            .control_plane_arch
            .clone()
            .unwrap_or_else(|| "x86_64".into()),
        ..Default::default()
    };
    let arch = mco_bootimage::arch::machineset_arch(view, &cluster.control_plane_arch, false).ok();
    // The controller's first rules leave a Windows MachineSet, one on
    // another OS stream or one another object owns alone whatever the
    // stream holds: no stream image is its, and the rule says why.
    let left_alone = match mco_bootimage::common_rules(view, &cluster) {
        Err(Decision::Noop { reason } | Decision::Skip { reason }) => Some(reason),
        _ => None,
    };
    // The platform of the providerSpec's kind: the view reads no
    // Infrastructure.
    let spec = view.provider_spec.as_deref();
    let platform = spec.and_then(|spec| Some((platform::by_provider_spec(spec)?, spec)));
    let current_image = platform.and_then(|(platform, spec)| platform.current_image(spec));
    let stream_image = match (platform, stream, &arch, &left_alone) {
        (Some((platform, spec)), Some(stream), Some(arch), None) => {
            platform.stream_image(stream, spec, arch)
        }
        _ => None,
    };
    let platform_name = platform.map_or("", |(platform, _)| platform.about().name);
    let enrolled = objects
        .machine_configuration
        .as_ref()
        .is_some_and(|mc| crate::rules::enrollment_gate(mc, view, platform_name).is_none());
    let (mut outcome, mut detail) = last_event(&objects.events, &view.name);
    if let Some(h) = record.hot_loops.get(&view.name)
        && h.count >= HOT_LOOP_LIMIT
        && matches!(outcome, Outcome::HotLoop | Outcome::Updated | Outcome::None)
    {
        if outcome != Outcome::HotLoop {
            detail = Some(format!(
                "the same patch was applied {} times in a row (record {})",
                h.count, "mco-host-boot-images"
            ));
        }
        outcome = Outcome::HotLoop;
    }
    if outcome == Outcome::None {
        if let Some(d) = degraded.filter(|d| d.status == "True" && d.message.contains(&view.name)) {
            outcome = Outcome::Failed;
            detail = Some(d.message.clone());
        } else if current_image.is_some() && current_image == stream_image {
            outcome = Outcome::Current;
        }
    }
    MachineSetRow {
        name: view.name.clone(),
        // As `oc` and the MachineSet's own annotation name it (`amd64`),
        // not as the stream does (`x86_64`).
        arch: arch
            .as_deref()
            .and_then(mco_bootimage::arch::kube_arch_from_stream)
            .map(str::to_owned),
        current_image,
        stream_image,
        enrolled,
        outcome,
        detail: detail.or(left_alone),
    }
}

/// The newest boot image Event about `name`.
fn last_event(events: &[Event], name: &str) -> (Outcome, Option<String>) {
    let about = |e: &&Event| {
        e.regarding.as_ref().is_some_and(|r| {
            r.kind.as_deref() == Some("MachineSet") && r.name.as_deref() == Some(name)
        })
    };
    let newest = events
        .iter()
        .filter(about)
        .filter_map(|e| {
            let outcome = match e.reason.as_deref()? {
                "BootImageUpdated" => Outcome::Updated,
                "BootImageUpdateSkipped" => Outcome::Skipped,
                "BootImageUpdateFailed" => Outcome::Failed,
                "HotLoopDetected" => Outcome::HotLoop,
                _ => return None,
            };
            Some((event_time(e), outcome, e.note.clone()))
        })
        .max_by_key(|(time, _, _)| *time);
    match newest {
        Some((_, outcome, note)) => (outcome, note),
        None => (Outcome::None, None),
    }
}

/// When an Event last happened: its series' last observation, its own
/// time, its deprecated timestamp or its creation, the first it has.
fn event_time(e: &Event) -> Option<Timestamp> {
    let series = e.series.as_ref().map(|s| s.last_observed_time.0);
    series
        .or(e.event_time.as_ref().map(|t| t.0))
        .or(e.deprecated_last_timestamp.as_ref().map(|t| t.0))
        .or(e.metadata.creation_timestamp.as_ref().map(|t| t.0))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_vsphere_machineset_shows_its_template_and_the_streams_ova_release() {
        let spec = json!({"kind": "VSphereMachineProviderSpec", "template": "c1-rhcos-fd-a",
                          "workspace": {"server": "vc.example.com"}});
        let vsphere = platform::by_provider_spec(&spec).unwrap_or_else(|| panic!("no platform"));
        assert_eq!(
            vsphere.current_image(&spec).as_deref(),
            Some("template c1-rhcos-fd-a")
        );
        let stream = mco_bootimage::Stream::parse(
            r#"{"stream": "s", "architectures": {"x86_64": {"artifacts": {"vmware": {"release": "9.8.1"}}}}}"#,
        )
        .unwrap_or_default();
        assert_eq!(
            vsphere.stream_image(&stream, &spec, "x86_64").as_deref(),
            Some("OVA 9.8.1")
        );
        assert_eq!(vsphere.stream_image(&stream, &spec, "aarch64"), None);
        assert_eq!(vsphere.about().name, "VSphere");
    }
}
