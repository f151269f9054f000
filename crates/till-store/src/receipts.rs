//! Receipts: what a printed ticket shows, and its prints: the first is the original, every
//! later one a DUPLICATA sealed in the register's duplicate chain. Reading a receipt records
//! nothing.

use crate::db::Store;
use crate::error::StoreError;
use crate::journal;
use crate::sealer::Sealer;
use crate::snapshot::{SaleScope, sale_records};
use crate::sql::{Conn, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
use std::sync::Arc;
pub use till_app::storage::sales::{Print, Printed, Receipt, TenderInstrument};
use till_core::fiscal::ChainKind;
use till_core::fiscal::payload::{self, DuplicateRecord, SaleRecord, SaleRecordTender};
use till_core::ids::{PrintId, StoreId, TransactionId};
use till_core::instant::{from_micros, to_micros};
use till_core::sale::SaleType;
use till_core::stored_value::credit_note_number;
use till_core::stored_value::{InstrumentKind, code_lookup};

struct RecordPrint {
    transaction_id: String,
    print_id: Option<String>,
    /// The public page's token, kept if the sale has none yet.
    link_token: String,
    operator: String,
    now: i64,
    key: Arc<Sealer>,
}

fn print_from_row(row: &crate::sql::Row) -> Result<Print, StoreError> {
    Ok(Print {
        print_no: row.try_get("print_no")?,
        duplicate_seq: row.try_get("duplicate_seq")?,
        printed_at: from_micros(row.try_get("printed_at")?),
    })
}

impl Store {
    pub async fn receipt(&self, transaction_id: &TransactionId) -> Result<Option<Receipt>, StoreError> {
        let mut conn = self.reader().acquire().await?;
        let mut sales = sale_records(&mut conn, SaleScope::Transaction(transaction_id.as_str())).await?;
        let Some(sale) = sales.remove(transaction_id.as_str()) else {
            return Ok(None);
        };
        let entry = query(
            "SELECT e.seq, e.signature FROM fiscal_entries e JOIN sales s ON s.register_id = e.register_id \
                 AND s.fiscal_seq = e.seq \
             WHERE s.transaction_id = $1 AND e.kind = 'ticket'",
        )
        .bind(transaction_id.as_str())
        .fetch_one(&mut conn)
        .await?;
        let seller = query("SELECT display_name FROM staff WHERE subject = $1")
            .bind(&sale.seller_id)
            .fetch_optional(&mut conn)
            .await?;
        let mut instruments = Vec::with_capacity(sale.tenders.len());
        for tender in &sale.tenders {
            instruments.push(tender_instrument(&mut conn, &sale, tender, entry.try_get("seq")?).await?);
        }
        let prints = query(
            "SELECT print_no, duplicate_seq, printed_at FROM receipt_prints WHERE transaction_id = $1 \
             ORDER BY print_no",
        )
        .bind(transaction_id.as_str())
        .fetch_all(&mut conn)
        .await?
        .iter()
        .map(print_from_row)
        .collect::<Result<Vec<_>, _>>()?;
        let link = query("SELECT token FROM receipt_links WHERE transaction_id = $1")
            .bind(transaction_id.as_str())
            .fetch_optional(&mut conn)
            .await?;
        drop(conn);
        let store = self.get_store(&StoreId::from_trusted(sale.store_id.clone())).await?;
        Ok(Some(Receipt {
            instruments,
            seq: entry.try_get("seq")?,
            signature: entry.try_get("signature")?,
            store,
            seller_name: seller.map(|row| row.try_get("display_name")).transpose()?,
            sale,
            prints,
            link_token: link.map(|row| row.try_get("token")).transpose()?,
        }))
    }

    /// The sale whose public page `token` opens.
    pub async fn linked_receipt(&self, token: &str) -> Result<Option<TransactionId>, StoreError> {
        let row = query("SELECT transaction_id FROM receipt_links WHERE token = $1")
            .bind(token)
            .fetch_optional(self.reader())
            .await?;
        row.map(|row| row.try_get::<String>("transaction_id").map(TransactionId::from_trusted))
            .transpose()
    }

    pub async fn sale_record(
        &self,
        transaction_id: &TransactionId,
    ) -> Result<Option<(SaleRecord, Option<SaleRecord>)>, StoreError> {
        let mut conn = self.reader().acquire().await?;
        let mut sales = sale_records(&mut conn, SaleScope::Transaction(transaction_id.as_str())).await?;
        let Some(sale) = sales.remove(transaction_id.as_str()) else {
            return Ok(None);
        };
        let original = match &sale.original {
            Some(ticket) => sale_records(&mut conn, SaleScope::Transaction(&ticket.transaction_id))
                .await?
                .remove(&ticket.transaction_id),
            None => None,
        };
        Ok(Some((sale, original)))
    }

    pub async fn record_print(
        &self,
        transaction_id: &TransactionId,
        print_id: Option<&PrintId>,
        link_token: &str,
        operator: &str,
        now: Timestamp,
    ) -> Result<Printed, StoreError> {
        let input = RecordPrint {
            transaction_id: transaction_id.as_str().to_owned(),
            print_id: print_id.map(|id| id.as_str().to_owned()),
            link_token: link_token.to_owned(),
            operator: operator.to_owned(),
            now: to_micros(now),
            key: self.fiscal_key()?,
        };
        self.write(input, |c, i| Box::pin(record_print(c, i))).await
    }
}

/// The sale's public page token: `token`, unless the sale has one already.
pub(crate) async fn link_token(
    conn: &mut Conn,
    transaction_id: &str,
    token: &str,
    now: i64,
) -> Result<String, StoreError> {
    query(
        "INSERT INTO receipt_links (token, transaction_id, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (transaction_id) DO NOTHING",
    )
    .bind(token)
    .bind(transaction_id)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    query("SELECT token FROM receipt_links WHERE transaction_id = $1")
        .bind(transaction_id)
        .fetch_one(&mut *conn)
        .await?
        .try_get("token")
}

fn record_print<'a>(conn: &'a mut Conn, input: &'a RecordPrint) -> BoxFuture<'a, Result<Printed, StoreError>> {
    Box::pin(async move {
        // The counter's row lock orders concurrent prints of one receipt: a print sent twice
        // at once finds the first one's row once it holds the lock.
        query("UPDATE sales SET prints = prints WHERE transaction_id = $1")
            .bind(&input.transaction_id)
            .execute(&mut *conn)
            .await?;
        if let Some(print_id) = &input.print_id {
            let made = query(
                "SELECT print_no, duplicate_seq, printed_at FROM receipt_prints \
                 WHERE transaction_id = $1 AND print_id = $2",
            )
            .bind(&input.transaction_id)
            .bind(print_id)
            .fetch_optional(&mut *conn)
            .await?;
            if let Some(row) = made {
                return Ok(Printed {
                    print: print_from_row(&row)?,
                    replayed: true,
                    link_token: link_token(conn, &input.transaction_id, &input.link_token, input.now).await?,
                });
            }
        }
        let row = query(
            "UPDATE sales SET prints = prints + 1 WHERE transaction_id = $1 RETURNING prints, kind, fiscal_seq, register_id",
        )
        .bind(&input.transaction_id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(StoreError::NotFound("sale"))?;
        let print_no: i64 = row.try_get("prints")?;
        let register_id: String = row.try_get("register_id")?;
        let duplicate_seq = if print_no > 1 {
            let kind: String = row.try_get("kind")?;
            let record = DuplicateRecord {
                register_id: register_id.clone(),
                transaction_id: input.transaction_id.clone(),
                original_type: kind.to_uppercase(),
                original_seq: row.try_get("fiscal_seq")?,
                reprint: print_no - 1,
                operator: input.operator.clone(),
                printed_at: input.now,
            };
            let sealed = journal::append(
                conn,
                &register_id,
                ChainKind::Duplicate,
                &input.transaction_id,
                input.now,
                &input.key,
                |seq, previous| payload::duplicate(&record, seq, previous),
            )
            .await?;
            Some(sealed.seq)
        } else {
            None
        };
        query(
            "INSERT INTO receipt_prints (transaction_id, print_no, register_id, operator, printed_at, duplicate_seq, \
                 print_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(&input.transaction_id)
        .bind(print_no)
        .bind(&register_id)
        .bind(&input.operator)
        .bind(input.now)
        .bind(duplicate_seq)
        .bind(input.print_id.as_deref())
        .execute(&mut *conn)
        .await?;
        let link_token = link_token(conn, &input.transaction_id, &input.link_token, input.now).await?;
        Ok(Printed {
            link_token,
            print: Print {
                print_no,
                duplicate_seq,
                printed_at: from_micros(input.now),
            },
            replayed: false,
        })
    })
}

/// How a receipt finds the instrument a tender moved.
enum Found {
    /// By the digest the sealed record names it by.
    Digest(InstrumentKind, String),
    /// A card by its code's hash, as records sealed before codes were masked name it.
    Lookup(String),
    /// A credit note by its number: the one a return issued, or one a sale sealed before codes
    /// were masked drew on.
    Number(String),
}

/// The gift card or credit note `tender` of `sale` moved, with its balance after the sale. A
/// return's credit-note tender names the credit note the return issued, with its code.
async fn tender_instrument(
    conn: &mut Conn,
    sale: &SaleRecord,
    tender: &SaleRecordTender,
    seq: i64,
) -> Result<Option<TenderInstrument>, StoreError> {
    let issued = sale.kind == SaleType::Return.as_str() && tender.method == "credit_note";
    let found = match (tender.method.as_str(), &tender.reference_digest, &tender.reference) {
        ("credit_note", _, _) if issued => Found::Number(credit_note_number(&sale.register_id, seq)),
        ("gift_card", Some(digest), _) => Found::Digest(InstrumentKind::GiftCard, digest.clone()),
        ("credit_note", Some(digest), _) => Found::Digest(InstrumentKind::CreditNote, digest.clone()),
        ("gift_card", None, Some(code)) => Found::Lookup(code_lookup(code)),
        ("credit_note", None, Some(number)) => Found::Number(number.clone()),
        _ => return Ok(None),
    };
    let kind = match &found {
        Found::Digest(kind, _) => *kind,
        Found::Lookup(_) => InstrumentKind::GiftCard,
        Found::Number(_) => InstrumentKind::CreditNote,
    };
    const MOVED: &str = "SELECT v.label, v.code, a.balance_after_cents FROM stored_value v \
         JOIN stored_value_activities a ON a.instrument_id = v.instrument_id";
    let read = match &found {
        Found::Digest(kind, digest) => query(format!(
            "{MOVED} WHERE v.kind = $1 AND v.digest = $2 AND a.transaction_id = $3 ORDER BY a.activity_id DESC"
        ))
        .bind(kind.as_str())
        .bind(digest.as_str()),
        Found::Lookup(lookup) => query(format!(
            "{MOVED} WHERE v.kind = 'gift_card' AND v.lookup = $1 AND a.transaction_id = $2 \
             ORDER BY a.activity_id DESC"
        ))
        .bind(lookup.as_str()),
        // The kind written out, so that SQLite takes the index of credit notes by number.
        Found::Number(number) => query(format!(
            "{MOVED} WHERE v.kind = 'credit_note' AND v.label = $1 AND a.transaction_id = $2 \
             ORDER BY a.activity_id DESC"
        ))
        .bind(number.as_str()),
    };
    let row = read
        .bind(sale.transaction_id.as_str())
        .fetch_optional(&mut *conn)
        .await?;
    row.map(|row| {
        Ok(TenderInstrument {
            kind,
            label: row.try_get("label")?,
            balance_after: row.try_get("balance_after_cents")?,
            code: if issued { row.try_get("code")? } else { None },
        })
    })
    .transpose()
}
