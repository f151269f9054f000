//! The server's price of a cart: the authority's prices, the promotions in force, the declared
//! discounts and a presented coupon. Finalize commits it; the dry run only shows it.

use crate::error::ApiError;
use crate::state::AppState;
use jiff::Timestamp;
use std::collections::HashMap;
use std::sync::Arc;
use till_core::catalog::CatalogItem;
use till_core::ids::{CouponCode, SkuId, StoreId};
use till_core::pricing::{CouponToApply, LineToPrice, Priced, PricingError, PricingInput, Source, price};
use till_core::promotions::{PromoLine, apply_promotions};
use till_core::sale::{Cart, DeclaredDiscount};
use till_store::sales::Adjustment;

/// What is being priced.
pub struct QuoteRequest<'a> {
    pub store_id: &'a StoreId,
    pub cart: &'a Cart,
    pub declared: &'a [DeclaredDiscount],
    pub coupon_code: Option<&'a CouponCode>,
    /// When the sale happens: promotions and coupons must be valid then.
    pub at: Timestamp,
}

pub struct Quote {
    /// Each line at the price the server stands behind.
    pub lines: Vec<LineToPrice>,
    /// Each line's article name in the catalog (none for a custom line).
    pub labels: Vec<Option<String>>,
    pub priced: Priced,
    /// Promotion names by id, for receipts and the dry run.
    pub promotion_names: HashMap<String, String>,
}

impl Quote {
    /// Each reduction once, with all it took, in the order pricing applied them.
    pub fn adjustments(&self) -> Vec<Adjustment> {
        let mut adjustments: Vec<Adjustment> = Vec::new();
        for applied in &self.priced.applied {
            let (source, id) = match &applied.source {
                Source::Promotion(id) => ("promotion", id),
                Source::Declared(id) => ("declared", id),
                Source::Coupon(code) => ("coupon", code),
            };
            match adjustments
                .iter_mut()
                .find(|a| a.source == source && &a.source_id == id)
            {
                // Each sum stays within the subtotal, so it cannot overflow.
                Some(existing) => {
                    existing.amount = existing.amount.checked_add(applied.amount).unwrap_or(existing.amount)
                }
                None => adjustments.push(Adjustment {
                    source,
                    source_id: id.clone(),
                    label: self.promotion_names.get(id).filter(|_| source == "promotion").cloned(),
                    amount: applied.amount,
                }),
            }
        }
        adjustments
    }
}

pub async fn quote(state: &AppState, request: QuoteRequest<'_>) -> Result<Quote, ApiError> {
    if request.cart.lines.is_empty() {
        return Err(ApiError::Business(
            "The cart is empty: a sale needs at least one line.".into(),
        ));
    }
    let articles: Vec<&SkuId> = request
        .cart
        .lines
        .iter()
        .filter(|l| !l.custom)
        .filter_map(|l| l.sku_id.as_ref())
        .collect();
    let catalog = state.store().catalog_items(&articles).await?;
    let lines = lines_to_price(request.cart, &catalog)?;
    let labels = request
        .cart
        .lines
        .iter()
        .map(|line| match (&line.sku_id, line.custom) {
            (Some(sku), false) => catalog.get(sku).map(|item| item.name.clone()),
            _ => None,
        })
        .collect();

    let book = state.promotions().book(state.store()).await?;
    let candidates = book.candidates(articles.iter().copied(), request.store_id, request.at);
    let promo_lines: Vec<PromoLine> = request
        .cart
        .lines
        .iter()
        .zip(&lines)
        .map(|(line, priced)| PromoLine {
            line_id: line.id.clone(),
            sku: if line.custom { None } else { line.sku_id.clone() },
            unit_price: priced.unit_price,
            quantity: line.quantity,
        })
        .collect();
    let promotions = apply_promotions(&candidates, &promo_lines).map_err(|_| too_large())?;
    let promotion_names = candidates
        .iter()
        .map(|r| (r.id.as_str().to_owned(), r.name.clone()))
        .collect();

    let coupon = match request.coupon_code {
        Some(code) => Some(coupon_to_apply(state, code, request.at).await?),
        None => None,
    };
    let priced = price(&PricingInput {
        lines: &lines,
        promotions: promotions.reductions,
        basket_promotions: promotions.basket,
        declared: request.declared,
        coupon,
    })
    .map_err(|error| match error {
        PricingError::Overflow => too_large(),
        other => ApiError::Business(format!("{}.", capitalized(&other.to_string()))),
    })?;
    Ok(Quote {
        lines,
        labels,
        priced,
        promotion_names,
    })
}

/// Each line at the price the server stands behind: the authority's, or a custom line's own.
fn lines_to_price(cart: &Cart, catalog: &HashMap<SkuId, Arc<CatalogItem>>) -> Result<Vec<LineToPrice>, ApiError> {
    cart.lines
        .iter()
        .map(|line| {
            let (unit_price, vat_rate) = if line.custom {
                (line.unit_price, line.vat_rate)
            } else {
                let sku = line.sku_id.as_ref().ok_or_else(|| {
                    ApiError::Business(format!(
                        "Line {} names no article (skuId is null) and is not marked custom.",
                        line.id
                    ))
                })?;
                let item = catalog.get(sku).ok_or_else(|| {
                    ApiError::Business(format!("Line {}: article {sku} is not in the catalog.", line.id))
                })?;
                (item.price, item.vat_rate)
            };
            Ok(LineToPrice {
                line_id: line.id.clone(),
                unit_price,
                quantity: line.quantity,
                vat_rate,
            })
        })
        .collect()
}

/// A presented coupon, if it may be used at `at`; the minimum basket is pricing's to check,
/// and the redemption count the commit's.
async fn coupon_to_apply(state: &AppState, code: &CouponCode, at: Timestamp) -> Result<CouponToApply, ApiError> {
    let refuse = |why: String| ApiError::Business(format!("Coupon {code} cannot be used: {why}."));
    let record = state
        .store()
        .get_coupon(code)
        .await?
        .ok_or_else(|| refuse("it does not exist".into()))?;
    let coupon = record.coupon;
    if !coupon.active {
        return Err(refuse("it is not active".into()));
    }
    if coupon.valid_from.is_some_and(|from| at < from) {
        return Err(refuse("it is not valid yet".into()));
    }
    if coupon.valid_until.is_some_and(|until| at > until) {
        return Err(refuse("it has expired".into()));
    }
    if coupon.max_redemptions.is_some_and(|max| record.redemptions >= max) {
        return Err(refuse("it has been redeemed as many times as it may be".into()));
    }
    Ok(CouponToApply {
        code: code.as_str().to_owned(),
        reward: coupon.reward,
        min_basket: coupon.min_basket,
    })
}

fn too_large() -> ApiError {
    ApiError::Business("The sale's amounts are too large to be represented.".into())
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
