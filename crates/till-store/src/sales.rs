//! Committing a sale: the sale with its lines, tenders, VAT and reductions, stock, loyalty,
//! the fiscal seal and the stored answer, in one transaction. Idempotent by transaction id.

use crate::batch::Batch;
use crate::closures;
use crate::customers;
use crate::db::Store;
use crate::elevation;
use crate::engine::Writers;
use crate::error::{Classified, Rule, Stale, StoreError};
use crate::feed::NewEvent;
use crate::journal::{self, OpenDay, Place, Signed, jet};
use crate::late_sales;
use crate::metrics::{SALE_COMMITS, SALE_PREDICTIONS_MISSED};
use crate::packed;
use crate::payments;
use crate::returns::Counting;
use crate::sale_detail::SaleDetail;
use crate::sale_row;
use crate::sealer::Sealer;
use crate::sql::{Conn, query};
use crate::stock;
use crate::stored_value;
use futures::future::BoxFuture;
use jiff::Timestamp;
use std::sync::Arc;
pub use till_app::storage::sales::{NewSale, ReturnOf, SaleOutcome};
pub use till_core::committed::{Adjustment, NewSaleLine, Reader, RenderWithCreditNote, ReturnedLine, SaleAnswer};
use till_core::events::EventType;
use till_core::fiscal::ChainKind;
use till_core::fiscal::payload::{self, SaleRecord};
use till_core::ids::{CouponCode, SessionId, StoreId, TransactionId};
use till_core::instant::to_micros;
use till_core::sale::SaleType;
use till_core::stock::StockReason;
use till_core::store::Timezone;
use till_core::stored_value::{InstrumentDigestKey, credit_note_number};

struct CommitSale {
    sale: NewSale,
    /// The sealed record and its digest, computed before the commit: they do not depend on
    /// the ticket's place in the chain, and the commit is the one path every sale of a
    /// register takes in turn.
    record: SaleRecord,
    digest: String,
    /// The record's lines, tenders, VAT and reductions as the sale row keeps them.
    detail: String,
    /// The answer and the document packed for the sale's row, here on the request's task
    /// rather than on SQLite's writer; `None` for an answer naming a credit note, which is
    /// only written once the ticket has its place.
    packed: Option<Vec<u8>>,
    key: Arc<Sealer>,
    /// Names the gift cards and credit notes the ticket writes by their digests.
    instrument_key: Arc<InstrumentDigestKey>,
    /// The ticket signed ahead for the place its chain was expected at, if one was.
    presigned: Option<Signed>,
}

/// A committed sale: its ticket's place and signature, the stored answer, and the day it was
/// booked on when the commit read it.
struct Booked {
    place: Place,
    signature: String,
    response: String,
    day: Option<OpenDay>,
}

impl Store {
    pub async fn commit_sale(&self, sale: NewSale) -> Result<SaleOutcome, StoreError> {
        let key = self.fiscal_key()?;
        let instrument_key = self.instrument_key().await?;
        let transaction_id = sale.transaction_id.clone();
        let (session_id, emitted_at) = (sale.session_id.clone(), sale.emitted_at);
        let record = sale_row::sealed_record(&sale, &instrument_key);
        let digest = record.digest();
        let detail = SaleDetail::write(&record)?;
        let packed = match &sale.response {
            SaleAnswer::Ready(body) => Some(packed::pack(body, &detail)?),
            SaleAnswer::NamingCreditNote(_) => None,
        };
        let (register_id, late) = (sale.register_id.clone(), sale.late);
        let guess = self.ticket_heads().next(register_id.as_str());
        // Signed here, on the request's task, for the place the register's chain is expected
        // to give it next: on SQLite the writer thread, whose time every sale of every
        // register shares, then does not spend a signature's time on a correct guess.
        let presigned = guess
            .as_ref()
            .map(|guess| sign_ticket(&record, &digest, guess.place.clone(), &key))
            .transpose()?;
        let input = CommitSale {
            sale,
            record,
            digest,
            detail,
            packed,
            key,
            instrument_key,
            presigned,
        };
        let (guessed, trusted_day, follows_late) = match guess {
            Some(guess) => (
                Some(guess.place),
                guess.day.filter(|_| guess.trusted),
                guess.follows_late,
            ),
            None => (None, None, false),
        };
        let booked = match trusted_day {
            // The first late sale after a gap records a technical event, which the checked
            // path writes; the late sales after it in a till's queue need none.
            Some(day) if !late || follows_late => self.commit_predicted(&input, &day).await?,
            _ => None,
        };
        let booked = match booked {
            Some(booked) => {
                metrics::counter!(SALE_COMMITS, "path" => "one_statement").increment(1);
                Ok(booked)
            }
            None => {
                let booked = self.write(input, |c, i| Box::pin(commit(c, i))).await;
                if booked.is_ok() {
                    metrics::counter!(SALE_COMMITS, "path" => "checked").increment(1);
                }
                booked
            }
        };
        match booked {
            Ok(booked) => {
                self.ticket_heads().committed(
                    register_id.as_str(),
                    &booked.place,
                    booked.signature,
                    booked.day,
                    late,
                    guessed.as_ref(),
                );
                Ok(SaleOutcome::Committed {
                    fiscal_seq: booked.place.seq,
                    response: booked.response,
                })
            }
            Err(error) if error.is_refused_write() => {
                self.refusal_cause(&transaction_id, &session_id, emitted_at, error)
                    .await
            }
            Err(other) => Err(other),
        }
    }

    /// Where batches run alone (PostgreSQL): a sale that spends no approval and no coupon, is
    /// no return, and whose stored value is only drawn on (see
    /// [`stored_value::in_one_statement`]), in one statement outside any transaction, when its
    /// register's chain head and day are as this node last left them. The statement claims
    /// the head only if it still stands there, was not held by a closing meanwhile, and the
    /// day is still the register's open one, and each card, credit note or customer's points
    /// only where the balance allows; then every write in it lands, or none does. One round
    /// trip where the checked path takes four or more.
    ///
    /// `None` sends the sale down the checked path, which finds out and answers whatever
    /// stopped it here: another node's ticket, a closing, a twin, a closed session.
    async fn commit_predicted(&self, input: &CommitSale, day: &OpenDay) -> Result<Option<Booked>, StoreError> {
        let sale = &input.sale;
        let plain = sale.spends_grant.is_none()
            && sale.coupon_code.is_none()
            && sale.original.is_none()
            && sale.relies_on_groups.is_empty()
            && sale.captures.is_empty();
        if !self.batches_run_alone() || !plain || !day.covers(sale.emitted_at) {
            return Ok(None);
        }
        let Some(stored_value) = stored_value::in_one_statement(sale) else {
            return Ok(None);
        };
        let Some(signed) = input.presigned.clone() else {
            return Ok(None);
        };
        let (register, now) = (sale.register_id.as_str(), to_micros(sale.emitted_at));
        let place = signed.place.clone();
        let mut batch = Batch::default();
        batch.push_required(
            "UPDATE fiscal_heads SET last_seq = $3, last_signature = $4 \
             WHERE register_id = $1 AND kind = $2 AND last_seq = $5 AND last_signature = $6 AND holds = $7 \
                 AND EXISTS (SELECT 1 FROM registers r WHERE r.register_id = $1 AND r.open_day = $8 \
                     AND (r.closed_through IS NULL OR r.closed_through < $8) \
                     AND COALESCE((SELECT s.timezone FROM stores s WHERE s.store_id = r.store_id), $9) = $10) \
             RETURNING last_seq",
            vec![
                register.into(),
                ChainKind::Ticket.as_str().into(),
                place.seq.into(),
                (&signed.signature).into(),
                (place.seq - 1).into(),
                place.previous.as_deref().into(),
                place.holds.into(),
                day.date.to_string().into(),
                Timezone::DEFAULT.into(),
                day.zone_name.as_str().into(),
            ],
        );
        let response = push_sale(&mut batch, self.writers(), input, place.seq, now)?;
        stored_value.push(&mut batch, now);
        let reference = sale.transaction_id.as_str();
        let sealed = journal::push_entry(
            &mut batch,
            register,
            ChainKind::Ticket,
            signed,
            reference,
            now,
            &input.key,
        );
        match self.write_one_statement(batch).await {
            Ok(()) => Ok(Some(Booked {
                place,
                signature: sealed.signature,
                response,
                day: None,
            })),
            Err(error) if error.is_refused_write() || error.is_retryable() => {
                metrics::counter!(SALE_PREDICTIONS_MISSED).increment(1);
                self.ticket_heads().forget(register);
                Ok(None)
            }
            Err(other) => Err(other),
        }
    }

    /// Why the sale's row was refused, found once its transaction is rolled back: its
    /// transaction id was committed before (answer with what was stored), or its session is
    /// gone or closed. A refusal with neither cause keeps its own error.
    async fn refusal_cause(
        &self,
        transaction_id: &TransactionId,
        session_id: &SessionId,
        emitted_at: Timestamp,
        error: StoreError,
    ) -> Result<SaleOutcome, StoreError> {
        if let Some((fingerprint, response)) = self.find_sale(transaction_id).await? {
            return Ok(SaleOutcome::Existing { fingerprint, response });
        }
        match self.get_session(session_id).await? {
            None => Err(StoreError::Rule(Rule::SessionUnknown(session_id.clone()))),
            Some(session) if !session.is_open_at(emitted_at) => {
                Err(StoreError::Rule(Rule::SessionClosed(session_id.clone())))
            }
            // On SQLite: a twin with this transaction id shared the commit and was rolled back.
            Some(_) if matches!(error, StoreError::NotWritten) => {
                Err(StoreError::Stale(Stale::TwinNotKept(transaction_id.clone())))
            }
            Some(_) => Err(error),
        }
    }

    pub async fn sale_answer(&self, transaction_id: &TransactionId) -> Result<Option<(StoreId, String)>, StoreError> {
        let row = query("SELECT store_id, packed FROM sales WHERE transaction_id = $1")
            .bind(transaction_id.as_str())
            .fetch_optional(self.reader())
            .await?;
        row.map(|row| {
            let store: String = row.try_get("store_id")?;
            Ok((StoreId::from_trusted(store), packed::response_of(&row)?))
        })
        .transpose()
    }

    pub async fn find_sale(&self, transaction_id: &TransactionId) -> Result<Option<(String, String)>, StoreError> {
        let row = query("SELECT fingerprint, packed FROM sales WHERE transaction_id = $1")
            .bind(transaction_id.as_str())
            .fetch_optional(self.reader())
            .await?;
        row.map(|row| Ok((row.try_get("fingerprint")?, packed::response_of(&row)?)))
            .transpose()
    }
}

/// The checked path: closes what periods ended, claims the ticket's place, spends what the
/// sale spends, then writes and seals it, in one transaction.
fn commit<'a>(conn: &'a mut Conn, input: &'a CommitSale) -> BoxFuture<'a, Result<Booked, StoreError>> {
    Box::pin(async move {
        let sale = &input.sale;
        let now = to_micros(sale.emitted_at);
        let register = sale.register_id.as_str();
        // The ticket's place in the chain first: a return's credit-note number is made of it,
        // and the sale row is written once, complete.
        let (today, place) =
            closures::close_due_then_reserve(conn, register, ChainKind::Ticket, now, &input.key).await?;
        today.ensure_open(register)?;
        if let Some(customer) = sale.customer_id.as_ref().filter(|_| !sale.relies_on_groups.is_empty()) {
            customers::hold_groups(conn, customer, &sale.relies_on_groups).await?;
        }
        for capture in &sale.captures {
            payments::capture(conn, capture, sale, now).await?;
        }
        for refund in &sale.card_refunds {
            payments::refund(conn, refund, sale, now).await?;
        }
        if sale.late && !late_sales::is_late(conn, register, place.seq - 1).await? {
            // The first late sale after a gap: the journal says when the till's queue arrived.
            let arrived = jet::late_sales_received(&sale.transaction_id, &sale.session_id, sale.issued_at);
            journal::append_event(conn, register, arrived.event, &arrived.detail, now, &input.key).await?;
        }
        if let Some(grant) = &sale.spends_grant {
            elevation::spend_grant(conn, grant, sale.transaction_id.as_str(), now).await?;
            let spent = jet::approval_spent(grant, &sale.transaction_id);
            journal::append_event(conn, register, spent.event, &spent.detail, now, &input.key).await?;
        }
        if let Some(code) = &sale.coupon_code {
            redeem_coupon(conn, code, now).await?;
        }
        if let Some(original) = &sale.original {
            take_back(conn, original).await?;
        }
        let credit_note = (sale.kind == SaleType::Return).then(|| credit_note_number(register, place.seq));
        stored_value::move_for_ticket(conn, sale, credit_note.as_deref(), &input.instrument_key, now).await?;
        // Nothing below reads what it writes: one batch, one round trip on PostgreSQL.
        let mut batch = Batch::default();
        let response = push_sale(&mut batch, conn.writers(), input, place.seq, now)?;
        stored_value::push_points_earned(&mut batch, sale, now);
        let signed = match &input.presigned {
            Some(presigned) if presigned.place == place => presigned.clone(),
            _ => sign_ticket(&input.record, &input.digest, place.clone(), &input.key)?,
        };
        let sealed = journal::seal_signed(
            &mut batch,
            register,
            ChainKind::Ticket,
            signed,
            sale.transaction_id.as_str(),
            now,
            &input.key,
        );
        closures::mark_open_day(&mut batch, register, &today);
        batch.run(conn).await?;
        Ok(Booked {
            place,
            signature: sealed.signature,
            response,
            day: Some(today.open_day()),
        })
    })
}

/// Queues the sale's rows, sealed at `seq`: the sale with its detail (lines, tenders, VAT and
/// reductions), its stock moves and its event. Answers the stored response, which
/// for a return now carries its credit-note number (and the code of the credit note it issues,
/// which its event leaves out).
fn push_sale(
    batch: &mut Batch,
    writers: Writers,
    input: &CommitSale,
    seq: i64,
    now: i64,
) -> Result<String, StoreError> {
    let sale = &input.sale;
    let credit_note = (sale.kind == SaleType::Return).then(|| credit_note_number(sale.register_id.as_str(), seq));
    let render = |reader| {
        sale.response
            .render(credit_note.as_deref(), reader)
            .map_err(|error| StoreError::Corrupt(error.to_string()))
    };
    let response = render(Reader::Caller)?;
    // The event's data is the stored answer, unless that answer tells the code of a credit
    // note: then it is written apart, without it.
    let event_data = match sale.stored_value.credit_note_code.is_some() && sale.response.depends_on_reader() {
        true => Some(render(Reader::Feed)?),
        false => None,
    };
    let packed = match &input.packed {
        Some(packed) => packed.clone(),
        None => packed::pack(&response, &input.detail)?,
    };
    sale_row::insert(batch, sale, seq, credit_note.as_deref(), packed, now);
    let cause = stock::Cause {
        reason: match sale.kind {
            SaleType::Return => StockReason::Return,
            _ => StockReason::Sale,
        },
        reference: Some(sale.transaction_id.as_str()),
    };
    stock::push_moves(batch, writers, &sale.store_id, &sale.stock_moves, cause, now);
    // Last, after every lock the sale takes: on PostgreSQL a sale's event is numbered in the
    // order the sales were written, which for two sales of one register is their chain's.
    NewEvent {
        kind: match sale.kind {
            SaleType::Return => EventType::ReturnCompleted,
            _ => EventType::SaleCompleted,
        },
        occurred_at: now,
        store_id: Some(sale.store_id.as_str()),
        register_id: Some(sale.register_id.as_str()),
        subject: sale.transaction_id.as_str(),
        data: event_data,
    }
    .push(batch);
    Ok(response)
}

/// The sale's ticket, signed for `place` in its register's chain.
fn sign_ticket(record: &SaleRecord, digest: &str, place: Place, key: &Sealer) -> Result<Signed, StoreError> {
    let text = payload::ticket_with_digest(record, digest, place.seq, place.previous.as_deref());
    let signature = key.sign(&text)?;
    Ok(Signed { place, text, signature })
}

/// Counts the returned units on the original's lines and the refund on the original, each
/// only if it still stands where the return was computed from: of two returns racing for the
/// last unit, the second finds the count moved and writes nothing.
async fn take_back(conn: &mut Conn, original: &ReturnOf) -> Result<(), StoreError> {
    let stale = || StoreError::Stale(Stale::ReturnRaced(original.transaction_id.clone()));
    let units: Vec<(i64, i64)> = original.lines.iter().map(|line| (line.line_no, line.units)).collect();
    let counted = original.counted.adding(&units)?;
    let taken = query(
        "UPDATE sales SET refunded_cents = refunded_cents + $2, points_returned = points_returned + $3, \
             returned_units = $6 \
         WHERE transaction_id = $1 AND refunded_cents = $4 AND points_returned = $5 \
             AND COALESCE(returned_units, '') = $7",
    )
    .bind(original.transaction_id.as_str())
    .bind(original.refund.get())
    .bind(original.points_back)
    .bind(original.refunded_before.get())
    .bind(original.points_returned_before)
    .bind(counted.after.as_str())
    .bind(counted.before.as_str())
    .execute(&mut *conn)
    .await?;
    if taken != 1 {
        return Err(stale());
    }
    Ok(())
}

/// Counts one redemption, atomically refusing the one past `maxRedemptions`: concurrent sales
/// serialize on the coupon's row.
async fn redeem_coupon(conn: &mut Conn, code: &CouponCode, now: i64) -> Result<(), StoreError> {
    let redeemed = query(
        "UPDATE coupons SET redemptions = redemptions + 1, updated_at = $2 \
         WHERE code = $1 AND (max_redemptions IS NULL OR redemptions < max_redemptions) RETURNING redemptions",
    )
    .bind(code.as_str())
    .bind(now)
    .fetch_optional(&mut *conn)
    .await?;
    match redeemed {
        Some(_) => Ok(()),
        None => Err(StoreError::Rule(Rule::CouponExhausted(code.clone()))),
    }
}
