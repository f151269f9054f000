//! Staff members and the wrong-PIN guard: a holder's wrong PINs are counted at the register
//! they were typed at and at every register together, each count with its own limit.

use crate::db::Store;
use crate::error::{NewIdOf, Rule, StoreError};
use crate::page::{Keyset, Window};
use crate::sql::{Conn, Row, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
pub use till_app::storage::people::{PinAttempt, PutStaff, StaffRecord};
use till_core::grant::{GrantSet, Role};
use till_core::ids::{RegisterId, Subject, check_new_id};
use till_core::instant::{from_micros, to_micros};
use till_core::money::{Bps, Cents};
use till_core::staff::{DiscountLimit, PinLimits, StaffMember};

struct PutStaffAt {
    put: PutStaff,
    now: i64,
}

struct ReservePin {
    subject: String,
    register_id: String,
    now: i64,
    limits: PinLimits,
    lockout_micros: i64,
}

struct ClearPin {
    subject: String,
    register_id: String,
    now: i64,
}

/// The guard counting a holder's wrong PINs at every register together: the row whose
/// `register_id` is empty (no register has an empty id).
const EVERY_REGISTER: &str = "";

impl Store {
    pub async fn put_staff(&self, put: PutStaff, now: Timestamp) -> Result<(StaffRecord, bool), StoreError> {
        let put = self
            .write(
                PutStaffAt {
                    put,
                    now: to_micros(now),
                },
                |c, i| Box::pin(put_staff(c, i)),
            )
            .await;
        // The tills of a cashier changed here act on the change from their next request.
        self.session_cache().forget();
        put
    }

    pub async fn get_staff(&self, subject: &Subject) -> Result<Option<StaffRecord>, StoreError> {
        let row = query(SELECT_STAFF)
            .bind(subject.as_str())
            .fetch_optional(self.reader())
            .await?;
        row.as_ref().map(staff_from_row).transpose()
    }

    pub async fn list_staff(&self, window: &Window<Subject>) -> Result<Vec<StaffRecord>, StoreError> {
        let after = window.after.as_ref().map(Subject::as_str);
        let rows = Keyset::new(LIST_STAFF)
            .by_id("subject", after, window.take)
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(staff_from_row).collect()
    }

    pub async fn reserve_pin_attempt(
        &self,
        subject: &str,
        register: &RegisterId,
        now: Timestamp,
        limits: PinLimits,
        lockout: std::time::Duration,
    ) -> Result<PinAttempt, StoreError> {
        let input = ReservePin {
            subject: subject.to_owned(),
            register_id: register.as_str().to_owned(),
            now: to_micros(now),
            limits,
            lockout_micros: i64::try_from(lockout.as_micros()).unwrap_or(i64::MAX / 4),
        };
        self.write(input, |c, i| Box::pin(reserve_pin(c, i))).await
    }

    pub async fn clear_pin_failures(
        &self,
        subject: &str,
        register: &RegisterId,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let input = ClearPin {
            subject: subject.to_owned(),
            register_id: register.as_str().to_owned(),
            now: to_micros(now),
        };
        self.write(input, |c, i| Box::pin(clear_pin(c, i))).await
    }
}

const SELECT_STAFF: &str = "SELECT subject, display_name, role, pin_hash, permissions, discount_limit_bps, \
     discount_limit_cents, grants_synced_at, created_at, updated_at FROM staff WHERE subject = $1";

pub(crate) const LIST_STAFF: &str = "SELECT subject, display_name, role, pin_hash, permissions, discount_limit_bps, \
     discount_limit_cents, grants_synced_at, created_at, updated_at FROM staff";

fn put_staff<'a>(conn: &'a mut Conn, input: &'a PutStaffAt) -> BoxFuture<'a, Result<(StaffRecord, bool), StoreError>> {
    Box::pin(async move {
        let put = &input.put;
        let existing = query("SELECT pin_hash FROM staff WHERE subject = $1")
            .bind(put.subject.as_str())
            .fetch_optional(&mut *conn)
            .await?;
        let created = existing.is_none();
        if created {
            check_new_id(put.subject.as_str()).map_err(|problem| {
                StoreError::Rule(Rule::NewId {
                    of: NewIdOf::Staff,
                    problem,
                })
            })?;
        }
        let pin_hash = match (&put.pin_hash, existing) {
            (Some(hash), _) => hash.clone(),
            (None, Some(row)) => row.try_get("pin_hash")?,
            (None, None) => {
                return Err(StoreError::Rule(Rule::PinNeeded));
            }
        };
        let limit = put.member.discount_limit;
        let row = query(
            "INSERT INTO staff (subject, display_name, role, pin_hash, permissions, discount_limit_bps, \
                 discount_limit_cents, grants_synced_at, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $8) \
             ON CONFLICT (subject) DO UPDATE SET display_name = excluded.display_name, role = excluded.role, \
                 pin_hash = excluded.pin_hash, permissions = excluded.permissions, \
                 discount_limit_bps = excluded.discount_limit_bps, discount_limit_cents = excluded.discount_limit_cents, \
                 grants_synced_at = excluded.grants_synced_at, updated_at = excluded.updated_at \
             RETURNING subject, display_name, role, pin_hash, permissions, discount_limit_bps, \
                 discount_limit_cents, grants_synced_at, created_at, updated_at",
        )
        .bind(put.subject.as_str())
        .bind(&put.member.display_name)
        .bind(put.member.role.as_str())
        .bind(pin_hash)
        .bind(put.member.permissions.to_words())
        .bind(limit.map(|l| l.percent.get()))
        .bind(limit.map(|l| l.amount.get()))
        .bind(input.now)
        .fetch_one(&mut *conn)
        .await?;
        Ok((staff_from_row(&row)?, created))
    })
}

fn reserve_pin<'a>(conn: &'a mut Conn, input: &'a ReservePin) -> BoxFuture<'a, Result<PinAttempt, StoreError>> {
    Box::pin(async move {
        // A live lock, at this register or at every register, refuses without counting.
        let locked: Option<i64> = query(
            "SELECT MAX(locked_until) AS locked_until FROM pin_guards \
             WHERE subject = $1 AND register_id IN ($2, $3) AND locked_until > $4",
        )
        .bind(&input.subject)
        .bind(&input.register_id)
        .bind(EVERY_REGISTER)
        .bind(input.now)
        .fetch_one(&mut *conn)
        .await?
        .try_get("locked_until")?;
        if let Some(until) = locked {
            return Ok(PinAttempt::LockedUntil(from_micros(until)));
        }
        // The register's count first, then every register's: always in this order, so that
        // two reservations never wait on each other's rows.
        let guards = [
            (input.register_id.as_str(), input.limits.at_one_register),
            (EVERY_REGISTER, input.limits.everywhere),
        ];
        let mut last = false;
        for (register_id, max_failures) in guards {
            match reserve_one(conn, input, register_id, i64::from(max_failures)).await? {
                PinAttempt::Allowed { last: here } => last |= here,
                locked @ PinAttempt::LockedUntil(_) => return Ok(locked),
            }
        }
        Ok(PinAttempt::Allowed { last })
    })
}

/// One attempt counted by one guard: the subject's at `register_id`.
async fn reserve_one(
    conn: &mut Conn,
    input: &ReservePin,
    register_id: &str,
    max_failures: i64,
) -> Result<PinAttempt, StoreError> {
    // An expired lock starts a fresh count; a live lock (taken by a reservation running at the
    // same time) refuses without counting.
    let row = query(
        "INSERT INTO pin_guards (subject, register_id, attempts, locked_until, updated_at) VALUES ($1, $2, 1, NULL, $3) \
         ON CONFLICT (subject, register_id) DO UPDATE SET \
             attempts = CASE WHEN pin_guards.locked_until IS NOT NULL AND pin_guards.locked_until <= $3 \
                             THEN 1 ELSE pin_guards.attempts + 1 END, \
             locked_until = CASE WHEN pin_guards.locked_until IS NOT NULL AND pin_guards.locked_until <= $3 \
                                 THEN NULL ELSE pin_guards.locked_until END, \
             updated_at = $3 \
         WHERE pin_guards.locked_until IS NULL OR pin_guards.locked_until <= $3 \
         RETURNING attempts",
    )
    .bind(&input.subject)
    .bind(register_id)
    .bind(input.now)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(row) = row else {
        let locked: Option<i64> = query("SELECT locked_until FROM pin_guards WHERE subject = $1 AND register_id = $2")
            .bind(&input.subject)
            .bind(register_id)
            .fetch_one(&mut *conn)
            .await?
            .try_get("locked_until")?;
        return Ok(PinAttempt::LockedUntil(from_micros(locked.unwrap_or(input.now))));
    };
    let attempts: i64 = row.try_get("attempts")?;
    if attempts >= max_failures {
        // This reservation is the last one allowed: lock now, before its PIN is even
        // evaluated, so no concurrent guess can slip in behind it.
        let until = input.now.saturating_add(input.lockout_micros);
        query("UPDATE pin_guards SET locked_until = $3 WHERE subject = $1 AND register_id = $2")
            .bind(&input.subject)
            .bind(register_id)
            .bind(until)
            .execute(&mut *conn)
            .await?;
        if attempts > max_failures {
            return Ok(PinAttempt::LockedUntil(from_micros(until)));
        }
    }
    Ok(PinAttempt::Allowed {
        last: attempts >= max_failures,
    })
}

fn clear_pin<'a>(conn: &'a mut Conn, input: &'a ClearPin) -> BoxFuture<'a, Result<(), StoreError>> {
    Box::pin(async move {
        query(
            "UPDATE pin_guards SET attempts = 0, locked_until = NULL, updated_at = $4 \
             WHERE subject = $1 AND register_id IN ($2, $3)",
        )
        .bind(&input.subject)
        .bind(&input.register_id)
        .bind(EVERY_REGISTER)
        .bind(input.now)
        .execute(&mut *conn)
        .await?;
        Ok(())
    })
}

pub(crate) fn staff_from_row(row: &Row) -> Result<StaffRecord, StoreError> {
    let role: String = row.try_get("role")?;
    let role = Role::parse(&role).ok_or_else(|| StoreError::Corrupt(format!("unknown role {role}")))?;
    let permissions: String = row.try_get("permissions")?;
    let limit_bps: Option<i64> = row.try_get("discount_limit_bps")?;
    let limit_cents: Option<i64> = row.try_get("discount_limit_cents")?;
    let discount_limit = match (limit_bps, limit_cents) {
        (Some(bps), Some(cents)) => Some(DiscountLimit {
            percent: Bps::new(bps).ok_or_else(|| StoreError::Corrupt(format!("limit {bps} bps")))?,
            amount: Cents::new(cents).ok_or_else(|| StoreError::Corrupt(format!("limit {cents} cents")))?,
        }),
        _ => None,
    };
    Ok(StaffRecord {
        subject: Subject::from_trusted(row.try_get("subject")?),
        member: StaffMember {
            display_name: row.try_get("display_name")?,
            role,
            permissions: GrantSet::from_words(permissions.split_whitespace()),
            discount_limit,
        },
        pin_hash: row.try_get("pin_hash")?,
        grants_synced_at: from_micros(row.try_get("grants_synced_at")?),
        created_at: from_micros(row.try_get("created_at")?),
        updated_at: from_micros(row.try_get("updated_at")?),
    })
}
