//! The signed strings of the journal, one layout per record kind, after the practice of
//! certified products: fields joined by `,` (a `,` inside a value becomes `;`), ending with the
//! first-entry flag (`Y` on entry 1 only) and the previous entry's signature.
//!
//! The business records they seal are here too, so that the audit can rebuild every signed
//! string from the records alone, whether they come from the database or from an archive.

use crate::money::{Cents, VatRate};
use crate::pricing::VatTotal;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

mod digest_form;

/// A field of a signed string: commas would split it, so they become semicolons.
fn field(text: &str) -> String {
    text.replace(',', ";")
}

fn flag(seq: i64) -> &'static str {
    if seq == 1 { "Y" } else { "N" }
}

/// `YYYYMMDDHHMMSS` in UTC.
pub fn compact_timestamp(at: Timestamp) -> String {
    at.strftime("%Y%m%d%H%M%S").to_string()
}

/// `rate:total|rate:total` with rates in hundredths of a percent, highest rate first.
pub fn vat_field(vat: &[VatTotal]) -> String {
    let mut sorted: Vec<&VatTotal> = vat.iter().collect();
    sorted.sort_by_key(|v| std::cmp::Reverse(v.rate));
    sorted
        .iter()
        .map(|v| format!("{}:{}", v.rate.hundredths(), v.total.get()))
        .collect::<Vec<_>>()
        .join("|")
}

fn join(fields: Vec<String>, seq: i64, previous: Option<&str>) -> String {
    let mut fields = fields;
    fields.push(flag(seq).to_owned());
    fields.push(previous.unwrap_or_default().to_owned());
    fields.join(",")
}

/// A sale as sealed: every business field of it. The ticket's signed string carries the
/// SHA-256 of this record's canonical JSON, so a change to any field, a line, a tender or a
/// discount is detected, not only a change to the totals.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SaleRecord {
    pub transaction_id: String,
    pub number: String,
    /// `sale`, `rental`, `repair` or `return`.
    pub kind: String,
    pub store_id: String,
    pub seller_id: String,
    pub customer_id: Option<String>,
    pub session_id: String,
    pub register_id: String,
    pub subtotal_cents: i64,
    pub total_cents: i64,
    pub item_count: i64,
    pub change_cents: i64,
    pub points_earned: i64,
    pub coupon_code: Option<String>,
    /// Microseconds since the epoch.
    pub issued_at: Option<i64>,
    pub emitted_at: i64,
    /// Booked after its session was closed (a till that was offline): sealed at its arrival,
    /// `emittedAt`, with the instant it was rung, `issuedAt`. Absent on a sale booked in its
    /// session, so that the records of sales sealed before late sales existed keep their digest.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub late: bool,
    pub lines: Vec<SaleRecordLine>,
    pub tenders: Vec<SaleRecordTender>,
    pub vat: Vec<SaleRecordVat>,
    pub adjustments: Vec<SaleRecordAdjustment>,
    /// On a return: the ticket it corrects. Absent otherwise, so that the records of sales
    /// sealed before returns existed keep their digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<OriginalTicket>,
}

/// The sale a return gives goods back from, as its own ticket sealed it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OriginalTicket {
    pub transaction_id: String,
    pub register_id: String,
    /// The original's sequence in its register's ticket chain.
    pub seq: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SaleRecordLine {
    pub line_id: String,
    pub sku_id: Option<String>,
    pub label: Option<String>,
    pub quantity: i64,
    pub unit_price_cents: i64,
    /// Hundredths of a percent.
    pub vat_rate: i64,
    pub gross_cents: i64,
    pub promotion_cents: i64,
    pub declared_cents: i64,
    pub ticket_cents: i64,
    pub net_cents: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SaleRecordTender {
    pub tender_id: String,
    pub method: String,
    pub applied_cents: i64,
    pub presented_cents: i64,
    pub change_cents: i64,
    pub forfeited_cents: i64,
    /// The reference of a method another system keeps (an outside voucher), as given; on
    /// records sealed before codes were masked, a gift card's code or a credit note's number
    /// too. Absent when the tender names none, so that records sealed before references keep
    /// their digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// A gift card's or credit note's code, masked: its last four symbols. Never the code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_last4: Option<String>,
    /// The same instrument's keyed digest (HMAC-SHA256 with the deployment's key, base64url):
    /// one instrument has one digest in every entry, and the key is in no archive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_digest: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SaleRecordVat {
    pub vat_rate: i64,
    pub total_cents: i64,
    pub vat_cents: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SaleRecordAdjustment {
    pub source: String,
    pub source_id: String,
    pub label: Option<String>,
    pub amount_cents: i64,
}

impl SaleRecord {
    /// SHA-256 of the canonical JSON of the record, base64url.
    pub fn digest(&self) -> String {
        URL_SAFE_NO_PAD.encode(crate::canonical::sha256(&digest_form::Sale::of(self)))
    }

    /// The VAT breakdown as the pricing engine writes it (rates that are out of range, which
    /// only a tampered record has, are left out and the seal comparison fails).
    pub fn vat_totals(&self) -> Vec<VatTotal> {
        self.vat
            .iter()
            .filter_map(|v| {
                Some(VatTotal {
                    rate: VatRate::from_hundredths(v.vat_rate)?,
                    total: Cents::new(v.total_cents)?,
                    vat: Cents::new(v.vat_cents)?,
                })
            })
            .collect()
    }

    /// The ticket type as the journal writes it.
    pub fn fiscal_type(&self) -> String {
        self.kind.to_uppercase()
    }
}

/// The signed string of a ticket: VAT breakdown, total, timestamp, register, sequence, type,
/// transaction id, digest of the whole sale record, flag, previous signature.
pub fn ticket(record: &SaleRecord, seq: i64, previous: Option<&str>) -> String {
    ticket_with_digest(record, &record.digest(), seq, previous)
}

/// [`ticket`] with the record's digest computed beforehand: it does not depend on the
/// sequence, so a writer can compute it before it takes its place in the chain.
pub fn ticket_with_digest(record: &SaleRecord, digest: &str, seq: i64, previous: Option<&str>) -> String {
    let at = crate::instant::from_micros(record.emitted_at);
    join(
        vec![
            vat_field(&record.vat_totals()),
            record.total_cents.to_string(),
            compact_timestamp(at),
            field(&record.register_id),
            seq.to_string(),
            record.fiscal_type(),
            field(&record.transaction_id),
            digest.to_owned(),
        ],
        seq,
        previous,
    )
}

/// A shift closure (Z report) as sealed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShiftRecord {
    pub session_id: String,
    pub register_id: String,
    /// Microseconds since the epoch.
    pub opened_at: i64,
    pub closed_at: i64,
    pub sales_count: i64,
    pub total_cents: i64,
    pub vat: Vec<SaleRecordVat>,
    /// What the cashier counted at the close, per tender method; empty for a close without
    /// counts (and for every shift closed before counts existed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counts: Vec<ShiftCount>,
    /// The late sales of the register's earlier sessions received since its previous shift
    /// closed, shown apart: they are in no shift's totals. Absent when there were none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<LateTickets>,
    /// The shift's card payments per terminal and provider, as they stood at the close. Absent
    /// when the shift had no card payment attempt (and for every shift closed before them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub card_payments: Vec<ShiftCardPayments>,
}

/// One terminal's card payments over a shift, in the X and Z reports and as a closure seals
/// them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ShiftCardPayments {
    /// The terminal as the till named it; null for attempts that named none.
    pub terminal_id: Option<String>,
    /// Who processes its payments; null for attempts that named none.
    pub provider: Option<String>,
    /// Approved by the terminal, whatever became of the approval after.
    pub authorized_cents: i64,
    /// Taken by sales.
    pub captured_cents: i64,
    /// Given back to cards by returns.
    pub refunded_cents: i64,
    /// Approvals no sale took in time, voided since or not.
    pub orphan_count: i64,
    pub void_count: i64,
    /// Answers still lost at the close.
    pub unknown_count: i64,
}

impl ShiftCardPayments {
    /// `CARDS:terminal:provider:authorized:captured:refunded:orphans:voids:unknowns|...`, names
    /// escaped so that no value can pass for another (an absent name is empty: a name is never
    /// empty).
    fn field(cards: &[ShiftCardPayments]) -> Option<String> {
        if cards.is_empty() {
            return None;
        }
        let lines: Vec<String> = cards
            .iter()
            .map(|c| {
                format!(
                    "{}:{}:{}:{}:{}:{}:{}:{}",
                    escaped(c.terminal_id.as_deref().unwrap_or_default()),
                    escaped(c.provider.as_deref().unwrap_or_default()),
                    c.authorized_cents,
                    c.captured_cents,
                    c.refunded_cents,
                    c.orphan_count,
                    c.void_count,
                    c.unknown_count
                )
            })
            .collect();
        Some(format!("CARDS:{}", lines.join("|")))
    }
}

/// Free text inside a signed field: the separators and the escape itself as `%XX`.
fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            ',' => out.push_str("%2C"),
            ':' => out.push_str("%3A"),
            '|' => out.push_str("%7C"),
            c => out.push(c),
        }
    }
    out
}

/// Late sales shown apart in a closure: how many, and their total.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LateTickets {
    pub sales_count: i64,
    pub total_cents: i64,
}

impl LateTickets {
    /// `None` for no late sale, which a closure does not mention.
    pub fn some(self) -> Option<LateTickets> {
        (self.sales_count != 0).then_some(self)
    }

    /// The field a closure's signed string ends with when it shows late sales.
    fn field(late: Option<&LateTickets>) -> Option<String> {
        late.map(|late| format!("LATE:{}:{}", late.sales_count, late.total_cents))
    }
}

/// One tender method counted at a shift's close.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShiftCount {
    pub method: String,
    pub expected_cents: i64,
    pub counted_cents: i64,
    /// Counted minus expected.
    pub difference_cents: i64,
}

/// The signed string of a shift closure: VAT breakdown of the shift, its total and sale count,
/// timestamp, register, sequence, `SHIFT`, the session and its period, then, when the cashier
/// counted, `method:expected:counted:difference|...` in method order, then, when late sales are
/// shown apart, `LATE:count:total`, then, when the shift had card payment attempts, their
/// totals per terminal and provider (`CARDS:...`), flag, previous signature. A close without
/// counts, late sales or card attempts signs exactly what closes signed before they existed.
pub fn shift_closure(record: &ShiftRecord, seq: i64, previous: Option<&str>) -> String {
    let (opened, closed) = (
        crate::instant::from_micros(record.opened_at),
        crate::instant::from_micros(record.closed_at),
    );
    let mut fields = vec![
        vat_string(&record.vat),
        record.total_cents.to_string(),
        record.sales_count.to_string(),
        compact_timestamp(closed),
        field(&record.register_id),
        seq.to_string(),
        "SHIFT".to_owned(),
        field(&record.session_id),
        format!("{}|{}", compact_timestamp(opened), compact_timestamp(closed)),
    ];
    if !record.counts.is_empty() {
        let mut counts: Vec<&ShiftCount> = record.counts.iter().collect();
        counts.sort_by(|a, b| a.method.cmp(&b.method));
        let counts: Vec<String> = counts
            .iter()
            .map(|c| {
                format!(
                    "{}:{}:{}:{}",
                    field(&c.method),
                    c.expected_cents,
                    c.counted_cents,
                    c.difference_cents
                )
            })
            .collect();
        fields.push(counts.join("|"));
    }
    fields.extend(LateTickets::field(record.late.as_ref()));
    fields.extend(ShiftCardPayments::field(&record.card_payments));
    join(fields, seq, previous)
}

/// `rate:total|...` from stored VAT rows, highest rate first.
fn vat_string(vat: &[SaleRecordVat]) -> String {
    let mut sorted: Vec<&SaleRecordVat> = vat.iter().collect();
    sorted.sort_by_key(|v| std::cmp::Reverse(v.vat_rate));
    sorted
        .iter()
        .map(|v| format!("{}:{}", v.vat_rate, v.total_cents))
        .collect::<Vec<_>>()
        .join("|")
}

/// The periods a closure can cover.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Period {
    Day,
    Month,
    Year,
}

impl Period {
    pub fn as_str(self) -> &'static str {
        match self {
            Period::Day => "DAY",
            Period::Month => "MONTH",
            Period::Year => "YEAR",
        }
    }

    pub fn parse(text: &str) -> Option<Period> {
        [Period::Day, Period::Month, Period::Year]
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(text))
    }
}

/// A day, month or year closure as sealed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClosureRecord {
    pub register_id: String,
    pub period: Period,
    /// Local dates, `YYYY-MM-DD`, in the store's time zone.
    pub period_from: String,
    pub period_to: String,
    pub ticket_count: i64,
    /// The first and last ticket sequences covered; 0 and 0 when none.
    pub first_ticket_seq: i64,
    pub last_ticket_seq: i64,
    /// The signature of the last ticket covered: anchors the end of the ticket chain.
    pub last_ticket_signature: Option<String>,
    pub total_cents: i64,
    /// Sum of the magnitudes: returns add rather than subtract.
    pub abs_total_cents: i64,
    /// Perpetual grand totals of the register after this closure.
    pub grand_total_cents: i64,
    pub grand_total_abs_cents: i64,
    pub vat: Vec<SaleRecordVat>,
    pub closed_at: i64,
    /// On a day: the late sales among its tickets (sales of sessions closed before they
    /// arrived), shown apart. Absent when there were none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<LateTickets>,
}

/// The signed string of a period closure: VAT breakdown, period total, perpetual grand totals
/// (real and absolute), timestamp, register, sequence, type, period, first and last ticket,
/// last ticket signature, `LATE:count:total` when late sales are shown apart, flag, previous
/// signature.
pub fn period_closure(record: &ClosureRecord, seq: i64, previous: Option<&str>) -> String {
    let mut fields = vec![
        vat_string(&record.vat),
        record.total_cents.to_string(),
        record.grand_total_cents.to_string(),
        record.grand_total_abs_cents.to_string(),
        compact_timestamp(crate::instant::from_micros(record.closed_at)),
        field(&record.register_id),
        seq.to_string(),
        record.period.as_str().to_owned(),
        format!("{}|{}", record.period_from, record.period_to),
        format!("{}|{}", record.first_ticket_seq, record.last_ticket_seq),
        record.last_ticket_signature.clone().unwrap_or_default(),
    ];
    fields.extend(LateTickets::field(record.late.as_ref()));
    join(fields, seq, previous)
}

/// A technical event (JET) as sealed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventRecord {
    pub register_id: String,
    /// The JET code: 260 journal initialised, 80 session opened, 40 session closed, 50 day or
    /// month closed, 60 year closed, 20 archive made, 90 integrity failure found; till's own
    /// 1010 approval issued, 1020 approval spent, 1030 to 1033 cash drawer movements, 1040 late
    /// sales received, 1050 invoice issued, 1051 credit invoice issued.
    pub code: i64,
    pub label: String,
    /// What it concerns: a session, a grant, a closure...
    pub detail: String,
    pub occurred_at: i64,
}

/// The signed string of a technical event: code, label, detail, timestamp, register, sequence,
/// `EVENT`, flag, previous signature.
pub fn event(record: &EventRecord, seq: i64, previous: Option<&str>) -> String {
    join(
        vec![
            record.code.to_string(),
            field(&record.label),
            field(&record.detail),
            compact_timestamp(crate::instant::from_micros(record.occurred_at)),
            field(&record.register_id),
            seq.to_string(),
            "EVENT".to_owned(),
        ],
        seq,
        previous,
    )
}

/// A reprint of a receipt (DUPLICATA) as sealed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DuplicateRecord {
    pub register_id: String,
    pub transaction_id: String,
    /// The original ticket's type and sequence.
    pub original_type: String,
    pub original_seq: i64,
    /// 1 for the first reprint.
    pub reprint: i64,
    pub operator: String,
    pub printed_at: i64,
}

/// The signed string of a duplicate: `DUPLICATE`, original type, reprint number, operator,
/// timestamp, register, original sequence, transaction id, sequence, flag, previous signature.
pub fn duplicate(record: &DuplicateRecord, seq: i64, previous: Option<&str>) -> String {
    join(
        vec![
            "DUPLICATE".to_owned(),
            field(&record.original_type),
            record.reprint.to_string(),
            field(&record.operator),
            compact_timestamp(crate::instant::from_micros(record.printed_at)),
            field(&record.register_id),
            record.original_seq.to_string(),
            field(&record.transaction_id),
            seq.to_string(),
        ],
        seq,
        previous,
    )
}

/// An archive of a period as sealed: the SHA-256 of its file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveRecord {
    pub register_id: String,
    pub archive_id: String,
    pub period_from: String,
    pub period_to: String,
    /// SHA-256 of the archive document, hex.
    pub sha256: String,
    pub made_at: i64,
}

/// The signed string of an archive: `ARCHIVE`, the archive id, its SHA-256, its period,
/// timestamp, register, sequence, flag, previous signature.
pub fn archive(record: &ArchiveRecord, seq: i64, previous: Option<&str>) -> String {
    join(
        vec![
            "ARCHIVE".to_owned(),
            field(&record.archive_id),
            record.sha256.clone(),
            format!("{}|{}", record.period_from, record.period_to),
            compact_timestamp(crate::instant::from_micros(record.made_at)),
            field(&record.register_id),
            seq.to_string(),
        ],
        seq,
        previous,
    )
}

/// Records for tests of this crate.
#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    pub(crate) fn sale(total: i64) -> SaleRecord {
        SaleRecord {
            transaction_id: "t,1".into(),
            number: "T1".into(),
            kind: "sale".into(),
            store_id: "s1".into(),
            seller_id: "camille".into(),
            customer_id: None,
            session_id: "ses_1".into(),
            register_id: "till-1".into(),
            subtotal_cents: total,
            total_cents: total,
            item_count: 1,
            change_cents: 0,
            points_earned: 0,
            coupon_code: None,
            issued_at: None,
            emitted_at: 1_772_357_400_000_000,
            late: false,
            lines: vec![SaleRecordLine {
                line_id: "l1".into(),
                sku_id: None,
                label: Some("Mug".into()),
                quantity: 1,
                unit_price_cents: total,
                vat_rate: 2000,
                gross_cents: total,
                promotion_cents: 0,
                declared_cents: 0,
                ticket_cents: 0,
                net_cents: total,
            }],
            tenders: vec![],
            vat: vec![SaleRecordVat {
                vat_rate: 2000,
                total_cents: total,
                vat_cents: total / 6,
            }],
            adjustments: vec![],
            original: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::sale;
    use super::*;

    #[test]
    fn the_ticket_string_follows_the_published_layout() {
        let record = sale(1450);
        let first = ticket(&record, 1, None);
        let digest = record.digest();
        assert_eq!(
            first,
            format!("2000:1450,1450,20260301093000,till-1,1,SALE,t;1,{digest},Y,")
        );
        assert!(ticket(&record, 2, Some("abc")).ends_with(&format!("{digest},N,abc")));
    }

    /// A record with every optional part, text that needs escaping, and a return's original.
    fn full_record() -> SaleRecord {
        let mut record = sale(1450);
        record.customer_id = Some("cust-\"7\"".into());
        record.coupon_code = Some("WELCOME10".into());
        record.issued_at = Some(1_772_357_399_000_000);
        record.lines[0].sku_id = Some(format!("{:064x}", 7));
        record.lines.push(SaleRecordLine {
            line_id: "l2".into(),
            sku_id: None,
            label: None,
            quantity: -2,
            unit_price_cents: 995,
            vat_rate: 550,
            gross_cents: -1990,
            promotion_cents: 10,
            declared_cents: 20,
            ticket_cents: 30,
            net_cents: -1930,
        });
        record.tenders.push(SaleRecordTender {
            tender_id: "p1".into(),
            method: "meal_voucher".into(),
            applied_cents: 1450,
            presented_cents: 1500,
            change_cents: 0,
            forfeited_cents: 50,
            reference: None,
            reference_last4: None,
            reference_digest: None,
        });
        record.adjustments.push(SaleRecordAdjustment {
            source: "promotion".into(),
            source_id: "bogo".into(),
            label: Some("Deux pour un, é\n".into()),
            amount_cents: 10,
        });
        record.original = Some(OriginalTicket {
            transaction_id: "t0".into(),
            register_id: "till-1".into(),
            seq: 41,
        });
        record
    }

    #[test]
    fn the_typed_digest_form_writes_the_bytes_of_the_records_canonical_value() {
        for record in [sale(1450), full_record()] {
            let typed = serde_json::to_string(&digest_form::Sale::of(&record)).unwrap();
            let value = serde_json::to_value(&record).unwrap().to_string();
            assert_eq!(typed, value);
        }
    }

    #[test]
    fn a_digest_sealed_before_the_typed_form_still_matches() {
        // Computed as SHA-256 of the record's canonical `Value`, the form digests were made
        // with before the typed one.
        assert_eq!(sale(1450).digest(), "M0mie0sbPkcHjUYQpawyQcthUVwIwchERGq6Aog8TT8");
        assert_eq!(full_record().digest(), "Fgrly4o0NLzagX73P2CO_f-P3lnGwhQ6Ddo_KRusT2w");
    }

    #[test]
    fn a_tenders_reference_is_sealed_and_its_absence_writes_nothing() {
        let record = full_record();
        let mut referenced = record.clone();
        referenced.tenders[0].reference = Some("AV-till-1-000007".into());
        let typed = serde_json::to_string(&digest_form::Sale::of(&referenced)).unwrap();
        assert_eq!(typed, serde_json::to_value(&referenced).unwrap().to_string());
        assert!(typed.contains(r#""reference":"AV-till-1-000007""#));
        assert!(
            !serde_json::to_string(&digest_form::Sale::of(&record))
                .unwrap()
                .contains("reference")
        );
        assert_ne!(record.digest(), referenced.digest());
        let mut masked = record.clone();
        masked.tenders[0].reference_last4 = Some("0123".into());
        masked.tenders[0].reference_digest = Some("kD1g".into());
        let typed = serde_json::to_string(&digest_form::Sale::of(&masked)).unwrap();
        assert_eq!(typed, serde_json::to_value(&masked).unwrap().to_string());
        assert!(typed.contains(r#""referenceDigest":"kD1g","referenceLast4":"0123""#));
        assert_ne!(record.digest(), masked.digest());
        let mut other_card = masked.clone();
        other_card.tenders[0].reference_digest = Some("x9Qa".into());
        assert_ne!(masked.digest(), other_card.digest());
    }

    #[test]
    fn the_digest_changes_with_any_field() {
        let record = sale(1450);
        let mut line = record.clone();
        line.lines[0].label = Some("Tasse".into());
        let mut tender = record.clone();
        tender.change_cents = 1;
        assert_ne!(record.digest(), line.digest());
        assert_ne!(record.digest(), tender.digest());
        assert_eq!(record.digest(), record.clone().digest());
    }

    #[test]
    fn every_layout_ends_with_the_flag_and_the_previous_signature() {
        let closure = ClosureRecord {
            register_id: "r".into(),
            period: Period::Day,
            period_from: "2026-03-01".into(),
            period_to: "2026-03-01".into(),
            ticket_count: 2,
            first_ticket_seq: 1,
            last_ticket_seq: 2,
            last_ticket_signature: Some("sig".into()),
            total_cents: 100,
            abs_total_cents: 100,
            grand_total_cents: 100,
            grand_total_abs_cents: 100,
            vat: vec![],
            closed_at: 0,
            late: None,
        };
        assert!(period_closure(&closure, 1, None).ends_with(",DAY,2026-03-01|2026-03-01,1|2,sig,Y,"));
        let opened = EventRecord {
            register_id: "r".into(),
            code: 80,
            label: "session opened".into(),
            detail: "ses, 1".into(),
            occurred_at: 0,
        };
        assert_eq!(
            event(&opened, 3, Some("p")),
            "80,session opened,ses; 1,19700101000000,r,3,EVENT,N,p"
        );
    }

    #[test]
    fn signed_strings_of_records_with_extreme_figures_and_instants_are_built() {
        // Every instant from an archive is read into a string, the edges of the calendar too.
        let edges = [
            i64::MIN,
            jiff::Timestamp::MIN.as_microsecond(),
            -1,
            jiff::Timestamp::MAX.as_microsecond(),
            i64::MAX,
        ];
        for at in edges {
            let stamp = compact_timestamp(crate::instant::from_micros(at));
            assert!(stamp.len() >= 14, "{at}: {stamp}");
            let mut record = sale(i64::MIN);
            record.emitted_at = at;
            record.vat[0].vat_rate = i64::MAX;
            record.lines[0].quantity = i64::MIN;
            assert!(ticket(&record, i64::MAX, Some("p")).ends_with(",N,p"));
            let jet = EventRecord {
                register_id: String::new(),
                code: i64::MIN,
                label: ",".repeat(3),
                detail: String::new(),
                occurred_at: at,
            };
            assert!(event(&jet, 1, None).starts_with(&format!("{},;;;,", i64::MIN)));
        }
    }

    #[test]
    fn a_shifts_card_payments_are_sealed_last_with_names_that_cannot_pass_for_others() {
        let mut shift = ShiftRecord {
            session_id: "ses".into(),
            register_id: "r".into(),
            opened_at: 0,
            closed_at: 0,
            sales_count: 1,
            total_cents: 100,
            vat: vec![],
            counts: vec![],
            late: None,
            card_payments: vec![],
        };
        let plain = shift_closure(&shift, 2, Some("p"));
        assert!(
            plain.ends_with(",SHIFT,ses,19700101000000|19700101000000,N,p"),
            "{plain}"
        );
        let card = |terminal: &str, provider: Option<&str>| ShiftCardPayments {
            terminal_id: Some(terminal.into()),
            provider: provider.map(Into::into),
            authorized_cents: 3800,
            captured_cents: 2900,
            refunded_cents: 1450,
            orphan_count: 1,
            void_count: 1,
            unknown_count: 0,
        };
        shift.card_payments = vec![card("a:b", None), card("tpe|2", Some("x,%"))];
        let sealed = shift_closure(&shift, 2, Some("p"));
        assert!(
            sealed.ends_with(",CARDS:a%3Ab::3800:2900:1450:1:1:0|tpe%7C2:x%2C%25:3800:2900:1450:1:1:0,N,p"),
            "{sealed}"
        );
        // Another split of the same characters between terminal and provider signs otherwise.
        shift.card_payments = vec![card("a", Some("b")), card("tpe|2", Some("x,%"))];
        assert_ne!(shift_closure(&shift, 2, Some("p")), sealed);
    }
}
