//! Azure: the `image` block names a marketplace image the stream
//! publishes for the architecture, with the type its plan calls for.

use mco_bootimage::Stream;
use mco_bootimage::stream::AzureMarketplaceImage;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{About, Platform, provider_spec};
use crate::proposal::{May, Owned, Proposal, Rule, owned};

pub(crate) struct Azure;

/// Its row of the platform table.
const ABOUT: About = About::new(
    "Azure",
    "bootimage-azure.wasm",
    "AzureMachineProviderSpec",
    OWNED,
);

impl Platform for Azure {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    /// The image the patch sets, if the stream publishes it for this
    /// MachineSet.
    fn image(&self, proposal: &Proposal<'_>) -> Result<String, Rule> {
        let &Proposal {
            stream,
            arch,
            after,
            ..
        } = proposal;
        let field = |key: &str| after.str_at(&format!("/image/{key}")).unwrap_or("");
        let [publisher, offer, sku, version, resource_id, kind] =
            ["publisher", "offer", "sku", "version", "resourceID", "type"].map(field);
        let urn = format!("{publisher}:{offer}:{sku}:{version}");
        let marketplace =
            stream
                .azure_marketplace(arch)
                .ok_or_else(|| Rule::AzureNothingPublished {
                    urn: urn.clone(),
                    arch: arch.to_owned(),
                })?;
        let sets = [
            (&marketplace.no_purchase_plan, "MarketplaceNoPlan"),
            (&marketplace.ocp, "MarketplaceWithPlan"),
            (&marketplace.opp, "MarketplaceWithPlan"),
            (&marketplace.oke, "MarketplaceWithPlan"),
            (&marketplace.ocp_emea, "MarketplaceWithPlan"),
            (&marketplace.opp_emea, "MarketplaceWithPlan"),
            (&marketplace.oke_emea, "MarketplaceWithPlan"),
        ];
        let same = |image: &Option<AzureMarketplaceImage>| {
            image.as_ref().is_some_and(|i| {
                !i.publisher.is_empty()
                    && (
                        i.publisher.as_str(),
                        i.offer.as_str(),
                        i.sku.as_str(),
                        i.version.as_str(),
                    ) == (publisher, offer, sku, version)
            })
        };
        let published = sets.iter().find_map(|(set, wanted_type)| {
            let set = set.as_ref()?;
            (same(&set.hyper_v_gen1) || same(&set.hyper_v_gen2)).then_some(*wanted_type)
        });
        match published {
            None => Err(Rule::AzureNotPublished {
                urn,
                arch: arch.to_owned(),
            }),
            Some(_) if !resource_id.is_empty() => Err(Rule::AzureResourceId {
                resource_id: resource_id.to_owned(),
            }),
            Some(wanted) if kind != wanted => Err(Rule::AzureImageType {
                kind: kind.to_owned(),
                urn,
                wanted,
            }),
            Some(_) => Ok(urn),
        }
    }

    fn fixture(&self) -> Value {
        json!({
            "kind": "AzureMachineProviderSpec",
            "image": {"publisher": "azureopenshift", "offer": "aro4", "sku": "420-v2",
                      "version": "9.6.20251015", "type": "MarketplaceNoPlan"},
            "securityProfile": {},
            "userDataSecret": {"name": "worker-user-data"},
        })
    }

    /// `image.resourceID`, or the marketplace URN
    /// `publisher:offer:sku:version`.
    fn current_image(&self, spec: &Value) -> Option<String> {
        let image = provider_spec::<AzureSpec>(spec)?.image?;
        if let Some(id) = image.resource_id.filter(|id| !id.is_empty()) {
            return Some(id);
        }
        let parts = [image.publisher, image.offer, image.sku, image.version];
        let parts: Option<Vec<String>> = parts.into_iter().collect();
        parts.map(|parts| parts.join(":"))
    }

    /// The stream publishes marketplace offers, not one image to compare.
    fn stream_image(&self, _stream: &Stream, _spec: &Value, _arch: &str) -> Option<String> {
        None
    }
}

/// The six fields of the `image` block.
const OWNED: &[Owned] = &[
    owned("image.publisher", May::SetImage),
    owned("image.offer", May::SetImage),
    owned("image.sku", May::SetImage),
    owned("image.version", May::SetImage),
    owned("image.resourceID", May::SetImage),
    owned("image.type", May::SetImage),
];

/// What the status view reads of an Azure providerSpec.
#[derive(Deserialize)]
struct AzureSpec {
    image: Option<AzureImage>,
}

#[derive(Deserialize)]
struct AzureImage {
    publisher: Option<String>,
    offer: Option<String>,
    sku: Option<String>,
    version: Option<String>,
    #[serde(rename = "resourceID")]
    resource_id: Option<String>,
}
