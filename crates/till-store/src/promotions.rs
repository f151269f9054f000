//! Promotion rules as the back office writes them. Each write bumps the rule's version (its
//! ETag) and the global promotion revision, which caches on every node compare against.

use crate::db::Store;
use crate::error::StoreError;
use crate::feed::{self, NewEvent};
use crate::sql::{Conn, Row, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
pub use till_app::storage::offers::{Replaced, StoredRule};
use till_core::documents::PromotionChanged;
use till_core::events::EventType;
use till_core::ids::PromotionId;
use till_core::instant::{from_micros, to_micros};
use till_core::promotions::PromotionRule;

struct Upsert {
    rule: PromotionRule,
    now: i64,
}

struct Replace {
    rule: PromotionRule,
    expected: Option<i64>,
    now: i64,
}

struct Deactivate {
    id: PromotionId,
    now: i64,
}

impl Store {
    pub async fn upsert_promotion(
        &self,
        rule: PromotionRule,
        now: Timestamp,
    ) -> Result<(StoredRule, bool), StoreError> {
        self.write(
            Upsert {
                rule,
                now: to_micros(now),
            },
            |c, i| Box::pin(upsert(c, i)),
        )
        .await
    }

    pub async fn replace_promotion(
        &self,
        rule: PromotionRule,
        expected: Option<i64>,
        now: Timestamp,
    ) -> Result<Replaced, StoreError> {
        self.write(
            Replace {
                rule,
                expected,
                now: to_micros(now),
            },
            |c, i| Box::pin(replace(c, i)),
        )
        .await
    }

    pub async fn deactivate_promotion(
        &self,
        id: PromotionId,
        now: Timestamp,
    ) -> Result<Option<StoredRule>, StoreError> {
        self.write(
            Deactivate {
                id,
                now: to_micros(now),
            },
            |c, i| Box::pin(deactivate(c, i)),
        )
        .await
    }

    pub async fn get_promotion(&self, id: &PromotionId) -> Result<Option<StoredRule>, StoreError> {
        let row = query("SELECT rule, version, created_at, updated_at FROM promotions WHERE promotion_id = $1")
            .bind(id.as_str())
            .fetch_optional(self.reader())
            .await?;
        row.as_ref().map(stored_from_row).transpose()
    }

    pub async fn promotions(&self) -> Result<Vec<StoredRule>, StoreError> {
        let rows = query("SELECT rule, version, created_at, updated_at FROM promotions ORDER BY promotion_id")
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(stored_from_row).collect()
    }

    pub async fn promotion_revision(&self) -> Result<i64, StoreError> {
        let row = query("SELECT revision FROM promotion_revision WHERE singleton = 1")
            .fetch_one(self.reader())
            .await?;
        row.try_get("revision")
    }
}

fn upsert<'a>(conn: &'a mut Conn, input: &'a Upsert) -> BoxFuture<'a, Result<(StoredRule, bool), StoreError>> {
    Box::pin(async move {
        let current = current_version(conn, &input.rule.id).await?;
        let stored = write_rule(conn, &input.rule, current, input.now).await?;
        Ok((stored, current.is_none()))
    })
}

fn replace<'a>(conn: &'a mut Conn, input: &'a Replace) -> BoxFuture<'a, Result<Replaced, StoreError>> {
    Box::pin(async move {
        let Some(current) = current_version(conn, &input.rule.id).await? else {
            return Ok(Replaced::NotFound);
        };
        if input.expected.is_some_and(|expected| expected != current) {
            return Ok(Replaced::Stale(current));
        }
        Ok(Replaced::Done(Box::new(
            write_rule(conn, &input.rule, Some(current), input.now).await?,
        )))
    })
}

fn deactivate<'a>(conn: &'a mut Conn, input: &'a Deactivate) -> BoxFuture<'a, Result<Option<StoredRule>, StoreError>> {
    Box::pin(async move {
        let row = query("SELECT rule, version, created_at, updated_at FROM promotions WHERE promotion_id = $1")
            .bind(input.id.as_str())
            .fetch_optional(&mut *conn)
            .await?;
        let Some(row) = row else { return Ok(None) };
        let stored = stored_from_row(&row)?;
        if !stored.rule.active {
            return Ok(Some(stored));
        }
        let mut rule = stored.rule;
        rule.active = false;
        Ok(Some(write_rule(conn, &rule, Some(stored.version), input.now).await?))
    })
}

/// The stored version of a rule, locking its row for the rest of the transaction.
async fn current_version(conn: &mut Conn, id: &PromotionId) -> Result<Option<i64>, StoreError> {
    // A no-op update takes the row lock on PostgreSQL, so two writers of one rule serialize
    // and the version check of the second sees the first's write.
    let row = query("UPDATE promotions SET version = version WHERE promotion_id = $1 RETURNING version")
        .bind(id.as_str())
        .fetch_optional(&mut *conn)
        .await?;
    row.map(|row| row.try_get("version")).transpose()
}

async fn write_rule(
    conn: &mut Conn,
    rule: &PromotionRule,
    current: Option<i64>,
    now: i64,
) -> Result<StoredRule, StoreError> {
    let json = serde_json::to_string(rule).map_err(|e| StoreError::Corrupt(format!("rule does not serialize: {e}")))?;
    let version = current.map_or(1, |v| v + 1);
    let row = query(
        "INSERT INTO promotions (promotion_id, rule, version, created_at, updated_at) VALUES ($1, $2, $3, $4, $4) \
         ON CONFLICT (promotion_id) DO UPDATE SET rule = excluded.rule, version = excluded.version, \
             updated_at = excluded.updated_at \
         RETURNING rule, version, created_at, updated_at",
    )
    .bind(rule.id.as_str())
    .bind(json)
    .bind(version)
    .bind(now)
    .fetch_one(&mut *conn)
    .await?;
    query("UPDATE promotion_revision SET revision = revision + 1 WHERE singleton = 1")
        .execute(&mut *conn)
        .await?;
    let stored = stored_from_row(&row)?;
    NewEvent {
        kind: EventType::PromotionChanged,
        occurred_at: now,
        store_id: None,
        register_id: None,
        subject: rule.id.as_str(),
        data: Some(feed::data_of(&PromotionChanged {
            promotion_id: stored.rule.id.as_str(),
            version: stored.version,
            active: stored.rule.active,
            rule: &stored.rule,
            updated_at: stored.updated_at,
        })?),
    }
    .record(conn)
    .await?;
    Ok(stored)
}

pub(crate) fn stored_from_row(row: &Row) -> Result<StoredRule, StoreError> {
    let json: String = row.try_get("rule")?;
    Ok(StoredRule {
        rule: serde_json::from_str(&json).map_err(|e| StoreError::Corrupt(format!("stored rule: {e}")))?,
        version: row.try_get("version")?,
        created_at: from_micros(row.try_get("created_at")?),
        updated_at: from_micros(row.try_get("updated_at")?),
    })
}
