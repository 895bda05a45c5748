//! Azure: the `image` block names a marketplace image the stream
//! publishes for the architecture, with the type its plan calls for.

use mco_bootimage::stream::AzureMarketplaceImage;
use mco_k8s_rules::quote;

use super::{Proposal, QUOTE, str_at};

/// The image the patch sets, if the stream publishes it for this
/// MachineSet.
pub(super) fn image(proposal: &Proposal<'_>) -> Result<String, String> {
    let &Proposal {
        guest,
        stream,
        arch,
        after,
        ..
    } = proposal;
    let field = |key: &str| str_at(after, &format!("/image/{key}")).unwrap_or("");
    let [publisher, offer, sku, version, resource_id, kind] =
        ["publisher", "offer", "sku", "version", "resourceID", "type"].map(field);
    let urn = format!("{publisher}:{offer}:{sku}:{version}");
    let marketplace = stream.azure_marketplace(arch).ok_or_else(|| {
        format!("{guest} patch sets image {urn}, but the stream publishes no Azure marketplace images for {arch}")
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
        None => Err(format!(
            "{guest} patch sets providerSpec.value.image to {}, which is not an image the stream publishes for {arch}",
            quote(&urn, QUOTE)
        )),
        Some(_) if !resource_id.is_empty() => Err(format!(
            "{guest} patch sets providerSpec.value.image.resourceID to {}; a marketplace image has none",
            quote(resource_id, QUOTE)
        )),
        Some(wanted) if kind != wanted => Err(format!(
            "{guest} patch sets providerSpec.value.image.type to {}, but the stream's image {urn} is {wanted}",
            quote(kind, QUOTE)
        )),
        Some(_) => Ok(urn),
    }
}
