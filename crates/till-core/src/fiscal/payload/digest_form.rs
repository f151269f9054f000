//! A sale record in canonical form, written straight from the record. The record's own
//! field order is that of its archives and cannot change; these borrowed structs declare the
//! same fields in the byte order of their JSON names, the order canonical JSON sorts keys in,
//! so that no `Value` has to sort them. Sealed tickets hold the digest, so the bytes are those
//! of the record's canonical `Value` (a test compares them).

use super::{OriginalTicket, SaleRecord, SaleRecordAdjustment, SaleRecordLine, SaleRecordTender, SaleRecordVat};
use serde::Serialize;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Sale<'a> {
    adjustments: Vec<Adjustment<'a>>,
    change_cents: i64,
    coupon_code: &'a Option<String>,
    customer_id: &'a Option<String>,
    emitted_at: i64,
    issued_at: Option<i64>,
    item_count: i64,
    kind: &'a str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    late: bool,
    lines: Vec<Line<'a>>,
    number: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    original: Option<Original<'a>>,
    points_earned: i64,
    register_id: &'a str,
    seller_id: &'a str,
    session_id: &'a str,
    store_id: &'a str,
    subtotal_cents: i64,
    tenders: Vec<Tender<'a>>,
    total_cents: i64,
    transaction_id: &'a str,
    vat: Vec<Vat>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Adjustment<'a> {
    amount_cents: i64,
    label: &'a Option<String>,
    source: &'a str,
    source_id: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    declared_cents: i64,
    gross_cents: i64,
    label: &'a Option<String>,
    line_id: &'a str,
    net_cents: i64,
    promotion_cents: i64,
    quantity: i64,
    sku_id: &'a Option<String>,
    ticket_cents: i64,
    unit_price_cents: i64,
    vat_rate: i64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Original<'a> {
    register_id: &'a str,
    seq: i64,
    transaction_id: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Tender<'a> {
    applied_cents: i64,
    change_cents: i64,
    forfeited_cents: i64,
    method: &'a str,
    presented_cents: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    reference: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reference_digest: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reference_last4: Option<&'a str>,
    tender_id: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Vat {
    total_cents: i64,
    vat_cents: i64,
    vat_rate: i64,
}

impl<'a> Sale<'a> {
    pub(super) fn of(sale: &'a SaleRecord) -> Sale<'a> {
        Sale {
            adjustments: sale.adjustments.iter().map(Adjustment::of).collect(),
            change_cents: sale.change_cents,
            coupon_code: &sale.coupon_code,
            customer_id: &sale.customer_id,
            emitted_at: sale.emitted_at,
            issued_at: sale.issued_at,
            item_count: sale.item_count,
            kind: &sale.kind,
            late: sale.late,
            lines: sale.lines.iter().map(Line::of).collect(),
            number: &sale.number,
            original: sale.original.as_ref().map(Original::of),
            points_earned: sale.points_earned,
            register_id: &sale.register_id,
            seller_id: &sale.seller_id,
            session_id: &sale.session_id,
            store_id: &sale.store_id,
            subtotal_cents: sale.subtotal_cents,
            tenders: sale.tenders.iter().map(Tender::of).collect(),
            total_cents: sale.total_cents,
            transaction_id: &sale.transaction_id,
            vat: sale.vat.iter().map(Vat::of).collect(),
        }
    }
}

impl<'a> Adjustment<'a> {
    fn of(adjustment: &'a SaleRecordAdjustment) -> Adjustment<'a> {
        Adjustment {
            amount_cents: adjustment.amount_cents,
            label: &adjustment.label,
            source: &adjustment.source,
            source_id: &adjustment.source_id,
        }
    }
}

impl<'a> Line<'a> {
    fn of(line: &'a SaleRecordLine) -> Line<'a> {
        Line {
            declared_cents: line.declared_cents,
            gross_cents: line.gross_cents,
            label: &line.label,
            line_id: &line.line_id,
            net_cents: line.net_cents,
            promotion_cents: line.promotion_cents,
            quantity: line.quantity,
            sku_id: &line.sku_id,
            ticket_cents: line.ticket_cents,
            unit_price_cents: line.unit_price_cents,
            vat_rate: line.vat_rate,
        }
    }
}

impl<'a> Original<'a> {
    fn of(original: &'a OriginalTicket) -> Original<'a> {
        Original {
            register_id: &original.register_id,
            seq: original.seq,
            transaction_id: &original.transaction_id,
        }
    }
}

impl<'a> Tender<'a> {
    fn of(tender: &'a SaleRecordTender) -> Tender<'a> {
        Tender {
            applied_cents: tender.applied_cents,
            change_cents: tender.change_cents,
            forfeited_cents: tender.forfeited_cents,
            method: &tender.method,
            presented_cents: tender.presented_cents,
            reference: tender.reference.as_deref(),
            reference_digest: tender.reference_digest.as_deref(),
            reference_last4: tender.reference_last4.as_deref(),
            tender_id: &tender.tender_id,
        }
    }
}

impl Vat {
    fn of(vat: &SaleRecordVat) -> Vat {
        Vat {
            total_cents: vat.total_cents,
            vat_cents: vat.vat_cents,
            vat_rate: vat.vat_rate,
        }
    }
}
