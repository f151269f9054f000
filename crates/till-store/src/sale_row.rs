//! A sale as it is stored: one row of `sales`, written once, complete, with its answer and its
//! document (lines, tenders, VAT and reductions) packed together in `packed` (see
//! [`crate::packed`]); `response` is left empty and `detail` null. This module writes that row
//! and reads a sale's sealed record back from it, the record [`sealed_record`] builds from
//! the sale when its ticket is sealed.

use crate::batch::Batch;
use crate::error::StoreError;
use crate::packed;
use crate::sale_detail::SaleDetail;
use crate::sales::NewSale;
use crate::sql::Row;
use till_core::fiscal::payload::{
    OriginalTicket, SaleRecord, SaleRecordAdjustment, SaleRecordLine, SaleRecordTender, SaleRecordVat,
};
use till_core::ids::{CouponCode, CustomerId};
use till_core::instant::to_micros;
use till_core::stored_value::{InstrumentDigestKey, SealedReference, sealed_reference};

/// The statement writing a sale's row. `$session` is the condition its session must meet:
/// the row's `session_id` is a scalar subquery, left null (and the row so refused) when the
/// session does not meet it, rather than an `INSERT ... SELECT ... WHERE EXISTS`: SQLite takes an
/// insert from a `SELECT` for a multi-row write and copies every page it changes into a
/// statement journal first, which costs the writer more than the row itself (see
/// docs/performance.md, "The SQLite writer's statements"). `$late` is the `late` column's value.
macro_rules! insert_sale {
    ($session:literal, $late:literal) => {
        concat!(
            "INSERT INTO sales (transaction_id, event_id, fingerprint, kind, number, store_id, seller_id, ",
            "customer_id, session_id, register_id, subtotal_cents, total_cents, item_count, line_count, ",
            "change_cents, points_earned, coupon_code, issued_at, emitted_at, fiscal_seq, response, ",
            "original_transaction_id, original_register_id, original_seq, credit_note, packed, late) ",
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, ",
            "(SELECT session_id FROM register_sessions WHERE session_id = $9 AND ",
            $session,
            "), $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, '', $21, $22, $23, $24, $25, ",
            $late,
            ") ON CONFLICT (transaction_id) DO NOTHING RETURNING transaction_id"
        )
    };
}

/// Queues the sale's row, sealed at `seq`, to be written if its transaction id is new and its
/// session still stands as the sale was checked against: open for a sale booked in it (it may
/// have closed since), closed for a late sale. Either refusal fails the batch, which rolls the
/// whole ticket back; the commit finds out which one it was.
pub(crate) fn insert(
    batch: &mut Batch,
    sale: &NewSale,
    seq: i64,
    credit_note: Option<&str>,
    packed: Vec<u8>,
    now: i64,
) {
    let statement = if sale.late {
        insert_sale!("closed_at IS NOT NULL", "1")
    } else {
        insert_sale!("closed_at IS NULL AND expires_at > $19", "NULL")
    };
    batch.push_required(
        statement,
        vec![
            sale.transaction_id.as_str().into(),
            (&sale.event_id).into(),
            (&sale.fingerprint).into(),
            sale.kind.as_str().into(),
            (&sale.number).into(),
            sale.store_id.as_str().into(),
            sale.seller_id.as_str().into(),
            sale.customer_id.as_ref().map(CustomerId::as_str).into(),
            sale.session_id.as_str().into(),
            sale.register_id.as_str().into(),
            sale.subtotal.get().into(),
            sale.total.get().into(),
            sale.item_count.into(),
            (sale.lines.len() as i64).into(),
            sale.change.get().into(),
            sale.points_earned.into(),
            sale.coupon_code.as_ref().map(CouponCode::as_str).into(),
            sale.issued_at.map(to_micros).into(),
            now.into(),
            seq.into(),
            sale.original.as_ref().map(|o| o.transaction_id.as_str()).into(),
            sale.original.as_ref().map(|o| o.register_id.as_str()).into(),
            sale.original.as_ref().map(|o| o.seq).into(),
            credit_note.into(),
            packed.into(),
        ],
    );
}

/// The sale as its ticket seals it: every business field, in the form the audit reads back. A
/// gift card's or credit note's code is sealed masked, with its digest under `key`.
pub(crate) fn sealed_record(sale: &NewSale, key: &InstrumentDigestKey) -> SaleRecord {
    SaleRecord {
        transaction_id: sale.transaction_id.as_str().to_owned(),
        number: sale.number.clone(),
        kind: sale.kind.as_str().to_owned(),
        store_id: sale.store_id.as_str().to_owned(),
        seller_id: sale.seller_id.as_str().to_owned(),
        customer_id: sale.customer_id.as_ref().map(|c| c.as_str().to_owned()),
        session_id: sale.session_id.as_str().to_owned(),
        register_id: sale.register_id.as_str().to_owned(),
        subtotal_cents: sale.subtotal.get(),
        total_cents: sale.total.get(),
        item_count: sale.item_count,
        change_cents: sale.change.get(),
        points_earned: sale.points_earned,
        coupon_code: sale.coupon_code.as_ref().map(|c| c.as_str().to_owned()),
        issued_at: sale.issued_at.map(to_micros),
        emitted_at: to_micros(sale.emitted_at),
        late: sale.late,
        lines: sale
            .lines
            .iter()
            .map(|l| SaleRecordLine {
                line_id: l.line_id.clone(),
                sku_id: l.sku_id.as_ref().map(|s| s.as_str().to_owned()),
                label: l.label.clone(),
                quantity: l.quantity,
                unit_price_cents: l.unit_price.get(),
                vat_rate: l.vat_rate.hundredths(),
                gross_cents: l.gross.get(),
                promotion_cents: l.promotion.get(),
                declared_cents: l.declared.get(),
                ticket_cents: l.ticket.get(),
                net_cents: l.net.get(),
            })
            .collect(),
        tenders: sale
            .tenders
            .iter()
            .map(|t| {
                let sealed = t
                    .reference
                    .as_ref()
                    .map(|r| sealed_reference(t.method, r.as_str(), key));
                let (reference, reference_last4, reference_digest) = match sealed {
                    None => (None, None, None),
                    Some(SealedReference::Clear(reference)) => (Some(reference), None, None),
                    Some(SealedReference::Masked { last_four, digest }) => (None, Some(last_four), Some(digest)),
                };
                SaleRecordTender {
                    tender_id: t.id.clone(),
                    method: t.method.as_str().to_owned(),
                    applied_cents: t.applied.get(),
                    presented_cents: t.presented.get(),
                    change_cents: t.change.get(),
                    forfeited_cents: t.forfeited.get(),
                    reference,
                    reference_last4,
                    reference_digest,
                }
            })
            .collect(),
        vat: sale
            .vat
            .iter()
            .map(|v| SaleRecordVat {
                vat_rate: v.rate.hundredths(),
                total_cents: v.total.get(),
                vat_cents: v.vat.get(),
            })
            .collect(),
        adjustments: sale
            .adjustments
            .iter()
            .map(|a| SaleRecordAdjustment {
                source: a.source.to_owned(),
                source_id: a.source_id.clone(),
                label: a.label.clone(),
                amount_cents: a.amount.get(),
            })
            .collect(),
        original: sale.original.as_ref().map(|o| OriginalTicket {
            transaction_id: o.transaction_id.as_str().to_owned(),
            register_id: o.register_id.as_str().to_owned(),
            seq: o.seq,
        }),
    }
}

/// The columns [`record`] reads.
pub(crate) const RECORD: &str = "transaction_id, number, kind, store_id, seller_id, customer_id, session_id, \
     register_id, subtotal_cents, total_cents, item_count, change_cents, points_earned, coupon_code, issued_at, \
     emitted_at, original_transaction_id, original_register_id, original_seq, packed, late";

/// A sale's sealed record from its row, selected with the columns [`RECORD`].
pub(crate) fn record(row: &Row) -> Result<SaleRecord, StoreError> {
    let original_id: Option<String> = row.try_get("original_transaction_id")?;
    let original = match original_id {
        Some(transaction_id) => Some(OriginalTicket {
            transaction_id,
            register_id: row
                .try_get::<Option<String>>("original_register_id")?
                .unwrap_or_default(),
            seq: row.try_get::<Option<i64>>("original_seq")?.unwrap_or_default(),
        }),
        None => None,
    };
    // A document that does not read leaves its parts empty: the audit then finds the record
    // altered, which it is.
    let detail = packed::detail_of(row).and_then(|text| SaleDetail::read(&text)).ok();
    let (lines, tenders, vat, adjustments) = match detail {
        Some(detail) => (detail.lines, detail.tenders, detail.vat, detail.adjustments),
        None => Default::default(),
    };
    let record = SaleRecord {
        transaction_id: row.try_get("transaction_id")?,
        number: row.try_get("number")?,
        kind: row.try_get("kind")?,
        store_id: row.try_get("store_id")?,
        seller_id: row.try_get("seller_id")?,
        customer_id: row.try_get("customer_id")?,
        session_id: row.try_get("session_id")?,
        register_id: row.try_get("register_id")?,
        subtotal_cents: row.try_get("subtotal_cents")?,
        total_cents: row.try_get("total_cents")?,
        item_count: row.try_get("item_count")?,
        change_cents: row.try_get("change_cents")?,
        points_earned: row.try_get("points_earned")?,
        coupon_code: row.try_get("coupon_code")?,
        issued_at: row.try_get("issued_at")?,
        emitted_at: row.try_get("emitted_at")?,
        late: row.try_get::<Option<i64>>("late")?.is_some(),
        lines,
        tenders,
        vat,
        adjustments,
        original,
    };
    Ok(record)
}
