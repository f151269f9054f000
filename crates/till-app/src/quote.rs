//! The server's price of a cart: the authority's prices, the promotions in force, the declared
//! discounts and a presented coupon. Finalize commits it; the dry run only shows it.

use crate::app::App;
use crate::refusal::{CouponUnusable, Error, Refusal};
use jiff::Timestamp;
use std::collections::{BTreeSet, HashMap};
use till_core::catalog::ArticleAt;
use till_core::committed::Adjustment;
use till_core::ids::{CouponCode, CustomerId, SkuId, StoreId};
use till_core::money::MAX_SAFE_INTEGER;
use till_core::pricing::{CouponToApply, LineToPrice, Priced, PricingError, PricingInput, Source, price};
use till_core::promotions::{PromoLine, apply_promotions, groups_relied_on};
use till_core::sale::{Cart, DeclaredDiscount};

/// What is being priced.
pub struct QuoteRequest<'a> {
    pub store_id: &'a StoreId,
    pub cart: &'a Cart,
    pub declared: &'a [DeclaredDiscount],
    pub coupon_code: Option<&'a CouponCode>,
    /// Whose sale it is: promotions for customer groups apply only to their members.
    pub customer_id: Option<&'a CustomerId>,
    /// When the sale happens: it is priced with the prices in force then (the store's own,
    /// else the catalog's), and the promotions and coupons valid then.
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
    /// The customer's groups that promotions for groups applied for.
    pub relies_on_groups: BTreeSet<String>,
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

/// The server's price of a cart.
pub async fn quote(app: &App, request: QuoteRequest<'_>) -> Result<Quote, Error> {
    if request.cart.lines.is_empty() {
        return Err(Refusal::EmptyCart.into());
    }
    let articles: Vec<&SkuId> = request
        .cart
        .lines
        .iter()
        .filter(|l| !l.custom)
        .filter_map(|l| l.sku_id.as_ref())
        .collect();
    let catalog = app
        .catalog()
        .catalog_items(request.store_id, &articles, request.at)
        .await?;
    let lines = lines_to_price(request.cart, &catalog)?;
    let labels = labels(request.cart, &catalog);

    let book = app.promotions().book(app.promotion_rules()).await?;
    let mut candidates = book.candidates(articles.iter().copied(), request.store_id, request.at);
    // A customer's groups are read only when a rule in force is for some.
    let groups = match request.customer_id {
        Some(customer) if candidates.iter().any(|rule| rule.customer_groups.is_some()) => {
            Some(app.customers().customer_groups(customer).await?)
        }
        _ => None,
    };
    candidates.retain(|rule| rule.admits(groups.as_ref()));
    let promotions =
        apply_promotions(&candidates, &promo_lines(request.cart, &lines)).map_err(|_| Refusal::AmountsTooLarge)?;
    let promotion_names = candidates
        .iter()
        .map(|r| (r.id.as_str().to_owned(), r.name.clone()))
        .collect();

    let coupon = match request.coupon_code {
        Some(code) => Some(coupon_to_apply(app, code, request.at).await?),
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
        PricingError::Overflow => Refusal::AmountsTooLarge,
        other => Refusal::Pricing(other),
    })?;
    let relies_on_groups = match &groups {
        Some(held) => {
            let applied = priced.applied.iter().filter_map(|applied| match &applied.source {
                Source::Promotion(id) => Some(id.as_str()),
                _ => None,
            });
            groups_relied_on(&candidates, applied, held)
        }
        None => BTreeSet::new(),
    };
    Ok(Quote {
        lines,
        labels,
        priced,
        promotion_names,
        relies_on_groups,
    })
}

/// The dry run of finalize's pricing, for a store of the network: nothing is written, no
/// coupon is redeemed.
pub async fn price_cart(app: &App, request: QuoteRequest<'_>) -> Result<CartPrice, Error> {
    if app.people().store_in_network(request.store_id).await? == Some(false) {
        return Err(Refusal::StoreNotInNetwork.into());
    }
    let cart = request.cart;
    let quote = quote(app, request).await?;
    let item_count = item_count(cart)?;
    Ok(CartPrice { quote, item_count })
}

/// A cart's price and the units it holds.
pub struct CartPrice {
    pub quote: Quote,
    pub item_count: i64,
}

/// The units a cart holds, within what a client can represent.
pub fn item_count(cart: &Cart) -> Result<i64, Refusal> {
    cart.lines
        .iter()
        .try_fold(0i64, |sum, line| sum.checked_add(line.quantity))
        .filter(|count| *count <= MAX_SAFE_INTEGER)
        .ok_or(Refusal::QuantitiesTooLarge)
}

/// Each line's article name in the catalog (none for a custom line).
fn labels(cart: &Cart, catalog: &HashMap<SkuId, ArticleAt>) -> Vec<Option<String>> {
    cart.lines
        .iter()
        .map(|line| match (&line.sku_id, line.custom) {
            (Some(sku), false) => catalog.get(sku).map(|item| item.article.name.clone()),
            _ => None,
        })
        .collect()
}

/// The lines as promotions see them, at the prices the server stands behind.
fn promo_lines(cart: &Cart, lines: &[LineToPrice]) -> Vec<PromoLine> {
    cart.lines
        .iter()
        .zip(lines)
        .map(|(line, priced)| PromoLine {
            line_id: line.id.clone(),
            sku: if line.custom { None } else { line.sku_id.clone() },
            unit_price: priced.unit_price,
            quantity: line.quantity,
        })
        .collect()
}

/// Each line at the price the server stands behind: the authority's, or a custom line's own.
fn lines_to_price(cart: &Cart, catalog: &HashMap<SkuId, ArticleAt>) -> Result<Vec<LineToPrice>, Refusal> {
    cart.lines
        .iter()
        .map(|line| {
            let (unit_price, vat_rate) = if line.custom {
                (line.unit_price, line.vat_rate)
            } else {
                let sku = line.sku_id.as_ref().ok_or_else(|| Refusal::LineWithoutArticle {
                    line_id: line.id.clone(),
                })?;
                let item = catalog.get(sku).ok_or_else(|| Refusal::NotInCatalog {
                    line_id: line.id.clone(),
                    sku: sku.clone(),
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
async fn coupon_to_apply(app: &App, code: &CouponCode, at: Timestamp) -> Result<CouponToApply, Error> {
    let refuse = |why: CouponUnusable| {
        Error::from(Refusal::Coupon {
            code: code.clone(),
            why,
        })
    };
    let record = app
        .coupons()
        .get_coupon(code)
        .await?
        .ok_or_else(|| refuse(CouponUnusable::Unknown))?;
    let coupon = record.coupon;
    if !coupon.active {
        return Err(refuse(CouponUnusable::Inactive));
    }
    if coupon.valid_from.is_some_and(|from| at < from) {
        return Err(refuse(CouponUnusable::NotYetValid));
    }
    if coupon.valid_until.is_some_and(|until| at > until) {
        return Err(refuse(CouponUnusable::Expired));
    }
    if coupon.max_redemptions.is_some_and(|max| record.redemptions >= max) {
        return Err(refuse(CouponUnusable::Exhausted));
    }
    Ok(CouponToApply {
        code: code.as_str().to_owned(),
        reward: coupon.reward,
        min_basket: coupon.min_basket,
    })
}
