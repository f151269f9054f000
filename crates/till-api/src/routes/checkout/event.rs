//! The sale event: the 201 body of finalize, stored and replayed byte for byte. Its shape is
//! the interface document's, with no property beyond it at any level.

use serde::Serialize;

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaleEvent {
    /// The server's own id of this event.
    pub id: String,
    /// The register whose chain sealed the ticket.
    pub register_id: String,
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

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CouponBlock {
    pub code: String,
    /// The running total the coupon applied to.
    pub basket_cents: i64,
    pub discount_amount_cents: i64,
}
