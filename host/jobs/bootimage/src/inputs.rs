//! The host side of WIT `boot-image-inputs`: what a boot image guest is
//! lent for one `decide` call instead of a copy. The stream is the host's
//! own parse, made once per ConfigMap version ([`LoadedStream`]) and
//! shared by every call of every pass; the providerSpec is the value the
//! host decoded with its MachineSet, of which the guest reads the fields
//! its platform needs.
//!
//! As with the node-state handles (`mcn::inputs`), the handles live in
//! the store's resource table for the call only: the component model's
//! borrow rules trap a guest that keeps one past the call or uses an index
//! it was not lent, and the host traps one that looks up more than
//! [`LOOKUP_BUDGET`](mco_runtime::LOOKUP_BUDGET) times through one handle in one call.

use std::sync::Arc;

use mco_bootimage::serde_json::{self, Value};
use mco_bootimage::{AzureVariant, LookupError, ProviderSpec, Stream, StreamQuery as _};
use mco_runtime::GuestState;
use wasmtime::component::{Resource, ResourceTable};
use wasmtime_wasi::WasiView as _;

use mco_runtime::charge;

/// The WIT binding of world `boot-image-selector`, here because its
/// handles are the types below.
pub(super) mod wit_bindings {
    wasmtime::component::bindgen!({
        world: "boot-image-selector",
        path: "../../../wit",
        // A lookup past its budget traps the guest (`charge`).
        imports: { default: trappable },
        with: {
            "mco:machine-config/boot-image-inputs.coreos-stream": super::LentStream,
            "mco:machine-config/boot-image-inputs.provider-spec": super::LentProviderSpec,
        },
    });
}

pub(super) use wit_bindings::mco::machine_config::boot_image_inputs as wit_inputs;
use wit_inputs as wit;

/// A ConfigMap's stream as the host parsed it: the stream, or an empty one
/// and why the ConfigMap carries none that can be used.
#[derive(Debug)]
pub struct LoadedStream {
    stream: Stream,
    unusable: Option<String>,
}

impl LoadedStream {
    /// `text`: the ConfigMap's `data.stream`, `None` when it has none.
    pub fn load(text: Option<&str>) -> LoadedStream {
        match mco_bootimage::load_stream(text) {
            Ok(stream) => LoadedStream {
                stream,
                unusable: None,
            },
            Err(why) => LoadedStream {
                stream: Stream::default(),
                unusable: Some(why),
            },
        }
    }

    /// The parse, or why the text is no usable stream.
    pub fn index(&self) -> Result<&Stream, &str> {
        match &self.unusable {
            None => Ok(&self.stream),
            Some(why) => Err(why),
        }
    }
}

/// The stream, for the call.
pub struct LentStream {
    loaded: Arc<LoadedStream>,
    lookups: u32,
}

/// The MachineSet's providerSpec, for the call.
pub struct LentProviderSpec {
    spec: ProviderSpec,
    lookups: u32,
}

/// The handles lent for one call.
pub struct Lent {
    pub stream: Resource<LentStream>,
    pub provider_spec: Option<Resource<LentProviderSpec>>,
}

impl Lent {
    /// Puts the stream and the providerSpec in the store's table for one
    /// call; both are shared, not copied.
    pub fn new(
        table: &mut ResourceTable,
        stream: &Arc<LoadedStream>,
        provider_spec: Option<&ProviderSpec>,
    ) -> wasmtime::Result<Lent> {
        let provider_spec = match provider_spec {
            Some(spec) => Some(table.push(LentProviderSpec {
                spec: spec.clone(),
                lookups: 0,
            })?),
            None => None,
        };
        Ok(Lent {
            stream: table.push(LentStream {
                loaded: Arc::clone(stream),
                lookups: 0,
            })?,
            provider_spec,
        })
    }

    /// Takes the handles back once the call has returned.
    pub fn reclaim(self, table: &mut ResourceTable) -> wasmtime::Result<()> {
        table.delete(self.stream)?;
        if let Some(spec) = self.provider_spec {
            table.delete(spec)?;
        }
        Ok(())
    }
}

/// The lent stream, charged one lookup.
fn stream<'a>(
    state: &'a mut GuestState,
    handle: &Resource<LentStream>,
) -> wasmtime::Result<&'a LoadedStream> {
    let lent = state.ctx().table.get_mut(handle)?;
    charge(&mut lent.lookups, "the stream")?;
    Ok(&lent.loaded)
}

fn lookup_error(error: LookupError) -> wit::LookupError {
    match error {
        LookupError::NoArchitecture { .. } => wit::LookupError::NoArchitecture,
        LookupError::NoAwsImages { .. } => wit::LookupError::NoAwsImages,
        LookupError::NoAwsRegion { .. } => wit::LookupError::NoAwsRegion,
        LookupError::NoGcpImage { .. } => wit::LookupError::NoGcpImage,
        LookupError::NoArtifact { .. } => wit::LookupError::NoVmwareArtifact,
        LookupError::NoDisk { .. } => wit::LookupError::NoVmwareOva,
    }
}

impl wit::Host for GuestState {}

impl wit::HostCoreosStream for GuestState {
    fn unusable(&mut self, handle: Resource<LentStream>) -> wasmtime::Result<Option<String>> {
        Ok(stream(self, &handle)?.unusable.clone())
    }

    fn name(&mut self, handle: Resource<LentStream>) -> wasmtime::Result<String> {
        Ok(stream(self, &handle)?.stream.stream.clone())
    }

    fn has_architecture(
        &mut self,
        handle: Resource<LentStream>,
        arch: String,
    ) -> wasmtime::Result<bool> {
        Ok(stream(self, &handle)?
            .stream
            .architectures
            .contains_key(&arch))
    }

    fn aws_region_image(
        &mut self,
        handle: Resource<LentStream>,
        arch: String,
        region: String,
    ) -> wasmtime::Result<Result<wit::AwsImage, wit::LookupError>> {
        let found = stream(self, &handle)?
            .stream
            .aws_region_image(&arch, &region);
        Ok(found
            .map(|image| wit::AwsImage {
                release: image.release.clone(),
                image: image.image.clone(),
            })
            .map_err(lookup_error))
    }

    fn publishes_ami(
        &mut self,
        handle: Resource<LentStream>,
        ami: String,
    ) -> wasmtime::Result<bool> {
        Ok(stream(self, &handle)?.stream.contains_aws_ami(&ami))
    }

    fn gcp_image(
        &mut self,
        handle: Resource<LentStream>,
        arch: String,
    ) -> wasmtime::Result<Result<String, wit::LookupError>> {
        let found = stream(self, &handle)?.stream.gcp_image_path(&arch);
        Ok(found.map_err(lookup_error))
    }

    fn azure_marketplace(
        &mut self,
        handle: Resource<LentStream>,
        arch: String,
        variant: String,
    ) -> wasmtime::Result<wit::AzureMarketplace> {
        let image = |image: mco_bootimage::stream::AzureMarketplaceImage| wit::AzureImage {
            publisher: image.publisher,
            offer: image.offer,
            sku: image.sku,
            version: image.version,
        };
        Ok(
            match stream(self, &handle)?.stream.azure_variant(&arch, &variant) {
                AzureVariant::NoMarketplace => wit::AzureMarketplace::NoMarketplace,
                AzureVariant::NoVariant => wit::AzureMarketplace::NoVariant,
                AzureVariant::Images(set) => wit::AzureMarketplace::Images(wit::AzureVariant {
                    hyper_v_gen1: set.hyper_v_gen1.map(image),
                    hyper_v_gen2: set.hyper_v_gen2.map(image),
                }),
            },
        )
    }

    fn artifact_release(
        &mut self,
        handle: Resource<LentStream>,
        arch: String,
        artifact: String,
    ) -> wasmtime::Result<Result<Option<String>, wit::LookupError>> {
        let found = stream(self, &handle)?
            .stream
            .artifact_release(&arch, &artifact);
        Ok(found.map_err(lookup_error))
    }

    fn vmware_release(
        &mut self,
        handle: Resource<LentStream>,
        arch: String,
    ) -> wasmtime::Result<Result<String, wit::LookupError>> {
        let found = stream(self, &handle)?.stream.vmware_release(&arch);
        Ok(found.map_err(lookup_error))
    }

    fn vmware_ova(
        &mut self,
        handle: Resource<LentStream>,
        arch: String,
    ) -> wasmtime::Result<Result<wit::Ova, wit::LookupError>> {
        let found = stream(self, &handle)?.stream.vmware_ova(&arch);
        Ok(found
            .map(|ova| wit::Ova {
                location: ova.location.clone(),
                sha256: ova.sha256.clone(),
            })
            .map_err(lookup_error))
    }

    /// Never called: the guest is only ever lent borrows, which it does
    /// not own and so cannot drop.
    fn drop(&mut self, handle: Resource<LentStream>) -> wasmtime::Result<()> {
        self.ctx().table.delete(handle)?;
        Ok(())
    }
}

/// The lent providerSpec, charged one lookup.
fn provider_spec<'a>(
    state: &'a mut GuestState,
    handle: &Resource<LentProviderSpec>,
) -> wasmtime::Result<&'a Value> {
    let lent = state.ctx().table.get_mut(handle)?;
    charge(&mut lent.lookups, "the providerSpec")?;
    Ok(&lent.spec)
}

impl wit::HostProviderSpec for GuestState {
    fn kind(&mut self, handle: Resource<LentProviderSpec>) -> wasmtime::Result<wit::JsonKind> {
        Ok(match provider_spec(self, &handle)? {
            Value::Object(_) => wit::JsonKind::Object,
            Value::Array(_) => wit::JsonKind::Array,
            Value::String(_) => wit::JsonKind::String,
            Value::Number(_) => wit::JsonKind::Number,
            // The host lends no handle for a null providerSpec (it is
            // absent), so this is a boolean.
            Value::Bool(_) | Value::Null => wit::JsonKind::Boolean,
        })
    }

    fn field(
        &mut self,
        handle: Resource<LentProviderSpec>,
        key: String,
    ) -> wasmtime::Result<Option<String>> {
        let field = provider_spec(self, &handle)?.get(&key);
        Ok(field.map(serde_json::Value::to_string))
    }

    /// Never called, as for the stream.
    fn drop(&mut self, handle: Resource<LentProviderSpec>) -> wasmtime::Result<()> {
        self.ctx().table.delete(handle)?;
        Ok(())
    }
}
