//! The boot images section of the status summary: the controller's
//! conditions on MachineConfiguration `cluster`, and per MachineSet its
//! image, the stream's, whether it is enrolled, and the last thing the
//! controller did with it (its Events, hot-loop record and conditions).

use std::collections::BTreeMap;

use k8s_openapi::jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;

use super::inputs::{Inputs, str_at};
use crate::bootimage::objects::{Input as _, MachineConfiguration};
use crate::bootimage::state::{ControllerState, HOT_LOOP_LIMIT};

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

fn condition_text(mc: Option<&Value>, type_: &str) -> Option<ConditionText> {
    let c = mc?
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)?;
    Some(ConditionText {
        status: c["status"].as_str().unwrap_or_default().to_owned(),
        message: c["message"].as_str().unwrap_or_default().to_owned(),
    })
}

pub(super) fn summarize(inputs: &Inputs) -> BootImages {
    let stream = inputs
        .stream
        .as_ref()
        .and_then(|cm| str_at(cm, &["data", "stream"]))
        .and_then(|text| mco_bootimage::Stream::parse(text).ok());
    let record = inputs
        .record
        .as_ref()
        .and_then(|cm| cm.get("data"))
        .and_then(|d| serde_json::from_value::<BTreeMap<String, String>>(d.clone()).ok())
        .and_then(|d| ControllerState::from_data(&d).ok())
        .unwrap_or_default();
    let degraded = condition_text(
        inputs.machine_configuration.as_ref(),
        crate::bootimage::conditions::DEGRADED,
    );
    let mut machinesets: Vec<MachineSetRow> = inputs
        .machinesets
        .iter()
        .filter_map(|ms| {
            let view = mco_bootimage::MachineSetView::from_object(ms).ok()?;
            Some(machineset_row(
                inputs,
                &view,
                stream.as_ref(),
                &record,
                degraded.as_ref(),
            ))
        })
        .collect();
    machinesets.sort_by(|a, b| a.name.cmp(&b.name));
    BootImages {
        progressing: condition_text(
            inputs.machine_configuration.as_ref(),
            crate::bootimage::conditions::PROGRESSING,
        ),
        degraded,
        machinesets,
    }
}

fn machineset_row(
    inputs: &Inputs,
    view: &mco_bootimage::MachineSetView,
    stream: Option<&mco_bootimage::Stream>,
    record: &ControllerState,
    degraded: Option<&ConditionText>,
) -> MachineSetRow {
    let arch = mco_bootimage::arch::machineset_arch(
        view,
        inputs.control_plane_arch.as_deref().unwrap_or("x86_64"),
        false,
    )
    .ok();
    let spec = view.provider_spec.as_deref();
    let current_image = spec.and_then(current_image);
    let stream_image = match (stream, spec, &arch) {
        (Some(stream), Some(spec), Some(arch)) => stream_image(stream, spec, arch),
        _ => None,
    };
    let enrolled = inputs
        .machine_configuration
        .as_ref()
        .and_then(|mc| MachineConfiguration::decode(mc).ok())
        .is_some_and(|mc| {
            crate::bootimage::rules::enrollment_gate(&mc, view, platform_of(view)).is_none()
        });
    let (mut outcome, mut detail) = last_event(&inputs.events, &view.name);
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
        arch,
        current_image,
        stream_image,
        enrolled,
        outcome,
        detail,
    }
}

/// The image a providerSpec boots from: AWS `ami.id`, GCP boot disk
/// `image`, Azure `image` (`resourceID`, or publisher:offer:sku:version),
/// vSphere the VM `template` it clones.
fn current_image(spec: &Value) -> Option<String> {
    if let Some(ami) = str_at(spec, &["ami", "id"]) {
        return Some(ami.to_owned());
    }
    if is_vsphere(spec) {
        return str_at(spec, &["template"]).map(|t| format!("template {t}"));
    }
    if let Some(disks) = spec.get("disks").and_then(Value::as_array) {
        let boot = disks
            .iter()
            .find(|d| d["boot"] == true)
            .or_else(|| disks.first())?;
        return boot["image"].as_str().map(str::to_owned);
    }
    let image = spec.get("image")?;
    if let Some(id) = image["resourceID"].as_str().filter(|s| !s.is_empty()) {
        return Some(id.to_owned());
    }
    let parts: Vec<&str> = ["publisher", "offer", "sku", "version"]
        .iter()
        .filter_map(|k| image[*k].as_str())
        .collect();
    (parts.len() == 4).then(|| parts.join(":"))
}

/// The platform a providerSpec kind belongs to (the status view reads no
/// Infrastructure), for the enrollment defaults.
fn platform_of(view: &mco_bootimage::MachineSetView) -> &'static str {
    view.provider_spec.as_deref().map_or("", platform_of_spec)
}

fn platform_of_spec(spec: &Value) -> &'static str {
    match spec.get("kind").and_then(Value::as_str) {
        Some("AWSMachineProviderConfig") => "AWS",
        Some("GCPMachineProviderSpec") => "GCP",
        Some("AzureMachineProviderSpec") => "Azure",
        Some("VSphereMachineProviderSpec") => "VSphere",
        _ => "",
    }
}

fn is_vsphere(spec: &Value) -> bool {
    platform_of_spec(spec) == "VSphere"
}

/// The stream's image for the same platform, region and architecture; on
/// vSphere the release of the OVA its template is made from (which release
/// a template holds is in vCenter, which this view does not read).
fn stream_image(stream: &mco_bootimage::Stream, spec: &Value, arch: &str) -> Option<String> {
    if is_vsphere(spec) {
        let vmware = stream.vmware(arch).ok()?;
        return Some(format!("OVA {}", vmware.release));
    }
    if spec.get("ami").is_some() {
        let region = str_at(spec, &["placement", "region"])?;
        return stream
            .aws_region_image(arch, region)
            .ok()
            .map(|i| i.image.clone());
    }
    if spec.get("disks").is_some() {
        return stream.gcp_image_path(arch).ok();
    }
    None
}

/// The newest boot image Event about `name`.
fn last_event(events: &[Value], name: &str) -> (Outcome, Option<String>) {
    let newest = events
        .iter()
        .filter(|e| {
            str_at(e, &["regarding", "kind"]) == Some("MachineSet")
                && str_at(e, &["regarding", "name"]) == Some(name)
        })
        .filter_map(|e| {
            let outcome = match e["reason"].as_str()? {
                "BootImageUpdated" => Outcome::Updated,
                "BootImageUpdateSkipped" => Outcome::Skipped,
                "BootImageUpdateFailed" => Outcome::Failed,
                "HotLoopDetected" => Outcome::HotLoop,
                _ => return None,
            };
            let time = [
                "/series/lastObservedTime",
                "/eventTime",
                "/deprecatedLastTimestamp",
                "/metadata/creationTimestamp",
            ]
            .iter()
            .find_map(|p| e.pointer(p).and_then(Value::as_str))
            .and_then(|t| t.parse::<Timestamp>().ok());
            Some((time, outcome, e["note"].as_str().map(str::to_owned)))
        })
        .max_by_key(|(time, _, _)| *time);
    match newest {
        Some((_, outcome, note)) => (outcome, note),
        None => (Outcome::None, None),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_vsphere_machineset_shows_its_template_and_the_streams_ova_release() {
        let spec = json!({"kind": "VSphereMachineProviderSpec", "template": "c1-rhcos-fd-a",
                          "workspace": {"server": "vc.example.com"}});
        assert_eq!(
            current_image(&spec).as_deref(),
            Some("template c1-rhcos-fd-a")
        );
        let stream = mco_bootimage::Stream::parse(
            r#"{"stream": "s", "architectures": {"x86_64": {"artifacts": {"vmware": {"release": "9.8.1"}}}}}"#,
        )
        .unwrap_or_default();
        assert_eq!(
            stream_image(&stream, &spec, "x86_64").as_deref(),
            Some("OVA 9.8.1")
        );
        assert_eq!(stream_image(&stream, &spec, "aarch64"), None);
        assert_eq!(platform_of_spec(&spec), "VSphere");
    }
}
