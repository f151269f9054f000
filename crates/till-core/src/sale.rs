//! A sale as the till submits it, once parsed: every identifier typed, every amount in range.

use crate::canonical::fingerprint;
use crate::ids::{
    CouponCode, CustomerId, RegisterId, SessionId, SkuId, StoreId, Subject, TenderReference, TransactionId,
};
use crate::instant::format_utc;
use crate::money::{Bps, Cents, VatRate};
use crate::stored_value::GiftCardSale;
use jiff::Timestamp;

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

    pub fn parse(text: &str) -> Option<TenderMethod> {
        TenderMethod::ALL.into_iter().find(|method| method.as_str() == text)
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
    /// On a custom line at VAT 0: the gift card it sells (activates or loads).
    pub gift_card: Option<GiftCardSale>,
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
    /// The instrument the tender draws on: a gift card's code, a credit note's number.
    pub reference: Option<TenderReference>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TenderSet {
    pub amount_due: Cents,
    pub tenders: Vec<Tender>,
    pub sequence: i64,
}

/// Room to write a sale's stored texts (its answer, its detail) without regrowing: a sale of
/// ten lines fits.
pub const SALE_TEXT_BYTES: usize = 4096;

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
    /// SHA-256 of the request's canonical form, in hex: what idempotency compares. The form has
    /// defaults applied, instants and rates normalized and unknown fields gone, so two requests
    /// meaning the same sale have the same fingerprint.
    pub fn fingerprint(&self) -> String {
        fingerprint(&canonical_form::Request::of(self))
    }
}

/// The canonical form of a finalize request, written straight from the parsed request.
/// serde writes a struct's fields in the order they are declared, so every struct here
/// declares them in the byte order of their JSON names, the order canonical JSON sorts keys
/// in. The bytes are those of the `Value` this form was once built as (a test compares them),
/// since fingerprints stored with earlier sales must still match their replays.
pub(crate) mod canonical_form {
    use super::{Bps, CartLine, Cents, DeclaredDiscount, DeclaredKind, SaleRequest, Tender, TenderSet, format_utc};
    use serde::Serialize;

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub(super) struct Request<'a> {
        cart: Cart<'a>,
        coupon_code: Option<&'a str>,
        customer_id: Option<&'a str>,
        declared_discounts: Vec<Discount<'a>>,
        issued_at: Option<String>,
        number: &'a str,
        register_id: Option<&'a str>,
        seller_id: &'a str,
        session_id: &'a str,
        store_id: &'a str,
        tenders: Tenders<'a>,
        transaction_id: &'a str,
        #[serde(rename = "type")]
        kind: &'static str,
    }

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Cart<'a> {
        free_line_sequence: i64,
        lines: Vec<Line<'a>>,
    }

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Line<'a> {
        custom: bool,
        free: bool,
        /// Left out when absent, so that requests from before gift cards keep their
        /// fingerprint.
        #[serde(skip_serializing_if = "Option::is_none")]
        gift_card: Option<GiftCard<'a>>,
        id: &'a str,
        kit_id: Option<&'a str>,
        quantity: i64,
        serial: Option<Serial<'a>>,
        sku_id: Option<&'a str>,
        unit_price: Cents,
        vat_rate: i64,
    }

    #[derive(Serialize)]
    struct GiftCard<'a> {
        action: &'static str,
        code: &'a str,
    }

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Serial<'a> {
        serial_number: &'a str,
        warranty_months: i64,
    }

    /// One object for every kind of declared discount: the fields a kind does not have are
    /// left out, not written as null.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Discount<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        amount_cents: Option<Cents>,
        basis: &'static str,
        id: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        line_id: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        percent_bps: Option<Bps>,
        reason: &'static str,
        scope: &'static str,
    }

    /// The tender set, which a return's canonical form holds too.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub(crate) struct Tenders<'a> {
        amount_due: Cents,
        sequence: i64,
        tenders: Vec<TenderForm<'a>>,
    }

    #[derive(Serialize)]
    struct TenderForm<'a> {
        applied: Cents,
        change: Cents,
        forfeited: Cents,
        id: &'a str,
        method: &'static str,
        presented: Cents,
        /// Left out when absent, so that requests from before references keep their
        /// fingerprint.
        #[serde(skip_serializing_if = "Option::is_none")]
        reference: Option<&'a str>,
    }

    impl<'a> Request<'a> {
        pub(super) fn of(request: &'a SaleRequest) -> Request<'a> {
            Request {
                cart: Cart {
                    free_line_sequence: request.cart.free_line_sequence,
                    lines: request.cart.lines.iter().map(Line::of).collect(),
                },
                coupon_code: request.coupon_code.as_ref().map(|c| c.as_str()),
                customer_id: request.customer_id.as_ref().map(|c| c.as_str()),
                declared_discounts: request.declared_discounts.iter().map(Discount::of).collect(),
                issued_at: request.issued_at.map(format_utc),
                number: &request.number,
                register_id: request.register_id.as_ref().map(|r| r.as_str()),
                seller_id: request.seller_id.as_str(),
                session_id: request.session_id.as_str(),
                store_id: request.store_id.as_str(),
                tenders: Tenders::of(&request.tenders),
                transaction_id: request.transaction_id.as_str(),
                kind: request.kind.as_str(),
            }
        }
    }

    impl<'a> Line<'a> {
        fn of(line: &'a CartLine) -> Line<'a> {
            Line {
                custom: line.custom,
                free: line.free,
                gift_card: line.gift_card.as_ref().map(|card| GiftCard {
                    action: card.action.as_str(),
                    code: card.code.as_str(),
                }),
                id: &line.id,
                kit_id: line.kit_id.as_deref(),
                quantity: line.quantity,
                serial: line.serial.as_ref().map(|s| Serial {
                    serial_number: &s.serial_number,
                    warranty_months: s.warranty_months,
                }),
                sku_id: line.sku_id.as_ref().map(|s| s.as_str()),
                unit_price: line.unit_price,
                vat_rate: line.vat_rate.hundredths(),
            }
        }
    }

    impl<'a> Discount<'a> {
        fn of(discount: &'a DeclaredDiscount) -> Discount<'a> {
            let (scope, basis, line_id, percent_bps, amount_cents) = match &discount.kind {
                DeclaredKind::LinePercent { line_id, percent } => {
                    ("line", "percent", Some(line_id.as_str()), Some(*percent), None)
                }
                DeclaredKind::TicketPercent { percent } => ("ticket", "percent", None, Some(*percent), None),
                DeclaredKind::TicketAmount { amount } => ("ticket", "amount", None, None, Some(*amount)),
            };
            Discount {
                amount_cents,
                basis,
                id: &discount.id,
                line_id,
                percent_bps,
                reason: discount.reason.as_str(),
                scope,
            }
        }
    }

    impl<'a> Tenders<'a> {
        pub(crate) fn of(set: &'a TenderSet) -> Tenders<'a> {
            Tenders {
                amount_due: set.amount_due,
                sequence: set.sequence,
                tenders: set.tenders.iter().map(TenderForm::of).collect(),
            }
        }
    }

    impl<'a> TenderForm<'a> {
        fn of(tender: &'a Tender) -> TenderForm<'a> {
            TenderForm {
                applied: tender.applied,
                change: tender.change,
                forfeited: tender.forfeited,
                id: &tender.id,
                method: tender.method.as_str(),
                presented: tender.presented,
                reference: tender.reference.as_ref().map(|r| r.as_str()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// The canonical form as it was first built, key by key, as a `Value`: the oracle the
    /// typed form must match byte for byte.
    fn canonical_value(request: &SaleRequest) -> Value {
        let lines: Vec<Value> = request
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
        let discounts: Vec<Value> = request
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
        let tenders: Vec<Value> = request
            .tenders
            .tenders
            .iter()
            .map(|t| {
                json!({"id": t.id, "method": t.method.as_str(), "applied": t.applied, "presented": t.presented,
                       "change": t.change, "forfeited": t.forfeited})
            })
            .collect();
        json!({
            "transactionId": request.transaction_id,
            "number": request.number,
            "storeId": request.store_id,
            "sellerId": request.seller_id,
            "customerId": request.customer_id,
            "sessionId": request.session_id,
            "registerId": request.register_id,
            "type": request.kind.as_str(),
            "cart": {"lines": lines, "freeLineSequence": request.cart.free_line_sequence},
            "declaredDiscounts": discounts,
            "couponCode": request.coupon_code,
            "issuedAt": request.issued_at.map(format_utc),
            "tenders": {"amountDue": request.tenders.amount_due, "tenders": tenders,
                        "sequence": request.tenders.sequence},
        })
    }

    fn cents(value: i64) -> Cents {
        Cents::new(value).unwrap()
    }

    fn line(id: &str, sku: Option<u32>) -> CartLine {
        CartLine {
            id: id.into(),
            sku_id: sku.map(|n| SkuId::parse(&format!("{n:064x}")).unwrap()),
            quantity: 2,
            unit_price: cents(995),
            vat_rate: VatRate::from_percent(5.5).unwrap(),
            free: false,
            custom: sku.is_none(),
            serial: None,
            kit_id: None,
            gift_card: None,
        }
    }

    /// Every optional part present, every kind of declared discount, text that needs escaping.
    fn full() -> SaleRequest {
        let mut serialized = line("l2", Some(2));
        serialized.serial = Some(Serial {
            serial_number: "SN \"42\"\n".into(),
            warranty_months: 24,
        });
        serialized.kit_id = Some("kit-é".into());
        serialized.free = true;
        SaleRequest {
            transaction_id: TransactionId::parse("tx-1").unwrap(),
            number: "T-0001".into(),
            store_id: StoreId::parse("store-1").unwrap(),
            seller_id: Subject::parse("cashier-1").unwrap(),
            customer_id: Some(CustomerId::parse("cust-1").unwrap()),
            session_id: SessionId::parse("ses-1").unwrap(),
            register_id: Some(RegisterId::parse("reg-1").unwrap()),
            kind: SaleType::Return,
            cart: Cart {
                lines: vec![line("l1", Some(1)), serialized, line("c1", None)],
                free_line_sequence: 3,
            },
            declared_discounts: vec![
                DeclaredDiscount {
                    id: "d1".into(),
                    reason: DiscountReason::DamagedGoods,
                    kind: DeclaredKind::LinePercent {
                        line_id: "l1".into(),
                        percent: Bps::new(1_500).unwrap(),
                    },
                },
                DeclaredDiscount {
                    id: "d2".into(),
                    reason: DiscountReason::Promotional,
                    kind: DeclaredKind::TicketPercent {
                        percent: Bps::new(500).unwrap(),
                    },
                },
                DeclaredDiscount {
                    id: "d3".into(),
                    reason: DiscountReason::ManagerGoodwill,
                    kind: DeclaredKind::TicketAmount { amount: cents(250) },
                },
            ],
            coupon_code: Some(CouponCode::parse("WELCOME10").unwrap()),
            issued_at: Some("2026-11-23T10:15:30.123456Z".parse().unwrap()),
            tenders: TenderSet {
                amount_due: cents(4_000),
                tenders: vec![
                    Tender {
                        id: "p1".into(),
                        method: TenderMethod::Cash,
                        applied: cents(1_000),
                        presented: cents(2_000),
                        change: cents(1_000),
                        forfeited: Cents::ZERO,
                        reference: None,
                    },
                    Tender {
                        id: "p2".into(),
                        method: TenderMethod::MealVoucher,
                        applied: cents(3_000),
                        presented: cents(3_100),
                        change: Cents::ZERO,
                        forfeited: cents(100),
                        reference: None,
                    },
                ],
                sequence: 2,
            },
        }
    }

    /// Nothing optional: no customer, register, coupon, instant, discount or serial.
    fn bare() -> SaleRequest {
        let mut request = full();
        request.customer_id = None;
        request.register_id = None;
        request.coupon_code = None;
        request.issued_at = None;
        request.declared_discounts.clear();
        request.kind = SaleType::Sale;
        request.cart.lines = vec![line("l1", Some(1))];
        request.tenders.tenders.truncate(1);
        request
    }

    #[test]
    fn the_typed_canonical_form_writes_the_bytes_the_value_form_did() {
        for request in [full(), bare()] {
            let typed = serde_json::to_string(&canonical_form::Request::of(&request)).unwrap();
            assert_eq!(typed, canonical_value(&request).to_string());
        }
    }

    #[test]
    fn a_fingerprint_stored_before_the_typed_form_still_matches() {
        // Computed with the `Value` form (`canonical_value` above), which fingerprints used
        // before the typed form replaced it.
        assert_eq!(
            full().fingerprint(),
            "40377c671cb9cee26d9cc75d3927a8a0c42444bfbd8381d9409dc2aa7797755e"
        );
        assert_eq!(
            bare().fingerprint(),
            "63267f5ff56e67ae33cc33d71242e8d974d78d77b7fc60dffde5ef280859941c"
        );
    }
}
