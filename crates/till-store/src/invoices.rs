//! Invoices for business customers (docs/invoices.md): each kept with the answer and the XML
//! it was issued with, each ticket linked to one invoice only, numbered from the store's
//! counter of the year, and sealed in the event chain of its first ticket's register, all in
//! one transaction.
//!
//! The counter row is taken before anything else is written: on PostgreSQL its row lock orders
//! the store's concurrent invoices, and the checks made after it see what the one before
//! committed. An invoice refused after the counter moved gives its number back, and a rolled
//! back transaction takes the counter back with it, so numbers have no gaps.

use crate::db::Store;
use crate::error::{Classified, StoreError};
use crate::journal;
use crate::page::{Keyset, Newest, Window};
use crate::sealer::Sealer;
use crate::sql::{Conn, Row, query};
use futures::future::BoxFuture;
use std::sync::Arc;
use till_app::storage::ReadAt;
pub use till_app::storage::invoices::{
    InvoiceFilter, InvoiceSummary, IssueOutcome, NewInvoice, SealedInvoice, StoredInvoice,
};
use till_core::ids::{InvoiceId, StoreId, TransactionId};
use till_core::instant::{from_micros, to_micros};
use till_core::invoice::{InvoiceAnswer, InvoiceNumber, InvoiceRefusal};

struct Issuing {
    new: NewInvoice,
    key: Arc<Sealer>,
}

impl Store {
    pub async fn issue_invoice(&self, new: NewInvoice) -> Result<IssueOutcome, StoreError> {
        let input = Issuing {
            new,
            key: self.fiscal_key()?,
        };
        self.write(input, |c, i| Box::pin(issue(c, i))).await
    }

    pub async fn invoice(&self, invoice_id: &InvoiceId) -> Result<Option<StoredInvoice>, StoreError> {
        let mut conn = self.reader().acquire().await?;
        find(&mut conn, invoice_id.as_str()).await
    }

    pub async fn invoice_covering(&self, transaction_id: &TransactionId) -> Result<Option<InvoiceSummary>, StoreError> {
        let mut conn = self.reader().acquire().await?;
        let row = query(format!(
            "{SELECT_SUMMARY} WHERE invoice_id = (SELECT invoice_id FROM invoice_tickets WHERE transaction_id = $1)"
        ))
        .bind(transaction_id.as_str())
        .fetch_optional(&mut conn)
        .await?;
        match row {
            Some(row) => Ok(Some(summary(&mut conn, &row).await?)),
            None => Ok(None),
        }
    }

    pub async fn list_invoices(
        &self,
        filter: &InvoiceFilter,
        window: &Window<Newest<InvoiceId>>,
        at: ReadAt,
    ) -> Result<Vec<InvoiceSummary>, StoreError> {
        let mut keyset = Keyset::new(SELECT_SUMMARY);
        keyset.equal_if("store_id", filter.store_id.as_ref().map(StoreId::as_str));
        if let Some(from) = filter.from {
            keyset.compare("issued_on", ">=", from.to_string());
        }
        if let Some(to) = filter.to {
            keyset.compare("issued_on", "<=", to.to_string());
        }
        let statement = keyset.newest_first("issued_at", "invoice_id", window.after.as_ref(), window.take);
        let mut conn = self.reader_at(at).acquire().await?;
        let rows = statement.fetch_all(&mut conn).await?;
        let mut listed = Vec::with_capacity(rows.len());
        for row in &rows {
            listed.push(summary(&mut conn, row).await?);
        }
        Ok(listed)
    }

    pub async fn sealed_invoices(&self, register_id: &str) -> Result<Vec<SealedInvoice>, StoreError> {
        let rows = query("SELECT number, event_seq, xml FROM invoices WHERE register_id = $1 ORDER BY event_seq")
            .bind(register_id)
            .fetch_all(self.reader())
            .await?;
        rows.iter()
            .map(|row| {
                Ok(SealedInvoice {
                    number: row.try_get("number")?,
                    event_seq: row.try_get("event_seq")?,
                    xml: row.try_get::<String>("xml")?.into_bytes(),
                })
            })
            .collect()
    }
}

fn issue<'a>(conn: &'a mut Conn, input: &'a Issuing) -> BoxFuture<'a, Result<IssueOutcome, StoreError>> {
    Box::pin(async move {
        let new = &input.new;
        let draft = &new.draft;
        if let Some(outcome) = asked_before(conn, new).await? {
            return Ok(outcome);
        }
        let store_id = draft.store_id.as_str();
        let year = draft.issued_on.year();
        let seq = take_number(conn, store_id, year).await?;
        // Taken: the invoice before this one on the counter has committed, and what it did is
        // seen from here on.
        if let Some(outcome) = asked_before(conn, new).await? {
            give_back_number(conn, store_id, year).await?;
            return Ok(outcome);
        }
        let issued = u64::try_from(seq)
            .ok()
            .and_then(|seq| InvoiceNumber::of(draft.store_id.clone(), year, seq).ok())
            .ok_or(InvoiceRefusal::NumberOfAnotherStoreOrYear)
            .and_then(|number| draft.issue(number));
        let issued = match issued {
            Ok(issued) => issued,
            Err(refusal) => {
                give_back_number(conn, store_id, year).await?;
                return Ok(IssueOutcome::Refused(refusal));
            }
        };
        let now = to_micros(draft.issued_at);
        let sealed = journal::append_event(
            conn,
            &issued.register_id,
            issued.seal.event,
            &issued.seal.detail,
            now,
            &input.key,
        )
        .await?;
        let answer = InvoiceAnswer::of(&issued, sealed.seq);
        let answer_text = serde_json::to_string(&answer).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let xml = String::from_utf8(issued.xml.clone())
            .map_err(|_| StoreError::Corrupt("an invoice's XML that is not UTF-8".to_owned()))?;
        let credits = issued.credits.as_ref().map(|(id, _)| id.as_str().to_owned());
        let number = issued.invoice.number.to_string();
        query(
            "INSERT INTO invoices (invoice_id, store_id, number, year, seq, kind, credits_invoice_id, issued_on, \
             issued_at, fingerprint, buyer_name, total_cents, register_id, event_seq, answer, xml) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
        )
        .bind(draft.invoice_id.as_str())
        .bind(store_id)
        .bind(&number)
        .bind(i64::from(year))
        .bind(seq)
        .bind(if credits.is_some() { CREDIT } else { INVOICE })
        .bind(credits)
        .bind(draft.issued_on.to_string())
        .bind(now)
        .bind(&new.fingerprint)
        .bind(draft.buyer.name.as_str())
        .bind(issued.invoice.totals.with_vat.get())
        .bind(issued.register_id.as_str())
        .bind(sealed.seq)
        .bind(answer_text.clone())
        .bind(xml)
        .execute(&mut *conn)
        .await
        .map_err(StoreError::raced_on_key)?;
        for (position, ticket) in issued.invoice.tickets.iter().enumerate() {
            query("INSERT INTO invoice_tickets (transaction_id, invoice_id, position) VALUES ($1, $2, $3)")
                .bind(ticket.transaction_id.as_str())
                .bind(draft.invoice_id.as_str())
                .bind(i64::try_from(position).unwrap_or(i64::MAX))
                .execute(&mut *conn)
                .await
                .map_err(StoreError::raced_on_key)?;
        }
        Ok(IssueOutcome::Issued(StoredInvoice {
            invoice_id: draft.invoice_id.clone(),
            store_id: draft.store_id.clone(),
            number,
            credit: issued.credits.is_some(),
            issued_on: draft.issued_on,
            issued_at: from_micros(now),
            fingerprint: new.fingerprint.clone(),
            answer: answer_text,
            xml: issued.xml,
            transaction_ids: issued
                .invoice
                .tickets
                .iter()
                .map(|t| TransactionId::from_trusted(t.transaction_id.clone()))
                .collect(),
        }))
    })
}

const INVOICE: &str = "invoice";
const CREDIT: &str = "credit";

/// What an earlier invoice says of this request: its id answered again (or taken), or one of
/// its tickets on another invoice.
async fn asked_before(conn: &mut Conn, new: &NewInvoice) -> Result<Option<IssueOutcome>, StoreError> {
    if let Some(earlier) = find(conn, new.draft.invoice_id.as_str()).await? {
        return Ok(Some(if earlier.fingerprint == new.fingerprint {
            IssueOutcome::Replayed(earlier)
        } else {
            IssueOutcome::IdTaken(earlier)
        }));
    }
    for ticket in &new.draft.tickets {
        let row = query(
            "SELECT i.number FROM invoice_tickets t JOIN invoices i ON i.invoice_id = t.invoice_id \
             WHERE t.transaction_id = $1",
        )
        .bind(ticket.transaction_id.as_str())
        .fetch_optional(&mut *conn)
        .await?;
        if let Some(row) = row {
            return Ok(Some(IssueOutcome::AlreadyInvoiced {
                transaction_id: TransactionId::from_trusted(ticket.transaction_id.clone()),
                number: row.try_get("number")?,
            }));
        }
    }
    Ok(None)
}

/// Advances the store's counter of `year` and answers the number taken. On PostgreSQL the
/// upsert locks the row until the transaction ends; SQLite has one writer.
async fn take_number(conn: &mut Conn, store_id: &str, year: i16) -> Result<i64, StoreError> {
    let row = query(
        "INSERT INTO invoice_numbers (store_id, year, last_seq) VALUES ($1, $2, 1) \
         ON CONFLICT (store_id, year) DO UPDATE SET last_seq = invoice_numbers.last_seq + 1 RETURNING last_seq",
    )
    .bind(store_id)
    .bind(i64::from(year))
    .fetch_one(&mut *conn)
    .await?;
    row.try_get("last_seq")
}

/// Gives back the number taken in this transaction, for an invoice not kept.
async fn give_back_number(conn: &mut Conn, store_id: &str, year: i16) -> Result<(), StoreError> {
    query("UPDATE invoice_numbers SET last_seq = last_seq - 1 WHERE store_id = $1 AND year = $2")
        .bind(store_id)
        .bind(i64::from(year))
        .execute(&mut *conn)
        .await?;
    Ok(())
}

const SELECT_STORED: &str = "SELECT invoice_id, store_id, number, kind, issued_on, issued_at, fingerprint, answer, xml \
     FROM invoices WHERE invoice_id = $1";

async fn find(conn: &mut Conn, invoice_id: &str) -> Result<Option<StoredInvoice>, StoreError> {
    let Some(row) = query(SELECT_STORED).bind(invoice_id).fetch_optional(&mut *conn).await? else {
        return Ok(None);
    };
    let transaction_ids = tickets_of(conn, invoice_id).await?;
    Ok(Some(StoredInvoice {
        invoice_id: InvoiceId::from_trusted(row.try_get("invoice_id")?),
        store_id: StoreId::from_trusted(row.try_get("store_id")?),
        number: row.try_get("number")?,
        credit: kind_of(&row)?,
        issued_on: issued_on(&row)?,
        issued_at: from_micros(row.try_get("issued_at")?),
        fingerprint: row.try_get("fingerprint")?,
        answer: row.try_get("answer")?,
        xml: row.try_get::<String>("xml")?.into_bytes(),
        transaction_ids,
    }))
}

async fn tickets_of(conn: &mut Conn, invoice_id: &str) -> Result<Vec<TransactionId>, StoreError> {
    let rows = query("SELECT transaction_id FROM invoice_tickets WHERE invoice_id = $1 ORDER BY position")
        .bind(invoice_id)
        .fetch_all(&mut *conn)
        .await?;
    rows.iter()
        .map(|row| Ok(TransactionId::from_trusted(row.try_get("transaction_id")?)))
        .collect()
}

const SELECT_SUMMARY: &str = "SELECT invoice_id, store_id, number, kind, credits_invoice_id, issued_on, issued_at, \
     buyer_name, total_cents FROM invoices";

async fn summary(conn: &mut Conn, row: &Row) -> Result<InvoiceSummary, StoreError> {
    let invoice_id: String = row.try_get("invoice_id")?;
    let transaction_ids = tickets_of(conn, &invoice_id).await?;
    Ok(InvoiceSummary {
        invoice_id: InvoiceId::from_trusted(invoice_id),
        store_id: StoreId::from_trusted(row.try_get("store_id")?),
        number: row.try_get("number")?,
        credit: kind_of(row)?,
        credits: row
            .try_get::<Option<String>>("credits_invoice_id")?
            .map(InvoiceId::from_trusted),
        issued_on: issued_on(row)?,
        issued_at: from_micros(row.try_get("issued_at")?),
        buyer_name: row.try_get("buyer_name")?,
        total_cents: row.try_get("total_cents")?,
        transaction_ids,
    })
}

fn kind_of(row: &Row) -> Result<bool, StoreError> {
    let kind: String = row.try_get("kind")?;
    match kind.as_str() {
        INVOICE => Ok(false),
        CREDIT => Ok(true),
        other => Err(StoreError::Corrupt(format!("an invoice of kind {other}"))),
    }
}

fn issued_on(row: &Row) -> Result<jiff::civil::Date, StoreError> {
    let text: String = row.try_get("issued_on")?;
    text.parse()
        .map_err(|_| StoreError::Corrupt(format!("an invoice issued on {text}")))
}
