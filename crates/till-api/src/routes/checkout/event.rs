//! The sale event: the 201 body of finalize, stored and replayed byte for byte. Its shape is
//! the interface document's, with no property beyond it at any level. Written from the sale as
//! it is committed, before the commit (see [`TicketAnswers`]).

use crate::routes::checkout::coupon_block;
use serde::Serialize;
use till_app::Answers;
use till_app::sales::{NewSale, ReturnOf};
use till_core::canonical::to_compact_string;
use till_core::committed::SaleAnswer;
use till_core::ids::SkuId;
use till_core::instant::format_utc;
use till_core::pricing::CouponEffect;
use till_core::sale::{Cart, SALE_TEXT_BYTES};

/// Writes the answers tickets are committed with: a sale's event, a return's (see
/// [`crate::routes::returns::return_answer`]).
pub struct TicketAnswers;

impl Answers for TicketAnswers {
    fn sale(&self, sale: &NewSale, cart: &Cart, coupon: Option<&CouponEffect>) -> Result<String, serde_json::Error> {
        to_compact_string(&SaleEvent::new(sale, cart, coupon), SALE_TEXT_BYTES)
    }

    fn return_ticket(&self, ticket: &NewSale, original: &ReturnOf) -> SaleAnswer {
        crate::routes::returns::return_answer(ticket, original)
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaleEvent<'a> {
    /// The server's own id of this event.
    pub id: &'a str,
    /// The register whose chain sealed the ticket.
    pub register_id: &'a str,
    pub transaction: SaleTransaction,
    pub ticket: Ticket,
    pub loyalty: Loyalty,
    /// One per article sold; custom lines move no stock.
    pub stock_movements: Vec<StockMovement>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coupon: Option<CouponBlock>,
    /// The commit instant, UTC.
    pub emitted_at: String,
}

impl<'a> SaleEvent<'a> {
    fn new(sale: &'a NewSale, cart: &Cart, coupon: Option<&CouponEffect>) -> SaleEvent<'a> {
        let customer = sale.customer_id.as_ref().map(|c| c.as_str().to_owned());
        SaleEvent {
            id: &sale.event_id,
            register_id: sale.register_id.as_str(),
            transaction: SaleTransaction {
                id: sale.transaction_id.as_str().to_owned(),
                number: sale.number.clone(),
                store_id: sale.store_id.as_str().to_owned(),
                seller_id: sale.seller_id.as_str().to_owned(),
                customer_id: customer.clone(),
                status: "completed".to_owned(),
                r#type: sale.kind.as_str().to_owned(),
                lines: sale
                    .lines
                    .iter()
                    .zip(&cart.lines)
                    .map(|(line, carted)| TransactionLine {
                        sku_id: reported_sku(line.sku_id.as_ref()).to_owned(),
                        quantity: line.quantity,
                        unit_price: line.unit_price.get(),
                        serial: carted.serial.as_ref().map(|s| SerialView {
                            serial_number: s.serial_number.clone(),
                            warranty_months: s.warranty_months,
                        }),
                    })
                    .collect(),
                totals: Totals::of(sale),
            },
            ticket: Ticket::of(sale, customer.clone()),
            loyalty: Loyalty {
                customer_id: customer,
                points_earned: sale.points_earned,
            },
            stock_movements: stock_movements(&sale.stock_moves),
            coupon: coupon.map(coupon_block),
            emitted_at: format_utc(sale.emitted_at),
        }
    }
}

/// The article a committed line reports: its own, or 64 zeros for a custom line.
pub(crate) fn reported_sku(sku: Option<&SkuId>) -> &str {
    sku.map_or(SkuId::CUSTOM, SkuId::as_str)
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaleTransaction {
    /// The request's transactionId.
    pub id: String,
    pub number: String,
    pub store_id: String,
    pub seller_id: String,
    pub customer_id: Option<String>,
    /// `completed`.
    pub status: String,
    pub r#type: String,
    pub lines: Vec<TransactionLine>,
    pub totals: Totals,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransactionLine {
    /// The article; 64 zeros for a custom line.
    #[schema(pattern = "^[0-9a-f]{64}$")]
    pub sku_id: String,
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    pub quantity: i64,
    /// The authority's unit price in cents (the line's own for a custom line).
    #[schema(value_type = f64, minimum = 0)]
    pub unit_price: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<SerialView>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SerialView {
    #[schema(min_length = 1)]
    pub serial_number: String,
    #[schema(minimum = 0, maximum = 9007199254740991_i64)]
    pub warranty_months: i64,
}

#[derive(Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Totals {
    /// Authority prices times quantities, before any reduction.
    pub subtotal: i64,
    /// What the customer pays: the sum of line nets.
    pub total: i64,
    /// Units sold.
    pub item_count: i64,
    pub line_count: i64,
}

impl Totals {
    /// A committed ticket's totals, with its sign.
    pub(crate) fn of(ticket: &NewSale) -> Totals {
        Totals {
            subtotal: ticket.subtotal.get(),
            total: ticket.total.get(),
            item_count: ticket.item_count,
            line_count: ticket.lines.len() as i64,
        }
    }
}

#[derive(Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ticket {
    pub number: String,
    pub store_id: String,
    pub seller_id: String,
    pub customer_id: Option<String>,
    pub subtotal_cents: i64,
    pub total_cents: i64,
    pub item_count: i64,
    pub tenders: Vec<TicketTender>,
    pub change_cents: i64,
}

impl Ticket {
    /// A committed ticket as the customer's receipt sums it up, with its sign.
    pub(crate) fn of(ticket: &NewSale, customer_id: Option<String>) -> Ticket {
        Ticket {
            number: ticket.number.clone(),
            store_id: ticket.store_id.as_str().to_owned(),
            seller_id: ticket.seller_id.as_str().to_owned(),
            customer_id,
            subtotal_cents: ticket.subtotal.get(),
            total_cents: ticket.total.get(),
            item_count: ticket.item_count,
            tenders: ticket
                .tenders
                .iter()
                .map(|t| TicketTender {
                    method: t.method.as_str().to_owned(),
                    applied_cents: t.applied.get(),
                })
                .collect(),
            change_cents: ticket.change.get(),
        }
    }
}

#[derive(Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TicketTender {
    pub method: String,
    pub applied_cents: i64,
}

#[derive(Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Loyalty {
    pub customer_id: Option<String>,
    pub points_earned: i64,
}

#[derive(Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StockMovement {
    pub sku_id: String,
    /// Negative for units sold.
    pub delta_quantity: i64,
}

/// The stock block: one movement per article, in SKU order.
pub(crate) fn stock_movements(moves: &[(SkuId, i64)]) -> Vec<StockMovement> {
    moves
        .iter()
        .map(|(sku, delta)| StockMovement {
            sku_id: sku.as_str().to_owned(),
            delta_quantity: *delta,
        })
        .collect()
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CouponBlock {
    pub code: String,
    /// The running total the coupon applied to.
    pub basket_cents: i64,
    pub discount_amount_cents: i64,
}
