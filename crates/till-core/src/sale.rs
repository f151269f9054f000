//! A sale as the till submits it, once parsed: every identifier typed, every amount in range.

use crate::canonical::fingerprint;
use crate::ids::{CouponCode, CustomerId, RegisterId, SessionId, SkuId, StoreId, Subject, TransactionId};
use crate::instant::format_utc;
use crate::money::{Bps, Cents, VatRate};
use jiff::Timestamp;
use serde_json::{Value, json};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaleType {
    Sale,
    Rental,
    Repair,
    Return,
}

impl SaleType {
    pub const ALL: [SaleType; 4] = [SaleType::Sale, SaleType::Rental, SaleType::Repair, SaleType::Return];

    pub fn as_str(self) -> &'static str {
        match self {
            SaleType::Sale => "sale",
            SaleType::Rental => "rental",
            SaleType::Repair => "repair",
            SaleType::Return => "return",
        }
    }

    /// The transaction type as the fiscal journal writes it.
    pub fn fiscal_code(self) -> &'static str {
        match self {
            SaleType::Sale => "SALE",
            SaleType::Rental => "RENTAL",
            SaleType::Repair => "REPAIR",
            SaleType::Return => "RETURN",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TenderMethod {
    Card,
    Cash,
    Cheque,
    MealVoucher,
    GiftCard,
    CreditNote,
    Loyalty,
    Installment,
}

impl TenderMethod {
    pub const ALL: [TenderMethod; 8] = [
        TenderMethod::Card,
        TenderMethod::Cash,
        TenderMethod::Cheque,
        TenderMethod::MealVoucher,
        TenderMethod::GiftCard,
        TenderMethod::CreditNote,
        TenderMethod::Loyalty,
        TenderMethod::Installment,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TenderMethod::Card => "card",
            TenderMethod::Cash => "cash",
            TenderMethod::Cheque => "cheque",
            TenderMethod::MealVoucher => "meal_voucher",
            TenderMethod::GiftCard => "gift_card",
            TenderMethod::CreditNote => "credit_note",
            TenderMethod::Loyalty => "loyalty",
            TenderMethod::Installment => "installment",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiscountReason {
    ManualMarkdown,
    Promotional,
    LoyaltyReward,
    DamagedGoods,
    ManagerGoodwill,
}

impl DiscountReason {
    pub const ALL: [DiscountReason; 5] = [
        DiscountReason::ManualMarkdown,
        DiscountReason::Promotional,
        DiscountReason::LoyaltyReward,
        DiscountReason::DamagedGoods,
        DiscountReason::ManagerGoodwill,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DiscountReason::ManualMarkdown => "manual_markdown",
            DiscountReason::Promotional => "promotional",
            DiscountReason::LoyaltyReward => "loyalty_reward",
            DiscountReason::DamagedGoods => "damaged_goods",
            DiscountReason::ManagerGoodwill => "manager_goodwill",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Serial {
    pub serial_number: String,
    pub warranty_months: i64,
}

/// One line of the cart. Its `unit_price` and `vat_rate` are the till's belief; the server
/// prices catalog lines from its own authority.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CartLine {
    pub id: String,
    pub sku_id: Option<SkuId>,
    pub quantity: i64,
    pub unit_price: Cents,
    pub vat_rate: VatRate,
    /// Recorded with the line; it does not change the price (a gift is a 100 % line discount,
    /// which needs the authority to grant it).
    pub free: bool,
    /// Self-priced (free-text article, gift card): trusted at its own price, no stock.
    pub custom: bool,
    pub serial: Option<Serial>,
    pub kit_id: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cart {
    pub lines: Vec<CartLine>,
    pub free_line_sequence: i64,
}

/// A reduction the till declares; it needs the authority to grant it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeclaredDiscount {
    pub id: String,
    pub reason: DiscountReason,
    pub kind: DeclaredKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeclaredKind {
    LinePercent { line_id: String, percent: Bps },
    TicketPercent { percent: Bps },
    TicketAmount { amount: Cents },
}

impl DeclaredDiscount {
    pub fn is_line_scoped(&self) -> bool {
        matches!(self.kind, DeclaredKind::LinePercent { .. })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tender {
    pub id: String,
    pub method: TenderMethod,
    pub applied: Cents,
    pub presented: Cents,
    pub change: Cents,
    pub forfeited: Cents,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TenderSet {
    pub amount_due: Cents,
    pub tenders: Vec<Tender>,
    pub sequence: i64,
}

/// A finalize request, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaleRequest {
    pub transaction_id: TransactionId,
    pub number: String,
    pub store_id: StoreId,
    pub seller_id: Subject,
    pub customer_id: Option<CustomerId>,
    pub session_id: SessionId,
    pub register_id: Option<RegisterId>,
    pub kind: SaleType,
    pub cart: Cart,
    pub declared_discounts: Vec<DeclaredDiscount>,
    pub coupon_code: Option<CouponCode>,
    pub issued_at: Option<Timestamp>,
    pub tenders: TenderSet,
}

impl SaleRequest {
    /// The request in canonical form: defaults applied, instants and rates normalized, unknown
    /// fields gone. Two requests meaning the same sale have the same canonical form.
    pub fn canonical(&self) -> Value {
        let lines: Vec<Value> = self
            .cart
            .lines
            .iter()
            .map(|line| {
                json!({
                    "id": line.id,
                    "skuId": line.sku_id.as_ref().map(SkuId::as_str),
                    "quantity": line.quantity,
                    "unitPrice": line.unit_price,
                    "vatRate": line.vat_rate.hundredths(),
                    "free": line.free,
                    "custom": line.custom,
                    "serial": line.serial.as_ref().map(|s| json!({"serialNumber": s.serial_number, "warrantyMonths": s.warranty_months})),
                    "kitId": line.kit_id,
                })
            })
            .collect();
        let discounts: Vec<Value> = self
            .declared_discounts
            .iter()
            .map(|d| {
                let mut value = json!({"id": d.id, "reason": d.reason.as_str()});
                let shape = match &d.kind {
                    DeclaredKind::LinePercent { line_id, percent } => {
                        json!({"scope": "line", "basis": "percent", "lineId": line_id, "percentBps": percent})
                    }
                    DeclaredKind::TicketPercent { percent } => {
                        json!({"scope": "ticket", "basis": "percent", "percentBps": percent})
                    }
                    DeclaredKind::TicketAmount { amount } => {
                        json!({"scope": "ticket", "basis": "amount", "amountCents": amount})
                    }
                };
                if let (Value::Object(target), Value::Object(extra)) = (&mut value, shape) {
                    target.extend(extra);
                }
                value
            })
            .collect();
        json!({
            "transactionId": self.transaction_id,
            "number": self.number,
            "storeId": self.store_id,
            "sellerId": self.seller_id,
            "customerId": self.customer_id,
            "sessionId": self.session_id,
            "registerId": self.register_id,
            "type": self.kind.as_str(),
            "cart": {"lines": lines, "freeLineSequence": self.cart.free_line_sequence},
            "declaredDiscounts": discounts,
            "couponCode": self.coupon_code,
            "issuedAt": self.issued_at.map(format_utc),
            "tenders": self.tenders.canonical(),
        })
    }

    /// SHA-256 of the canonical form, in hex: what idempotency compares.
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.canonical())
    }
}

impl TenderSet {
    /// The tender set in canonical form, as request fingerprints include it.
    pub fn canonical(&self) -> Value {
        let tenders: Vec<Value> = self
            .tenders
            .iter()
            .map(|t| {
                json!({"id": t.id, "method": t.method.as_str(), "applied": t.applied, "presented": t.presented,
                       "change": t.change, "forfeited": t.forfeited})
            })
            .collect();
        json!({"amountDue": self.amount_due, "tenders": tenders, "sequence": self.sequence})
    }
}
