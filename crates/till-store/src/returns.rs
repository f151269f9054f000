//! What a return needs to know about the sale it gives goods back from, and the returns made
//! against a sale. The return itself is committed like any ticket ([`crate::sales`]).

use crate::db::Store;
use crate::error::StoreError;
use crate::sql::{Row, query};
use jiff::Timestamp;
use till_core::ids::{CustomerId, RegisterId, SkuId, TransactionId};
use till_core::instant::from_micros;
use till_core::money::{Cents, VatRate};
use till_core::returns::{ReturnableLine, ReturnableSale};

/// A committed sale as a return reads it.
#[derive(Clone, Debug)]
pub struct OriginalSale {
    pub transaction_id: TransactionId,
    /// `sale`, `rental`, `repair` or `return`.
    pub kind: String,
    pub store_id: String,
    pub register_id: RegisterId,
    /// Its ticket's sequence in the register's chain.
    pub seq: i64,
    pub customer_id: Option<CustomerId>,
    pub returnable: ReturnableSale,
    /// In the sale's line order, alongside `returnable.lines`.
    pub lines: Vec<OriginalLine>,
}

/// What a return repeats of an original line.
#[derive(Clone, Debug)]
pub struct OriginalLine {
    pub line_no: i64,
    /// `None` for a custom line, which moves no stock.
    pub sku_id: Option<SkuId>,
    pub label: Option<String>,
    pub unit_price: Cents,
}

/// A return made against a sale.
#[derive(Clone, Debug)]
pub struct ReturnSummary {
    pub transaction_id: String,
    pub credit_note: Option<String>,
    pub register_id: String,
    pub seq: i64,
    /// Negative: the refund.
    pub total_cents: i64,
    pub points_earned: i64,
    pub emitted_at: Timestamp,
    /// `(original line id, units, refund)` per returned line.
    pub lines: Vec<(String, i64, i64)>,
}

impl Store {
    /// The sale `transaction_id` with what remains returnable of it.
    pub async fn original_sale(&self, transaction_id: &TransactionId) -> Result<Option<OriginalSale>, StoreError> {
        let mut conn = self.reader().acquire().await?;
        let Some(sale) = query(
            "SELECT kind, store_id, register_id, fiscal_seq, customer_id, total_cents, points_earned, refunded_cents, \
                 points_returned \
             FROM sales WHERE transaction_id = $1 AND fiscal_seq > 0",
        )
        .bind(transaction_id.as_str())
        .fetch_optional(&mut conn)
        .await?
        else {
            return Ok(None);
        };
        let rows = query(
            "SELECT line_no, line_id, sku_id, label, quantity, returned_quantity, unit_price_cents, vat_rate, \
                 gross_cents, promotion_cents, declared_cents, net_cents \
             FROM sale_lines WHERE transaction_id = $1 ORDER BY line_no",
        )
        .bind(transaction_id.as_str())
        .fetch_all(&mut conn)
        .await?;
        let mut returnable_lines = Vec::with_capacity(rows.len());
        let mut lines = Vec::with_capacity(rows.len());
        for row in &rows {
            let vat_rate: i64 = row.try_get("vat_rate")?;
            returnable_lines.push(ReturnableLine {
                line_id: row.try_get("line_id")?,
                quantity: row.try_get("quantity")?,
                returned: row.try_get("returned_quantity")?,
                vat_rate: VatRate::from_hundredths(vat_rate).ok_or_else(|| corrupt("VAT rate"))?,
                gross: cents(row, "gross_cents")?,
                promotion: cents(row, "promotion_cents")?,
                declared: cents(row, "declared_cents")?,
                net: cents(row, "net_cents")?,
            });
            lines.push(OriginalLine {
                line_no: row.try_get("line_no")?,
                sku_id: row.try_get::<Option<String>>("sku_id")?.map(SkuId::from_trusted),
                label: row.try_get("label")?,
                unit_price: cents(row, "unit_price_cents")?,
            });
        }
        Ok(Some(OriginalSale {
            transaction_id: transaction_id.clone(),
            kind: sale.try_get("kind")?,
            store_id: sale.try_get("store_id")?,
            register_id: RegisterId::from_trusted(sale.try_get("register_id")?),
            seq: sale.try_get("fiscal_seq")?,
            customer_id: sale
                .try_get::<Option<String>>("customer_id")?
                .map(CustomerId::from_trusted),
            returnable: ReturnableSale {
                total: cents(&sale, "total_cents")?,
                points_earned: sale.try_get("points_earned")?,
                refunded: cents(&sale, "refunded_cents")?,
                points_returned: sale.try_get("points_returned")?,
                lines: returnable_lines,
            },
            lines,
        }))
    }

    /// The returns made against `transaction_id`, oldest first.
    pub async fn returns_against(&self, transaction_id: &TransactionId) -> Result<Vec<ReturnSummary>, StoreError> {
        let mut conn = self.reader().acquire().await?;
        let rows = query(
            "SELECT transaction_id, credit_note, register_id, fiscal_seq, total_cents, points_earned, emitted_at \
             FROM sales WHERE original_transaction_id = $1 AND fiscal_seq > 0 ORDER BY emitted_at, transaction_id",
        )
        .bind(transaction_id.as_str())
        .fetch_all(&mut conn)
        .await?;
        let lines = query(
            "SELECT l.transaction_id, l.line_id, l.quantity, l.net_cents FROM sale_lines l \
             JOIN sales s ON s.transaction_id = l.transaction_id \
             WHERE s.original_transaction_id = $1 ORDER BY l.transaction_id, l.line_no",
        )
        .bind(transaction_id.as_str())
        .fetch_all(&mut conn)
        .await?;
        let mut returns = rows
            .iter()
            .map(|row| {
                Ok(ReturnSummary {
                    transaction_id: row.try_get("transaction_id")?,
                    credit_note: row.try_get("credit_note")?,
                    register_id: row.try_get("register_id")?,
                    seq: row.try_get("fiscal_seq")?,
                    total_cents: row.try_get("total_cents")?,
                    points_earned: row.try_get("points_earned")?,
                    emitted_at: from_micros(row.try_get("emitted_at")?),
                    lines: Vec::new(),
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        for row in &lines {
            let id: String = row.try_get("transaction_id")?;
            if let Some(summary) = returns.iter_mut().find(|r| r.transaction_id == id) {
                summary.lines.push((
                    row.try_get("line_id")?,
                    row.try_get("quantity")?,
                    row.try_get("net_cents")?,
                ));
            }
        }
        Ok(returns)
    }
}

fn cents(row: &Row, column: &str) -> Result<Cents, StoreError> {
    Cents::new(row.try_get(column)?).ok_or_else(|| corrupt(column))
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Corrupt(format!("sale {what} out of range"))
}
