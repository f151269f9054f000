//! The price authority: catalog articles.

use crate::ids::SkuId;
use crate::money::{Cents, VatRate};

/// One article as the back office provisions it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogItem {
    pub sku_id: SkuId,
    pub name: String,
    /// Unit price including VAT.
    pub price: Cents,
    pub vat_rate: VatRate,
}
