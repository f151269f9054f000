//! The finalize and price requests: the bodies as read, each the shape the document declares,
//! their parsers (a 400 listing every problem with its dot path), and what they mean as the
//! domain's [`SaleRequest`].

use super::discounts::{DeclaredDiscountBody, declared};
use super::tenders::{TenderSetBody, tender_set};
use crate::error::ApiError;
use crate::fields::{Field, FromBody, Obj, parse_body};
use crate::openapi::{SkuId as SkuIdText, Text, UtcInstant, named_words, words};
use crate::routes::catalog::vat_rate;
use jiff::Timestamp;
use serde_json::Value;
use std::collections::HashSet;
use till_core::ids::{CouponCode, CustomerId, RegisterId, SessionId, SkuId, StoreId, Subject, TransactionId};
use till_core::instant::Zone;
use till_core::money::{Cents, MAX_SAFE_INTEGER, VatRate};
use till_core::sale::{Cart, CartLine, DeclaredDiscount, SaleRequest, SaleType, Serial};
use till_core::stored_value::{CardAction, GiftCardSale, InstrumentCode, NotACode};

/// Most lines one sale may carry.
pub const MAX_LINES: usize = 1_000;

/// Why a list of lines longer than [`MAX_LINES`] is refused.
pub fn too_many_lines() -> String {
    format!("must hold at most {MAX_LINES} lines")
}

// As read; `SaleRequest` is made of it.
/// Body of `POST /v1/checkout/finalize`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SaleRequestBody {
    /// Idempotency key of the sale: the same id with the same content is a no-op, with other
    /// content a 409.
    #[schema(value_type = Text)]
    transaction_id: TransactionId,
    /// Ticket number.
    #[schema(value_type = Text)]
    number: String,
    /// A store of the network (checked once the network has a store).
    #[schema(value_type = Text)]
    store_id: StoreId,
    #[schema(value_type = Text)]
    seller_id: Subject,
    /// An identified customer earns loyalty points. Required; null for an anonymous sale.
    #[schema(value_type = Option<Text>, required = true)]
    customer_id: Option<CustomerId>,
    /// The open register session the sale is booked against.
    #[schema(value_type = Text)]
    session_id: SessionId,
    /// Selects the till's fiscal chain; defaults to the session's register.
    #[schema(value_type = Option<Text>)]
    register_id: Option<RegisterId>,
    #[schema(value_type = Option<SaleTypeName>)]
    r#type: Option<SaleType>,
    cart: CartBody,
    /// Default: none.
    declared_discounts: Option<Vec<DeclaredDiscountBody>>,
    #[schema(value_type = Option<Text>)]
    coupon_code: Option<CouponCode>,
    /// When the sale was rung (default: now); the catalog prices, promotions and coupons in
    /// force then apply.
    #[schema(value_type = Option<UtcInstant>)]
    issued_at: Option<Timestamp>,
    tenders: TenderSetBody,
}

named_words!(
    SaleTypeName,
    "SaleType",
    SaleType::ALL.iter().map(|kind| kind.as_str()),
    "`sale` (default), `rental`, `repair` or `return`."
);

#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CartBody {
    /// One line at least (an empty cart is refused with 422, a business rule, so the schema
    /// sets no `minItems`), at most 1000; each line's `id` once.
    #[schema(max_items = 1000)]
    lines: Vec<CartLineBody>,
    #[schema(minimum = 0, maximum = 9007199254740991_i64)]
    free_line_sequence: i64,
}

#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CartLineBody {
    /// Unique in the cart; referenced by a line-scoped discount's `lineId`.
    #[schema(value_type = Text)]
    id: String,
    /// The article; null for a self-priced line. Required.
    #[schema(value_type = Option<SkuIdText>, required = true)]
    sku_id: Option<SkuId>,
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    quantity: i64,
    /// Advisory for catalog lines: the server prices them from its authority.
    #[schema(value_type = i64, minimum = 0, maximum = 9007199254740991_i64)]
    unit_price: Cents,
    /// Percent, at most two decimals.
    #[schema(value_type = f64, minimum = 0, maximum = 100, multiple_of = 0.01)]
    vat_rate: VatRate,
    free: bool,
    /// True marks a self-priced line (free-text article, gift card): trusted, not re-priced.
    custom: Option<bool>,
    serial: Option<SerialBody>,
    #[schema(value_type = Option<Text>)]
    kit_id: Option<String>,
    /// On a custom line at VAT 0: the gift card the line sells, activated with (or loaded by)
    /// the line's net amount when the sale commits.
    gift_card: Option<GiftCardLineBody>,
}

#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GiftCardLineBody {
    /// The code printed on the card.
    #[schema(value_type = crate::openapi::InstrumentCodeText)]
    code: InstrumentCode,
    #[schema(schema_with = card_action_schema)]
    action: CardAction,
}

fn card_action_schema() -> utoipa::openapi::schema::Schema {
    words(
        CardAction::ALL.iter().map(|action| action.as_str()),
        "`activate` a new card, or `load` an active one.",
    )
}

#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SerialBody {
    #[schema(value_type = Text)]
    serial_number: String,
    #[schema(minimum = 0, maximum = 9007199254740991_i64)]
    warranty_months: i64,
}

/// Body of `POST /v1/checkout/price`: the parts of a sale that decide its price.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PriceRequestBody {
    /// A store of the network (checked once the network has a store).
    #[schema(value_type = Text)]
    store_id: StoreId,
    cart: CartBody,
    declared_discounts: Option<Vec<DeclaredDiscountBody>>,
    #[schema(value_type = Option<Text>)]
    coupon_code: Option<CouponCode>,
    /// Whose sale it would be: promotions for customer groups apply to their members only.
    /// Absent or null: an anonymous sale.
    #[schema(value_type = Option<Text>)]
    customer_id: Option<CustomerId>,
    /// When the sale would happen (default: now): it is priced with the catalog prices in
    /// force then, and promotions and coupons must be valid then.
    #[schema(value_type = Option<UtcInstant>)]
    issued_at: Option<Timestamp>,
}

/// A cart to price, validated.
pub struct PriceRequest {
    pub store_id: StoreId,
    pub cart: Cart,
    pub declared_discounts: Vec<DeclaredDiscount>,
    pub coupon_code: Option<CouponCode>,
    pub customer_id: Option<CustomerId>,
    pub issued_at: Option<jiff::Timestamp>,
}

/// Parses a dry-run body, reporting every problem at once.
pub fn parse_price(body: &Value) -> Result<PriceRequest, ApiError> {
    parse_body::<PriceRequestBody>(body).map(PriceRequest::from)
}

/// Parses a finalize body, reporting every problem at once.
pub fn parse_sale(body: &Value) -> Result<SaleRequest, ApiError> {
    parse_body::<SaleRequestBody>(body).map(SaleRequest::from)
}

pub(super) fn choices<T: Copy>(all: &[T], name: fn(T) -> &'static str) -> Vec<(&'static str, T)> {
    all.iter().map(|v| (name(*v), *v)).collect()
}

impl FromBody for PriceRequestBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let store_id = root.required("storeId", |f| f.parse_text(StoreId::parse));
        let cart = root.required("cart", cart);
        let line_ids = raw_line_ids(root);
        let declared = root.optional("declaredDiscounts", |f| f.array(|d| declared(d, &line_ids)));
        let coupon_code = root.optional("couponCode", |f| f.parse_text(CouponCode::parse));
        let customer_id = root.optional("customerId", |f| f.nullable(|f| f.parse_text(CustomerId::parse)));
        let issued_at = root.optional("issuedAt", |f| f.instant(Zone::UtcOnly));
        Some(PriceRequestBody {
            store_id: store_id?,
            cart: cart?,
            declared_discounts: declared?,
            coupon_code: coupon_code?,
            customer_id: customer_id?.flatten(),
            issued_at: issued_at?,
        })
    }
}

impl FromBody for SaleRequestBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let kinds = choices(&SaleType::ALL, SaleType::as_str);
        let transaction_id = root.required("transactionId", |f| f.parse_text(TransactionId::parse));
        let number = root.required("number", |f| f.text());
        let store_id = root.required("storeId", |f| f.parse_text(StoreId::parse));
        let seller_id = root.required("sellerId", |f| f.parse_text(Subject::parse));
        let customer_id = root.required("customerId", |f| f.nullable(|f| f.parse_text(CustomerId::parse)));
        let session_id = root.required("sessionId", |f| f.parse_text(SessionId::parse));
        let register_id = root.optional("registerId", |f| f.parse_text(RegisterId::parse));
        let kind = root.optional("type", |f| f.one_of(&kinds));
        let cart = root.required("cart", cart);
        let line_ids = raw_line_ids(root);
        let declared_discounts = root.optional("declaredDiscounts", |f| f.array(|d| declared(d, &line_ids)));
        let coupon_code = root.optional("couponCode", |f| f.parse_text(CouponCode::parse));
        let issued_at = root.optional("issuedAt", |f| f.instant(Zone::UtcOnly));
        let tenders = root.required("tenders", tender_set);
        Some(SaleRequestBody {
            transaction_id: transaction_id?,
            number: number?,
            store_id: store_id?,
            seller_id: seller_id?,
            customer_id: customer_id?,
            session_id: session_id?,
            register_id: register_id?,
            r#type: kind?,
            cart: cart?,
            declared_discounts: declared_discounts?,
            coupon_code: coupon_code?,
            issued_at: issued_at?,
            tenders: tenders?,
        })
    }
}

fn cart(field: Field<'_>) -> Option<CartBody> {
    let cart = field.object()?;
    let lines = cart.required("lines", |f| {
        if f.value().as_array().is_some_and(|lines| lines.len() > MAX_LINES) {
            return f.fail(too_many_lines());
        }
        let mut seen = HashSet::new();
        f.array(|line| {
            // A second line with the same id would make line-scoped discounts ambiguous.
            let id = line.value().get("id").and_then(Value::as_str).map(str::to_owned);
            if id.is_some_and(|id| !seen.insert(id)) {
                line.fail_inner::<()>("id", "is already the id of another line");
            }
            cart_line(line)
        })
    });
    let free_line_sequence = cart.required("freeLineSequence", |f| f.integer(0, MAX_SAFE_INTEGER));
    Some(CartBody {
        lines: lines?,
        free_line_sequence: free_line_sequence?,
    })
}

fn cart_line(field: Field<'_>) -> Option<CartLineBody> {
    let line = field.object()?;
    let id = line.required("id", |f| f.text());
    let sku_id = line.required("skuId", |f| f.nullable(|f| f.parse_text(SkuId::parse)));
    let quantity = line.required("quantity", |f| f.integer(1, MAX_SAFE_INTEGER));
    let unit_price = line.required("unitPrice", |f| f.cents());
    let vat = line.required("vatRate", vat_rate);
    let free = line.required("free", |f| f.boolean());
    let custom = line.optional("custom", |f| f.boolean());
    let serial = line.optional("serial", |f| {
        let serial = f.object()?;
        let number = serial.required("serialNumber", |f| f.text());
        let months = serial.required("warrantyMonths", |f| f.integer(0, MAX_SAFE_INTEGER));
        Some(SerialBody {
            serial_number: number?,
            warranty_months: months?,
        })
    });
    let kit_id = line.optional("kitId", |f| f.text());
    let gift_card = line.optional("giftCard", |f| {
        let card = f.object()?;
        let code = card.required("code", |f| {
            f.string_as(&NotACode.to_string(), |text| InstrumentCode::parse(text).ok())
        });
        let action = card.required("action", |f| f.one_of(&choices(&CardAction::ALL, CardAction::as_str)));
        Some(GiftCardLineBody {
            code: code?,
            action: action?,
        })
    });
    Some(CartLineBody {
        id: id?,
        sku_id: sku_id?,
        quantity: quantity?,
        unit_price: unit_price?,
        vat_rate: vat?,
        free: free?,
        custom: custom?,
        serial: serial?,
        kit_id: kit_id?,
        gift_card: gift_card?,
    })
}

/// The ids of the cart's lines as sent, even when the cart has other problems, so that a
/// discount naming a missing line is reported in the same answer.
fn raw_line_ids(root: &Obj<'_>) -> HashSet<String> {
    let lines = root
        .raw("cart")
        .and_then(|cart| cart.get("lines"))
        .and_then(Value::as_array);
    let ids = lines
        .into_iter()
        .flatten()
        .filter_map(|l| l.get("id").and_then(Value::as_str));
    ids.map(str::to_owned).collect()
}

// What the bodies mean: the domain's requests, with the defaults applied.

impl From<SaleRequestBody> for SaleRequest {
    fn from(body: SaleRequestBody) -> SaleRequest {
        SaleRequest {
            transaction_id: body.transaction_id,
            number: body.number,
            store_id: body.store_id,
            seller_id: body.seller_id,
            customer_id: body.customer_id,
            session_id: body.session_id,
            register_id: body.register_id,
            kind: body.r#type.unwrap_or(SaleType::Sale),
            cart: body.cart.into(),
            declared_discounts: declared_discounts(body.declared_discounts),
            coupon_code: body.coupon_code,
            issued_at: body.issued_at,
            tenders: body.tenders.into(),
        }
    }
}

impl From<PriceRequestBody> for PriceRequest {
    fn from(body: PriceRequestBody) -> PriceRequest {
        PriceRequest {
            store_id: body.store_id,
            cart: body.cart.into(),
            declared_discounts: declared_discounts(body.declared_discounts),
            coupon_code: body.coupon_code,
            customer_id: body.customer_id,
            issued_at: body.issued_at,
        }
    }
}

fn declared_discounts(declared: Option<Vec<DeclaredDiscountBody>>) -> Vec<DeclaredDiscount> {
    declared
        .unwrap_or_default()
        .into_iter()
        .map(DeclaredDiscount::from)
        .collect()
}

impl From<CartBody> for Cart {
    fn from(body: CartBody) -> Cart {
        Cart {
            lines: body.lines.into_iter().map(CartLine::from).collect(),
            free_line_sequence: body.free_line_sequence,
        }
    }
}

impl From<CartLineBody> for CartLine {
    fn from(line: CartLineBody) -> CartLine {
        CartLine {
            id: line.id,
            sku_id: line.sku_id,
            quantity: line.quantity,
            unit_price: line.unit_price,
            vat_rate: line.vat_rate,
            free: line.free,
            custom: line.custom.unwrap_or(false),
            serial: line.serial.map(|serial| Serial {
                serial_number: serial.serial_number,
                warranty_months: serial.warranty_months,
            }),
            kit_id: line.kit_id,
            gift_card: line.gift_card.map(|card| GiftCardSale {
                code: card.code,
                action: card.action,
            }),
        }
    }
}
