//! Azure: the `image` block names a marketplace image the stream
//! publishes for the architecture, with the type its plan calls for.

use super::{Proposal, Rule};
use mco_bootimage::stream::AzureMarketplaceImage;

/// The image the patch sets, if the stream publishes it for this
/// MachineSet.
pub(super) fn image(proposal: &Proposal<'_>) -> Result<String, Rule> {
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
