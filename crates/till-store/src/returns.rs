//! What a return needs to know about the sale it gives goods back from, and the returns made
//! against a sale. The return itself is committed like any ticket ([`crate::sales`]).

use crate::db::Store;
use crate::error::{Stale, StoreError};
use crate::packed;
use crate::sale_detail::SaleDetail;
use crate::sql::{Row, query};
pub use till_app::storage::sales::{OriginalLine, OriginalSale, ReturnSummary, ReturnedCounts};
use till_core::fiscal::payload::SaleRecordLine;
use till_core::ids::{CustomerId, RegisterId, SkuId, TransactionId};
use till_core::instant::from_micros;
use till_core::money::{Cents, VatRate};
use till_core::returns::{ReturnableLine, ReturnableSale};
use till_core::sale::TenderMethod;
use till_core::stored_value::PaidWith;

/// The `returned_units` a return writes, and the value it requires to find there.
pub(crate) struct ReturnedUnitsUpdate {
    pub before: String,
    pub after: String,
}

/// The returns made against one original sale, found through `sales_by_original`, which holds
/// returns alone on SQLite.
const RETURNS_AGAINST: &str = "SELECT transaction_id, credit_note, register_id, fiscal_seq, total_cents, points_earned, \
         emitted_at, packed \
     FROM sales WHERE original_transaction_id = $1 AND fiscal_seq > 0 ORDER BY emitted_at, transaction_id";

impl Store {
    pub async fn original_sale(&self, transaction_id: &TransactionId) -> Result<Option<OriginalSale>, StoreError> {
        let Some(sale) = query(
            "SELECT kind, store_id, register_id, fiscal_seq, customer_id, total_cents, points_earned, refunded_cents, \
                 points_returned, packed, returned_units \
             FROM sales WHERE transaction_id = $1 AND fiscal_seq > 0",
        )
        .bind(transaction_id.as_str())
        .fetch_optional(self.reader())
        .await?
        else {
            return Ok(None);
        };
        let detail = SaleDetail::read(&packed::detail_of(&sale)?)?;
        let total = cents(&sale, "total_cents")?;
        let paid = detail.tenders.iter().map(|tender| {
            let method = TenderMethod::parse(&tender.method).ok_or_else(|| corrupt("tender method"))?;
            Ok((method, amount(tender.applied_cents, "tender")?))
        });
        let paid = paid.collect::<Result<Vec<_>, StoreError>>()?;
        let paid_with = PaidWith::of(total, paid).ok_or_else(|| corrupt("tenders"))?;
        let lines = detail.lines;
        let sold = lines.iter().map(|line| line.quantity).collect();
        let counted = ReturnedCounts::read(sale.try_get("returned_units")?, sold)?;
        let returned = counted.returned.clone();
        let mut returnable_lines = Vec::with_capacity(lines.len());
        let mut originals = Vec::with_capacity(lines.len());
        for (line_no, (line, returned)) in lines.into_iter().zip(returned).enumerate() {
            returnable_lines.push(ReturnableLine {
                line_id: line.line_id,
                quantity: line.quantity,
                returned,
                vat_rate: VatRate::from_hundredths(line.vat_rate).ok_or_else(|| corrupt("VAT rate"))?,
                gross: amount(line.gross_cents, "gross")?,
                promotion: amount(line.promotion_cents, "promotion")?,
                declared: amount(line.declared_cents, "declared reduction")?,
                net: amount(line.net_cents, "net")?,
            });
            originals.push(OriginalLine {
                line_no: line_no as i64,
                sku_id: line.sku_id.map(SkuId::from_trusted),
                label: line.label,
                unit_price: amount(line.unit_price_cents, "unit price")?,
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
            paid_with,
            returnable: ReturnableSale {
                total,
                points_earned: sale.try_get("points_earned")?,
                refunded: cents(&sale, "refunded_cents")?,
                points_returned: sale.try_get("points_returned")?,
                lines: returnable_lines,
            },
            lines: originals,
            counted,
        }))
    }

    pub async fn returns_against(&self, transaction_id: &TransactionId) -> Result<Vec<ReturnSummary>, StoreError> {
        let rows = query(RETURNS_AGAINST)
            .bind(transaction_id.as_str())
            .fetch_all(self.reader())
            .await?;
        let mut returns = Vec::with_capacity(rows.len());
        for row in &rows {
            let lines = lines_of(row)?
                .into_iter()
                .map(|line| (line.line_id, line.quantity, line.net_cents))
                .collect();
            returns.push(ReturnSummary {
                transaction_id: row.try_get("transaction_id")?,
                credit_note: row.try_get("credit_note")?,
                register_id: row.try_get("register_id")?,
                seq: row.try_get("fiscal_seq")?,
                total_cents: row.try_get("total_cents")?,
                points_earned: row.try_get("points_earned")?,
                emitted_at: from_micros(row.try_get("emitted_at")?),
                lines,
            });
        }
        Ok(returns)
    }
}

/// The lines in the document of the sale `row`, selected with its `packed` column.
fn lines_of(row: &Row) -> Result<Vec<SaleRecordLine>, StoreError> {
    Ok(SaleDetail::read(&packed::detail_of(row)?)?.lines)
}

fn amount(cents: i64, what: &str) -> Result<Cents, StoreError> {
    Cents::new(cents).ok_or_else(|| corrupt(what))
}

fn cents(row: &Row, column: &str) -> Result<Cents, StoreError> {
    amount(row.try_get(column)?, column)
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Corrupt(format!("sale {what} out of range"))
}

/// How a sale's returned units are read from its row and updated.
pub(crate) trait Counting: Sized {
    fn read(stored: Option<String>, sold: Vec<i64>) -> Result<Self, StoreError>;
    fn adding(&self, units: &[(i64, i64)]) -> Result<ReturnedUnitsUpdate, StoreError>;
}

impl Counting for ReturnedCounts {
    /// Counts kept in the sale's row: `stored` is its `returned_units`, `sold` the units of
    /// each of its lines.
    fn read(stored: Option<String>, sold: Vec<i64>) -> Result<Self, StoreError> {
        let returned = match &stored {
            None => vec![0; sold.len()],
            Some(text) => serde_json::from_str::<Vec<i64>>(text).map_err(|_| corrupt("returned units"))?,
        };
        if returned.len() != sold.len() {
            return Err(corrupt("returned units"));
        }
        Ok(ReturnedCounts { stored, returned, sold })
    }

    /// The update that adds `units` returned on the line at each position. A count that has
    /// moved since it was read, or that would pass what was sold, is stale.
    fn adding(&self, units: &[(i64, i64)]) -> Result<ReturnedUnitsUpdate, StoreError> {
        let counts = self;
        let mut returned = counts.returned.clone();
        for &(line_no, more) in units {
            let index = usize::try_from(line_no).map_err(|_| corrupt("line number"))?;
            let (Some(count), Some(sold)) = (returned.get_mut(index), counts.sold.get(index)) else {
                return Err(corrupt("line number"));
            };
            match count.checked_add(more) {
                Some(total) if (0..=*sold).contains(&total) => *count = total,
                _ => return Err(StoreError::Stale(Stale::ReturnedUnitsMoved)),
            }
        }
        let after = serde_json::to_string(&returned).map_err(|_| corrupt("returned units"))?;
        Ok(ReturnedUnitsUpdate {
            before: counts.stored.clone().unwrap_or_default(),
            after,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::RETURNS_AGAINST;
    use crate::db::{migrated_scratch_database, query_plan};

    /// A plain sale names no original sale, so it leaves no entry in the returns' index; the
    /// look-up of a sale's returns still goes through that index rather than a scan of sales.
    #[tokio::test]
    async fn returns_are_found_through_an_index_that_plain_sales_stay_out_of() {
        let dir = tempfile::tempdir().unwrap();
        let conn = migrated_scratch_database(dir.path()).await;
        let partial: bool = conn
            .query_row(
                "SELECT partial FROM pragma_index_list('sales') WHERE name = 'sales_by_original'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert!(
            partial,
            "the index holds the sales that name an original sale, and no others"
        );
        let steps = query_plan(&conn, RETURNS_AGAINST, &["a sale id"]);
        assert!(
            steps.iter().any(|step| step.contains("USING INDEX sales_by_original")),
            "{steps:?}"
        );
    }
}
