//! The cash drawer's records (docs/drawer.md): movements of money besides sales, each
//! sealed as a technical event of its register in the transaction that records it, and the
//! figures of a shift that its X and Z reports are computed from.

use crate::db::Store;
use crate::error::StoreError;
use crate::feed::{self, NewEvent};
use crate::journal::{self, jet};
use crate::late_sales::{self, TicketRange};
use crate::payments::{self, ShiftCards};
use crate::sale_detail::{self, Sales};
use crate::sealer::Sealer;
use crate::sessions::{SessionRecord, find_session};
use crate::sql::{Conn, Row, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
use std::sync::Arc;
pub use till_app::storage::sessions::{MovementOutcome, MovementRecord, NewMovement, cash_moved};
use till_core::documents::XReport;
use till_core::drawer::{LateFigures, MethodTakings, MovementKind, MovementTotals, ShiftFigures};
use till_core::events::EventType;
use till_core::fiscal::ChainKind;
use till_core::ids::{MovementId, RegisterId, SessionId, StoreId, Subject};
use till_core::instant::{from_micros, to_micros};
use till_core::money::Cents;
use till_core::payment::card_totals;

struct RecordMovement {
    movement: NewMovement,
    key: Arc<Sealer>,
}

impl Store {
    pub async fn record_cash_movement(&self, movement: NewMovement) -> Result<MovementOutcome, StoreError> {
        let input = RecordMovement {
            movement,
            key: self.fiscal_key()?,
        };
        self.write(input, |c, i| Box::pin(record_movement(c, i))).await
    }

    pub async fn x_report(
        &self,
        session_id: &SessionId,
        at: Timestamp,
    ) -> Result<Option<(SessionRecord, XReport)>, StoreError> {
        let mut conn = self.reader().acquire().await?;
        let Some(session) = find_session(&mut conn, session_id.as_str()).await? else {
            return Ok(None);
        };
        let late = late_sales::unreported(&mut conn, session.register_id.as_str()).await?;
        let figures = shift_figures(&mut conn, &session, Some(late), ShiftCards::Live).await?;
        let report = crate::reports::x_report(&session, &figures, at)?;
        Ok(Some((session, report)))
    }
}

fn record_movement<'a>(
    conn: &'a mut Conn,
    input: &'a RecordMovement,
) -> BoxFuture<'a, Result<MovementOutcome, StoreError>> {
    Box::pin(async move {
        let new = &input.movement;
        if let Some(earlier) = find_movement(conn, &new.movement_id).await? {
            return Ok(if earlier.is_asked_again_by(new) {
                MovementOutcome::Replayed(earlier)
            } else {
                MovementOutcome::IdTaken(earlier)
            });
        }
        let Some(session) = find_session(conn, new.session_id.as_str()).await? else {
            return Ok(MovementOutcome::NoSuchSession);
        };
        // A close holds the register's ticket chain before it adds the shift up: holding it here
        // too, a movement is either in the Z report or finds the session closed.
        journal::hold(conn, session.register_id.as_str(), ChainKind::Ticket).await?;
        let Some(session) = find_session(conn, new.session_id.as_str()).await? else {
            return Ok(MovementOutcome::NoSuchSession);
        };
        if !session.is_open_at(new.at) {
            return Ok(MovementOutcome::SessionNotOpen(session));
        }
        let now = to_micros(new.at);
        let register_id = session.register_id.as_str();
        let moved = jet::drawer_moved(
            new.kind,
            new.movement_id.as_str(),
            new.amount,
            session.session_id.as_str(),
            new.recorded_by.as_str(),
        );
        let sealed = journal::append_event(conn, register_id, moved.event, &moved.detail, now, &input.key).await?;
        query(
            "INSERT INTO cash_movements (movement_id, session_id, store_id, register_id, kind, amount_cents, \
             reason, recorded_by, occurred_at, event_seq) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(new.movement_id.as_str())
        .bind(session.session_id.as_str())
        .bind(session.store_id.as_str())
        .bind(register_id)
        .bind(new.kind.as_str())
        .bind(new.amount.get())
        .bind(new.reason.as_deref())
        .bind(new.recorded_by.as_str())
        .bind(now)
        .bind(sealed.seq)
        .execute(&mut *conn)
        .await?;
        let record = MovementRecord {
            movement_id: new.movement_id.clone(),
            session_id: session.session_id.clone(),
            store_id: session.store_id.clone(),
            register_id: session.register_id.clone(),
            kind: new.kind,
            amount: new.amount,
            reason: new.reason.clone(),
            recorded_by: new.recorded_by.clone(),
            occurred_at: from_micros(now),
            event_seq: sealed.seq,
        };
        NewEvent {
            kind: EventType::CashMoved,
            occurred_at: now,
            store_id: Some(record.store_id.as_str()),
            register_id: Some(register_id),
            subject: record.movement_id.as_str(),
            data: Some(feed::data_of(&cash_moved(&record))?),
        }
        .record(conn)
        .await?;
        Ok(MovementOutcome::Recorded(record))
    })
}

const SELECT_MOVEMENT_BY_ID: &str = "SELECT movement_id, session_id, store_id, register_id, kind, amount_cents, reason, \
     recorded_by, occurred_at, event_seq FROM cash_movements WHERE movement_id = $1";

async fn find_movement(conn: &mut Conn, movement_id: &MovementId) -> Result<Option<MovementRecord>, StoreError> {
    let row = query(SELECT_MOVEMENT_BY_ID)
        .bind(movement_id.as_str())
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(movement_from_row).transpose()
}

fn movement_from_row(row: &Row) -> Result<MovementRecord, StoreError> {
    let corrupt = |what: &str| StoreError::Corrupt(format!("a cash movement with {what}"));
    let kind: String = row.try_get("kind")?;
    let amount: i64 = row.try_get("amount_cents")?;
    Ok(MovementRecord {
        movement_id: MovementId::from_trusted(row.try_get("movement_id")?),
        session_id: SessionId::from_trusted(row.try_get("session_id")?),
        store_id: StoreId::from_trusted(row.try_get("store_id")?),
        register_id: RegisterId::from_trusted(row.try_get("register_id")?),
        kind: MovementKind::parse(&kind).ok_or_else(|| corrupt("an unknown kind"))?,
        amount: Cents::new(amount).ok_or_else(|| corrupt("an amount out of range"))?,
        reason: row.try_get("reason")?,
        recorded_by: Subject::from_trusted(row.try_get("recorded_by")?),
        occurred_at: from_micros(row.try_get("occurred_at")?),
        event_seq: row.try_get("event_seq")?,
    })
}

/// What `session` booked: its tickets' count, total, VAT and takings per method, and its
/// drawer's movements, with the late sales of the register's tickets in `late` shown apart.
/// The X report reads it while the shift runs, the close in its transaction, the audit
/// afterwards: the same figures each time.
pub(crate) async fn shift_figures(
    conn: &mut Conn,
    session: &SessionRecord,
    late: Option<TicketRange>,
    cards: ShiftCards,
) -> Result<ShiftFigures, StoreError> {
    let session_id = session.session_id.as_str();
    let sales = Sales::Session(session_id);
    let totals = sales
        .bind(query(format!(
            "SELECT COUNT(*) AS sales, COALESCE(CAST(SUM(s.total_cents) AS BIGINT), 0) AS total \
             FROM sales s WHERE {}",
            sales.clause()
        )))
        .fetch_one(&mut *conn)
        .await?;
    let total: i64 = totals.try_get("total")?;
    let parts = sale_detail::totals(conn, sales).await?;
    let out_of_range = || StoreError::Corrupt(format!("session {session_id} adds up past the largest amount"));
    let takings = takings_of(parts.tenders)?;
    let rows = query("SELECT kind, amount_cents FROM cash_movements WHERE session_id = $1")
        .bind(session_id)
        .fetch_all(&mut *conn)
        .await?;
    let mut movements = MovementTotals::default();
    for row in &rows {
        let kind: String = row.try_get("kind")?;
        let kind = MovementKind::parse(&kind)
            .ok_or_else(|| StoreError::Corrupt("a cash movement of an unknown kind".into()))?;
        let amount = Cents::new(row.try_get("amount_cents")?).ok_or_else(out_of_range)?;
        movements.add(kind, amount).map_err(|_| out_of_range())?;
    }
    let late = match late {
        Some(range) => late_sales::figures(conn, session.register_id.as_str(), range).await?,
        None => LateFigures::default(),
    };
    let attempts = payments::reported(conn, session_id, cards).await?;
    Ok(ShiftFigures {
        opening_float: session.opening_float,
        sales_count: totals.try_get("sales")?,
        total: Cents::new(total).ok_or_else(out_of_range)?,
        vat: parts.vat,
        takings,
        movements,
        late,
        cards: card_totals(attempts).map_err(|_| out_of_range())?,
    })
}

/// What each tender method took on `sales`.
pub(crate) async fn takings(conn: &mut Conn, sales: Sales<'_>) -> Result<Vec<MethodTakings>, StoreError> {
    takings_of(sale_detail::totals(conn, sales).await?.tenders)
}

fn takings_of(tenders: Vec<(String, i64, i64)>) -> Result<Vec<MethodTakings>, StoreError> {
    let out_of_range = || StoreError::Corrupt("tender takings pass the largest amount".to_owned());
    tenders
        .into_iter()
        .map(|(method, applied, forfeited)| {
            Ok(MethodTakings {
                method,
                applied: Cents::new(applied).ok_or_else(out_of_range)?,
                forfeited: Cents::new(forfeited).ok_or_else(out_of_range)?,
            })
        })
        .collect()
}
