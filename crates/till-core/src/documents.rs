//! What storage writes as JSON inside its transactions: the feed's event payloads and the
//! shift report kept with a closed session. Declared here so that storage builds none of
//! them by hand and the API answers the very same shapes (docs/architecture.md).

use crate::drawer::ShiftReport;
use crate::fiscal::payload::{ClosureRecord, LateTickets, Period, SaleRecordVat, ShiftCardPayments};
use crate::ids::{MovementId, RegisterId, SessionId, SkuId, StoreId, Subject};
use crate::instant::{format_utc, from_micros};
use crate::money::{Cents, VatRate};
use crate::promotions::PromotionRule;
use crate::stock::TransferRecord;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

// One rate of a VAT breakdown, the rate written as a percentage (`20`, `5.5`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = VatView))]
pub struct VatShare {
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>, required = true))]
    pub vat_rate: Option<serde_json::Number>,
    pub total_cents: i64,
    pub vat_cents: i64,
}

impl From<&SaleRecordVat> for VatShare {
    fn from(v: &SaleRecordVat) -> Self {
        VatShare {
            vat_rate: VatRate::from_hundredths(v.vat_rate).map(VatRate::as_json_number),
            total_cents: v.total_cents,
            vat_cents: v.vat_cents,
        }
    }
}

/// `session.opened`: the session as its read answers it while open.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionOpened<'a> {
    pub session_id: &'a SessionId,
    pub store_id: &'a StoreId,
    pub register_id: &'a RegisterId,
    pub cashier_subject: &'a Subject,
    pub status: &'static str,
    pub opening_float_cents: Cents,
    pub opened_at: Timestamp,
    pub expires_at: Timestamp,
}

/// `period.closed`: a closure as the register's list of closures answers it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PeriodClosed<'a> {
    pub register_id: &'a str,
    pub seq: i64,
    pub period: Period,
    pub period_from: &'a str,
    pub period_to: &'a str,
    pub ticket_count: i64,
    pub first_ticket_seq: i64,
    pub last_ticket_seq: i64,
    pub total_cents: i64,
    pub abs_total_cents: i64,
    pub grand_total_cents: i64,
    pub grand_total_abs_cents: i64,
    pub vat: Vec<VatShare>,
    pub closed_at: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late: Option<LateTickets>,
}

impl<'a> PeriodClosed<'a> {
    /// The closure `record`, sealed at `seq` of its register's closure chain.
    pub fn of(record: &'a ClosureRecord, seq: i64) -> Self {
        PeriodClosed {
            register_id: &record.register_id,
            seq,
            period: record.period,
            period_from: &record.period_from,
            period_to: &record.period_to,
            ticket_count: record.ticket_count,
            first_ticket_seq: record.first_ticket_seq,
            last_ticket_seq: record.last_ticket_seq,
            total_cents: record.total_cents,
            abs_total_cents: record.abs_total_cents,
            grand_total_cents: record.grand_total_cents,
            grand_total_abs_cents: record.grand_total_abs_cents,
            vat: record.vat.iter().map(VatShare::from).collect(),
            closed_at: from_micros(record.closed_at),
            late: record.late,
        }
    }
}

/// `promotion.changed`: the rule as written, with its version.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromotionChanged<'a> {
    pub promotion_id: &'a str,
    pub version: i64,
    pub active: bool,
    pub rule: &'a PromotionRule,
    pub updated_at: Timestamp,
}

/// `store_price.changed`: a store's own price of an article was set, scheduled or removed.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StorePriceChanged<'a> {
    pub store_id: &'a str,
    pub sku_id: &'a str,
}

/// `coupon.changed`: a coupon's terms were written.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CouponChanged<'a> {
    pub code: &'a str,
}

/// `customer.changed`: a customer was enrolled or changed, by id alone: what changed is
/// personal data, which the feed never carries.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomerChanged<'a> {
    pub customer_id: &'a str,
}

/// `stock.adjusted`: a counted level as the stock read answers it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StockAdjusted<'a> {
    pub store_id: &'a StoreId,
    pub sku_id: &'a SkuId,
    pub on_hand: i64,
    pub updated_at: Timestamp,
}

/// `giftcard.changed`: what happened to a card, named by its code's digest and last four
/// characters, never by its code.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GiftCardChanged<'a> {
    pub code_sha256: &'a str,
    pub last4: &'a str,
    pub activity: &'static str,
    pub amount_cents: i64,
    pub balance_cents: i64,
    pub transaction_id: Option<&'a str>,
}

/// `creditnote.issued`: the note a return gave, by its printed number.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreditNoteIssued<'a> {
    pub number: &'a str,
    pub amount_cents: i64,
    pub expires_at: Option<Timestamp>,
    pub transaction_id: &'a str,
}

/// A cash movement as the API answers it and the feed's `cash.moved` carries it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = CashMovementView, description = "A movement as recorded."))]
pub struct CashMoved<'a> {
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub movement_id: &'a MovementId,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub session_id: &'a SessionId,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub store_id: &'a StoreId,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub register_id: &'a RegisterId,
    #[cfg_attr(feature = "openapi", schema(schema_with = movement_kinds))]
    pub kind: &'static str,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub amount_cents: Cents,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub reason: Option<&'a str>,
    /// Who recorded it: the till's cashier or the back-office caller.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub recorded_by: &'a Subject,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub occurred_at: Timestamp,
    /// Its technical event in the register's journal.
    pub fiscal: EventSeal,
}

#[cfg(feature = "openapi")]
fn movement_kinds() -> utoipa::openapi::schema::Schema {
    crate::openapi::words(
        crate::drawer::MovementKind::ALL.iter().map(|kind| kind.as_str()),
        "`paid_in`, `paid_out`, `drop` or `no_sale`.",
    )
}

// Where a technical event sits in its register's chain of events.
#[derive(Clone, Copy, Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = MovementSeal))]
pub struct EventSeal {
    /// `event`.
    pub chain: &'static str,
    pub seq: i64,
}

impl EventSeal {
    pub fn at(seq: i64) -> Self {
        EventSeal { chain: "event", seq }
    }
}

// A shift's reports: the X report while the shift runs, the Z report at the close, kept with
// its session and answered again as kept. One function of the same figures makes both.

/// The X report of an open session: its Z report so far, neither counted nor sealed.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = XReportBody))]
pub struct XReport {
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub session_id: SessionId,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub store_id: StoreId,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub register_id: RegisterId,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub cashier_subject: Subject,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub opened_at: Timestamp,
    /// When the report was made.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub reported_at: Timestamp,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub opening_float_cents: Cents,
    pub sales_count: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub total_cents: Cents,
    pub tenders: Vec<ShiftTender>,
    pub vat: Vec<VatShare>,
    pub movements: ShiftMovements,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub expected_cash_cents: Cents,
    /// Late sales of the register received so far, shown apart (as in [`ZReportBody`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_sales: Option<ShiftLateSales>,
    /// The shift's card payment attempts so far, per terminal and provider.
    pub card_payments: Vec<ShiftCardPayments>,
}

/// The Z report of a closed session: what was booked on it, per tender method and VAT rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ZReportBody))]
pub struct ZReport {
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub session_id: SessionId,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub store_id: StoreId,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub register_id: RegisterId,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub cashier_subject: Subject,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub opened_at: Timestamp,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub closed_at: Timestamp,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub opening_float_cents: Cents,
    pub sales_count: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub total_cents: Cents,
    /// Each tender method used, counted, or (cash) expected in the drawer, by name.
    pub tenders: Vec<ShiftTender>,
    /// Per VAT rate.
    pub vat: Vec<VatShare>,
    /// The drawer's movements besides sales.
    pub movements: ShiftMovements,
    /// Opening float, plus cash kept from sales, plus money paid in, less money paid out and
    /// dropped.
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub expected_cash_cents: Cents,
    /// Present when late sales arrived since the register's previous Z report: sales of
    /// sessions already closed, from a till that was offline. They are in no shift's totals and
    /// change nothing this drawer should hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_sales: Option<ShiftLateSales>,
    /// The shift's card payment attempts per terminal and provider, as they stood at the
    /// close: what the terminals approved, what sales captured, what returns refunded, and
    /// the orphans, voids and answers still lost. Sealed with the report.
    #[serde(default)]
    pub card_payments: Vec<ShiftCardPayments>,
    /// Where the report is sealed in the register's journal.
    pub fiscal: ClosureSeal,
}

// One tender method of a shift: what it took, what it should hold and, when counted, the
// count and the difference.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ZReportTender))]
pub struct ShiftTender {
    pub method: String,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub applied_cents: Cents,
    /// What the method should hold: for cash, the expected cash; otherwise what it took.
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub expected_cents: Cents,
    /// Present when the method was counted at the close.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub counted_cents: Option<Cents>,
    /// Counted minus expected, when counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub difference_cents: Option<Cents>,
}

/// A shift's drawer movements, added up by kind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = DrawerMovements))]
pub struct ShiftMovements {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub paid_in_cents: Cents,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub paid_out_cents: Cents,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub drop_cents: Cents,
    pub no_sale_count: i64,
}

/// Late sales shown apart in a shift report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = LateSalesView))]
pub struct ShiftLateSales {
    pub sales_count: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub total_cents: Cents,
    /// What each tender method took on them.
    pub tenders: Vec<ShiftTaking>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = LateSalesTender))]
pub struct ShiftTaking {
    pub method: String,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub applied_cents: Cents,
}

// Where a Z report is sealed in its register's closure chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ZReportSeal))]
pub struct ClosureSeal {
    /// `closure`.
    pub chain: String,
    pub seq: i64,
    pub signature: String,
    pub key_id: String,
}

/// Whose shift a report is about.
pub struct ShiftOf<'a> {
    pub session_id: &'a SessionId,
    pub store_id: &'a StoreId,
    pub register_id: &'a RegisterId,
    pub cashier_subject: &'a Subject,
    pub opened_at: Timestamp,
    pub opening_float: Cents,
}

/// What an X and a Z report share, made of the shift's report.
struct ShiftParts {
    tenders: Vec<ShiftTender>,
    vat: Vec<VatShare>,
    movements: ShiftMovements,
    late_sales: Option<ShiftLateSales>,
}

impl ShiftParts {
    fn of(report: &ShiftReport) -> ShiftParts {
        let movements = &report.movements;
        ShiftParts {
            tenders: report
                .tenders
                .iter()
                .map(|line| {
                    let counted = line.counted.zip(line.difference);
                    ShiftTender {
                        method: line.method.clone(),
                        applied_cents: line.applied,
                        expected_cents: line.expected,
                        counted_cents: counted.map(|(counted, _)| counted),
                        difference_cents: counted.map(|(_, difference)| difference),
                    }
                })
                .collect(),
            vat: report.vat.iter().map(VatShare::from).collect(),
            movements: ShiftMovements {
                paid_in_cents: movements.paid_in,
                paid_out_cents: movements.paid_out,
                drop_cents: movements.drops,
                no_sale_count: movements.no_sales,
            },
            late_sales: report.late.as_ref().map(|late| ShiftLateSales {
                sales_count: late.sales_count,
                total_cents: late.total,
                tenders: late
                    .takings
                    .iter()
                    .map(|taken| ShiftTaking {
                        method: taken.method.clone(),
                        applied_cents: taken.applied,
                    })
                    .collect(),
            }),
        }
    }
}

impl XReport {
    /// The report of `shift` as it stands at `at`.
    pub fn of(shift: ShiftOf<'_>, report: &ShiftReport, at: Timestamp) -> Self {
        let parts = ShiftParts::of(report);
        XReport {
            session_id: shift.session_id.clone(),
            store_id: shift.store_id.clone(),
            register_id: shift.register_id.clone(),
            cashier_subject: shift.cashier_subject.clone(),
            opened_at: shift.opened_at,
            reported_at: at,
            opening_float_cents: shift.opening_float,
            sales_count: report.sales_count,
            total_cents: report.total,
            tenders: parts.tenders,
            vat: parts.vat,
            movements: parts.movements,
            expected_cash_cents: report.expected_cash,
            late_sales: parts.late_sales,
            card_payments: report.card_payments(),
        }
    }
}

impl ZReport {
    /// The report of `shift` closed at `closed_at`, sealed where `seal` says.
    pub fn of(shift: ShiftOf<'_>, report: &ShiftReport, closed_at: Timestamp, seal: ClosureSeal) -> Self {
        let parts = ShiftParts::of(report);
        ZReport {
            session_id: shift.session_id.clone(),
            store_id: shift.store_id.clone(),
            register_id: shift.register_id.clone(),
            cashier_subject: shift.cashier_subject.clone(),
            opened_at: shift.opened_at,
            closed_at,
            opening_float_cents: shift.opening_float,
            sales_count: report.sales_count,
            total_cents: report.total,
            tenders: parts.tenders,
            vat: parts.vat,
            movements: parts.movements,
            expected_cash_cents: report.expected_cash,
            late_sales: parts.late_sales,
            card_payments: report.card_payments(),
            fiscal: seal,
        }
    }
}

/// A transfer as the API answers it and the feed's `stock.transferred` carries it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = TransferView, description = "A transfer as recorded."))]
pub struct TransferAnswer {
    pub transfer_id: String,
    pub from_store_id: String,
    pub to_store_id: String,
    #[cfg_attr(feature = "openapi", schema(inline))]
    pub status: TransferStatus,
    /// In the order sent.
    pub lines: Vec<TransferLineAnswer>,
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::UtcInstant))]
    pub sent_at: String,
    /// Null until received.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::openapi::UtcInstant>))]
    pub received_at: Option<String>,
}

// A transfer is `sent`, then `received`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum TransferStatus {
    Sent,
    Received,
}

// One article of a transfer: what was sent and, once received, what arrived.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = TransferLineView))]
pub struct TransferLineAnswer {
    pub sku_id: String,
    /// Units sent.
    pub quantity: i64,
    /// Units that arrived; null until received.
    pub received_quantity: Option<i64>,
    /// `receivedQuantity - quantity`: negative when goods went missing on the way; null until
    /// received.
    pub difference_quantity: Option<i64>,
}

impl From<&TransferRecord> for TransferAnswer {
    fn from(record: &TransferRecord) -> Self {
        let received = record.received.as_ref();
        TransferAnswer {
            transfer_id: record.transfer_id.as_str().to_owned(),
            from_store_id: record.from_store_id.as_str().to_owned(),
            to_store_id: record.to_store_id.as_str().to_owned(),
            status: if received.is_some() {
                TransferStatus::Received
            } else {
                TransferStatus::Sent
            },
            lines: record
                .lines
                .iter()
                .enumerate()
                .map(|(i, line)| {
                    let arrived = received.and_then(|r| r.lines.get(i));
                    TransferLineAnswer {
                        sku_id: line.sku_id.as_str().to_owned(),
                        quantity: line.quantity.get(),
                        received_quantity: arrived.map(|r| r.received.get()),
                        difference_quantity: arrived.map(|r| r.difference),
                    }
                })
                .collect(),
            sent_at: format_utc(record.sent_at),
            received_at: received.map(|r| format_utc(r.at)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drawer::{Count, MovementTotals, ShiftFigures, shift_report};
    use serde_json::json;

    fn cents(n: i64) -> Cents {
        Cents::new(n).unwrap()
    }

    fn shift_report_of(counted: &[Count]) -> ShiftReport {
        let figures = ShiftFigures {
            opening_float: cents(10_000),
            sales_count: 2,
            total: cents(3_000),
            vat: vec![SaleRecordVat {
                vat_rate: 550,
                total_cents: 3_000,
                vat_cents: 156,
            }],
            takings: vec![crate::drawer::MethodTakings {
                method: "cash".into(),
                applied: cents(3_000),
                forfeited: Cents::ZERO,
            }],
            movements: MovementTotals::default(),
            late: Default::default(),
            cards: [(
                crate::payment::TerminalKey {
                    terminal_id: Some(crate::payment::TerminalId::parse("tpe-1").unwrap()),
                    provider: None,
                },
                crate::payment::CardTotals {
                    authorized: cents(1_200),
                    captured: cents(1_200),
                    unknowns: 1,
                    ..Default::default()
                },
            )]
            .into(),
        };
        shift_report(&figures, counted).unwrap()
    }

    fn x_report(at: Timestamp) -> XReport {
        let (session, store, register, cashier) = ids();
        XReport::of(shift(&session, &store, &register, &cashier), &shift_report_of(&[]), at)
    }

    fn z_report(counted: &[Count], at: Timestamp, seal: ClosureSeal) -> ZReport {
        let (session, store, register, cashier) = ids();
        let report = shift_report_of(counted);
        ZReport::of(shift(&session, &store, &register, &cashier), &report, at, seal)
    }

    fn ids() -> (SessionId, StoreId, RegisterId, Subject) {
        (
            SessionId::parse("s1").unwrap(),
            StoreId::parse("paris").unwrap(),
            RegisterId::parse("r1").unwrap(),
            Subject::parse("alice").unwrap(),
        )
    }

    fn shift<'a>(
        session: &'a SessionId,
        store: &'a StoreId,
        register: &'a RegisterId,
        cashier: &'a Subject,
    ) -> ShiftOf<'a> {
        ShiftOf {
            session_id: session,
            store_id: store,
            register_id: register,
            cashier_subject: cashier,
            opened_at: Timestamp::UNIX_EPOCH,
            opening_float: cents(10_000),
        }
    }

    #[test]
    fn an_x_report_says_when_it_was_asked_and_carries_no_seal() {
        let at = Timestamp::from_second(60).unwrap();
        let x = serde_json::to_value(x_report(at)).unwrap();
        assert_eq!(x["reportedAt"], "1970-01-01T00:01:00Z");
        assert!(x.get("closedAt").is_none() && x.get("fiscal").is_none(), "{x}");
        assert_eq!(
            x["tenders"],
            json!([{"method": "cash", "appliedCents": 3000, "expectedCents": 13000}])
        );
        assert_eq!(x["vat"], json!([{"vatRate": 5.5, "totalCents": 3000, "vatCents": 156}]));
    }

    #[test]
    fn a_z_report_keeps_its_counts_and_seal_and_reads_back_as_kept() {
        let counted = [Count {
            method: "cash".into(),
            counted: cents(12_950),
        }];
        let seal = ClosureSeal {
            chain: "closure".into(),
            seq: 4,
            signature: "sig".into(),
            key_id: "k1".into(),
        };
        let at = Timestamp::from_second(3_600).unwrap();
        let z = z_report(&counted, at, seal);
        let kept = serde_json::to_string(&z).unwrap();
        let value: serde_json::Value = serde_json::from_str(&kept).unwrap();
        assert_eq!(value["tenders"][0]["countedCents"], 12_950);
        assert_eq!(value["tenders"][0]["differenceCents"], -50);
        assert_eq!(
            value["fiscal"],
            json!({"chain": "closure", "seq": 4, "signature": "sig", "keyId": "k1"})
        );
        assert!(value.get("reportedAt").is_none());
        assert_eq!(serde_json::from_str::<ZReport>(&kept).unwrap(), z);
    }
}
