//! Customers: their loyalty points, and the directory of their profiles (migration 0023).

use crate::batch::{Batch, Param};
use crate::db::Store;
use crate::error::{Rule, Stale, StoreError};
use crate::name_search;
use crate::page::Window;
use crate::sql::{Conn, Row, query};
use crate::stored_value::RECORD_POINTS;
use futures::future::BoxFuture;
use jiff::Timestamp;
use std::collections::BTreeSet;
pub use till_app::storage::customers::{
    ConsentChange, CustomerExport, CustomerKey, CustomerRecord, CustomerSearch, ErasureReason, NamedTicket, PointsLine,
    PutCustomer,
};
pub use till_app::storage::stored_value::{Enrollment, LoyaltyAccount};
use till_core::customer::{Consent, ConsentFlag, ConsentSource, Email, Phone, Profile};
use till_core::documents::CustomerChanged;
use till_core::events::EventType;
use till_core::ids::CustomerId;
use till_core::instant::{from_micros, to_micros};
use till_core::stored_value::PointsActivity;
use till_core::words::name_words;

impl Store {
    /// Enrolls a customer with their opening points, an `adjust` activity of their ledger;
    /// `false`, changing nothing, for a customer already known.
    pub async fn enroll_customer(&self, enrollment: Enrollment) -> Result<bool, StoreError> {
        self.write(enrollment, |c, enrollment| Box::pin(enroll(c, enrollment)))
            .await
    }

    pub async fn loyalty_account(&self, customer_id: &CustomerId) -> Result<Option<LoyaltyAccount>, StoreError> {
        let row = query("SELECT points, enrolled_at FROM customers WHERE customer_id = $1")
            .bind(customer_id.as_str())
            .fetch_optional(self.reader())
            .await?;
        row.map(|row| {
            Ok(LoyaltyAccount {
                customer_id: customer_id.clone(),
                points: row.try_get("points")?,
                enrolled_at: from_micros(row.try_get("enrolled_at")?),
            })
        })
        .transpose()
    }
}

fn enroll<'a>(conn: &'a mut Conn, enrollment: &'a Enrollment) -> BoxFuture<'a, Result<bool, StoreError>> {
    Box::pin(async move {
        let (customer, points, now) = (
            enrollment.customer_id.as_str(),
            i64::from(enrollment.points),
            to_micros(enrollment.now),
        );
        let enrolled = query(
            "INSERT INTO customers (customer_id, points, enrolled_at, updated_at) VALUES ($1, $2, $3, $3) \
             ON CONFLICT (customer_id) DO NOTHING RETURNING customer_id",
        )
        .bind(customer)
        .bind(points)
        .bind(now)
        .fetch_optional(&mut *conn)
        .await?
        .is_some();
        if enrolled && points > 0 {
            query(RECORD_POINTS)
                .bind(customer)
                .bind(PointsActivity::Adjust.as_str())
                .bind(points)
                .bind(None::<&str>)
                .bind(now)
                .execute(&mut *conn)
                .await?;
        }
        Ok(enrolled)
    })
}

/// A customer with their profile, if any, and their groups: `c` (`customers`) joined to
/// `customer_profiles` and `customer_groups`, one row per group (one row without a group for a
/// customer in none).
const CUSTOMER_COLUMNS: &str = "c.customer_id, c.points, c.enrolled_at, c.updated_at AS active_at, c.erased_at, \
         p.display_name, p.email, p.phone, p.postal_code, p.birth_date, p.notes, \
         p.marketing_email, p.marketing_sms, p.e_receipt, p.updated_at AS profile_updated_at, g.group_name";
const PROFILE_JOINS: &str = "LEFT JOIN customer_profiles p ON p.customer_id = c.customer_id \
     LEFT JOIN customer_groups g ON g.customer_id = c.customer_id";
/// One customer, read whole.
static ONE_CUSTOMER: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!("SELECT {CUSTOMER_COLUMNS} FROM customers c {PROFILE_JOINS} WHERE c.customer_id = $1 ORDER BY g.group_name")
});

impl Store {
    pub async fn get_customer(&self, customer_id: &CustomerId) -> Result<Option<CustomerRecord>, StoreError> {
        let rows = query(ONE_CUSTOMER.as_str())
            .bind(customer_id.as_str())
            .fetch_all(self.reader())
            .await?;
        Ok(customer_records(&rows, |_| Ok(()))?.pop().map(|(_, record)| record))
    }

    pub async fn put_customer(&self, put: PutCustomer, now: Timestamp) -> Result<(CustomerRecord, bool), StoreError> {
        self.write((put, to_micros(now)), |c, (put, now)| {
            Box::pin(write_profile(c, put, *now))
        })
        .await
    }

    pub async fn search_customers(
        &self,
        search: &CustomerSearch,
        group: Option<&str>,
        window: &Window<CustomerKey>,
    ) -> Result<Vec<(CustomerKey, CustomerRecord)>, StoreError> {
        let (keys, params) = search_statement(search, group, window.after.as_ref());
        // One statement a page: the page's keys, each customer read whole beside them. The
        // limit is written in, not bound: PostgreSQL's plan made without values takes a bound
        // limit for a large share of the rows, and reads a group's page by scanning `customers`.
        let limit = window.take;
        let mut read = query(format!(
            "SELECT k.word, {CUSTOMER_COLUMNS} FROM ({keys} LIMIT {limit}) k \
             JOIN customers c ON c.customer_id = k.customer_id {PROFILE_JOINS} \
             ORDER BY k.word, k.customer_id, g.group_name"
        ));
        for param in params {
            read = read.bind(param);
        }
        let rows = read.fetch_all(self.reader()).await?;
        let found = customer_records(&rows, |row| row.try_get::<String>("word"))?;
        Ok(found
            .into_iter()
            .map(|(word, record)| {
                let key = CustomerKey {
                    word,
                    customer_id: record.customer_id.clone(),
                };
                (key, record)
            })
            .collect())
    }

    pub async fn export_customer(&self, customer_id: &CustomerId) -> Result<Option<CustomerExport>, StoreError> {
        let Some(customer) = self.get_customer(customer_id).await? else {
            return Ok(None);
        };
        let id = customer_id.as_str();
        let consent_history =
            query("SELECT flag, granted, source, at FROM customer_consents WHERE customer_id = $1 ORDER BY change_id")
                .bind(id)
                .fetch_all(self.reader())
                .await?
                .iter()
                .map(|row| {
                    let flag: String = row.try_get("flag")?;
                    let source: String = row.try_get("source")?;
                    Ok(ConsentChange {
                        flag: ConsentFlag::parse(&flag)
                            .ok_or_else(|| StoreError::Corrupt(format!("consent flag {flag}")))?,
                        granted: row.try_get::<i64>("granted")? != 0,
                        source: ConsentSource::parse(&source)
                            .ok_or_else(|| StoreError::Corrupt(format!("consent source {source}")))?,
                        at: from_micros(row.try_get("at")?),
                    })
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
        let points = query(
            "SELECT kind, points, transaction_id, at FROM loyalty_activities WHERE customer_id = $1 ORDER BY activity_id",
        )
        .bind(id)
        .fetch_all(self.reader())
        .await?
        .iter()
        .map(|row| {
            Ok(PointsLine {
                kind: row.try_get("kind")?,
                points: row.try_get("points")?,
                transaction_id: row.try_get("transaction_id")?,
                at: from_micros(row.try_get("at")?),
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
        let tickets = query(
            "SELECT transaction_id, kind, store_id, emitted_at, total_cents FROM sales WHERE customer_id = $1 \
             ORDER BY emitted_at, transaction_id",
        )
        .bind(id)
        .fetch_all(self.reader())
        .await?
        .iter()
        .map(|row| {
            Ok(NamedTicket {
                transaction_id: row.try_get("transaction_id")?,
                kind: row.try_get("kind")?,
                store_id: row.try_get("store_id")?,
                emitted_at: from_micros(row.try_get("emitted_at")?),
                total_cents: row.try_get("total_cents")?,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(Some(CustomerExport {
            customer,
            consent_history,
            points,
            tickets,
        }))
    }

    pub async fn erase_customer(
        &self,
        customer_id: &CustomerId,
        reason: ErasureReason,
        now: Timestamp,
    ) -> Result<Option<CustomerRecord>, StoreError> {
        let known = self
            .write((customer_id.clone(), reason, to_micros(now)), |c, (id, reason, now)| {
                Box::pin(erase(c, id, *reason, *now))
            })
            .await?;
        if !known {
            return Ok(None);
        }
        self.get_customer(customer_id).await
    }

    pub async fn claim_retention(&self, holder: &str, now: Timestamp, until: Timestamp) -> Result<bool, StoreError> {
        self.claim_turn(crate::turns::Turn::CustomerRetention, holder, now, until)
            .await
    }

    pub async fn inactive_customers(
        &self,
        before: Timestamp,
        after: Option<&CustomerId>,
        limit: usize,
    ) -> Result<Vec<CustomerId>, StoreError> {
        query(
            "SELECT customer_id FROM customers WHERE customer_id > $1 AND erased_at IS NULL AND updated_at < $2 \
             ORDER BY customer_id LIMIT $3",
        )
        .bind(after.map_or("", CustomerId::as_str))
        .bind(to_micros(before))
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(self.reader())
        .await?
        .iter()
        .map(|row| Ok(CustomerId::from_trusted(row.try_get("customer_id")?)))
        .collect()
    }
}

fn customer_record(row: &Row) -> Result<CustomerRecord, StoreError> {
    let flag = |name: &str| -> Result<bool, StoreError> { Ok(row.try_get::<Option<i64>>(name)?.unwrap_or(0) != 0) };
    let enrolled_at = from_micros(row.try_get("enrolled_at")?);
    let birth_date = row
        .try_get::<Option<String>>("birth_date")?
        .map(|text| text.parse::<jiff::civil::Date>())
        .transpose()
        .map_err(|e| StoreError::Corrupt(format!("a birth date: {e}")))?;
    Ok(CustomerRecord {
        customer_id: CustomerId::from_trusted(row.try_get("customer_id")?),
        profile: Profile {
            display_name: row.try_get("display_name")?,
            email: row.try_get::<Option<String>>("email")?.map(Email::from_trusted),
            phone: row.try_get::<Option<String>>("phone")?.map(Phone::from_trusted),
            postal_code: row.try_get("postal_code")?,
            birth_date,
            groups: Default::default(),
            notes: row.try_get("notes")?,
        },
        consent: Consent {
            marketing_email: flag("marketing_email")?,
            marketing_sms: flag("marketing_sms")?,
            e_receipt: flag("e_receipt")?,
        },
        loyalty_points: row.try_get("points")?,
        created_at: enrolled_at,
        updated_at: row
            .try_get::<Option<i64>>("profile_updated_at")?
            .map(from_micros)
            .unwrap_or(enrolled_at),
        last_activity_at: from_micros(row.try_get("active_at")?),
        erased_at: row.try_get::<Option<i64>>("erased_at")?.map(from_micros),
    })
}

/// The customers of `rows` (read with [`CUSTOMER_COLUMNS`], a customer's rows one after the
/// other), each with what `key` reads from their first row.
fn customer_records<K>(
    rows: &[Row],
    key: impl Fn(&Row) -> Result<K, StoreError>,
) -> Result<Vec<(K, CustomerRecord)>, StoreError> {
    let mut records: Vec<(K, CustomerRecord)> = Vec::new();
    for row in rows {
        let customer_id: String = row.try_get("customer_id")?;
        let same = records
            .last()
            .is_some_and(|(_, record)| record.customer_id.as_str() == customer_id);
        if !same {
            records.push((key(row)?, customer_record(row)?));
        }
        if let (Some(group), Some((_, record))) = (row.try_get::<Option<String>>("group_name")?, records.last_mut()) {
            record.profile.groups.insert(group);
        }
    }
    Ok(records)
}

/// The statement of a list's keys (`word`, `customer_id`) in order, without its limit, and the
/// texts it binds.
fn search_statement(
    search: &CustomerSearch,
    group: Option<&str>,
    after: Option<&CustomerKey>,
) -> (String, Vec<String>) {
    let mut params: Vec<String> = Vec::new();
    let mut bind = |value: String| {
        params.push(value);
        format!("${}", params.len())
    };
    let after_id = after.map(|key| key.customer_id.as_str().to_owned());
    // Each list reads the index that holds its order: the words of names, the e-mail or phone
    // of profiles, the members of a group, or the customers by id.
    let (mut conditions, head, order) = match (search, group) {
        (CustomerSearch::Name(name), _) => {
            let after = after.map(|key| (key.word.as_str(), key.customer_id.as_str()));
            (
                name_search::conditions(name, after, "customer_id", &mut bind),
                "SELECT w.word, w.customer_id FROM customer_words w",
                "w.word, w.customer_id",
            )
        }
        (CustomerSearch::Email(email), _) => (
            vec![format!("w.email = {}", bind(email.as_str().to_owned()))],
            "SELECT '' AS word, w.customer_id FROM customer_profiles w",
            "w.customer_id",
        ),
        (CustomerSearch::Phone(phone), _) => (
            vec![format!("w.phone = {}", bind(phone.as_str().to_owned()))],
            "SELECT '' AS word, w.customer_id FROM customer_profiles w",
            "w.customer_id",
        ),
        (CustomerSearch::All, Some(group)) => (
            vec![format!("w.group_name = {}", bind(group.to_owned()))],
            "SELECT '' AS word, w.customer_id FROM customer_groups w",
            "w.customer_id",
        ),
        (CustomerSearch::All, None) => (
            Vec::new(),
            "SELECT '' AS word, w.customer_id FROM customers w",
            "w.customer_id",
        ),
    };
    if let (false, Some(after_id)) = (matches!(search, CustomerSearch::Name(_)), after_id) {
        conditions.push(format!("w.customer_id > {}", bind(after_id)));
    }
    if let (false, Some(group)) = (matches!(search, CustomerSearch::All), group) {
        conditions.push(format!(
            "w.customer_id IN (SELECT customer_id FROM customer_groups WHERE group_name = {})",
            bind(group.to_owned())
        ));
    }
    let filter = if conditions.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conditions.join(" AND "))
    };
    (format!("{head}{filter} ORDER BY {order}"), params)
}

/// Writes a profile in place of the one held, and reads it back in the same transaction (where
/// its pages are at hand); `true` when the customer was new.
fn write_profile<'a>(
    conn: &'a mut Conn,
    put: &'a PutCustomer,
    now: i64,
) -> BoxFuture<'a, Result<(CustomerRecord, bool), StoreError>> {
    Box::pin(async move {
        let id = put.customer_id.as_str();
        let created = query(
            "INSERT INTO customers (customer_id, points, enrolled_at, updated_at) VALUES ($1, 0, $2, $2) \
             ON CONFLICT (customer_id) DO NOTHING RETURNING customer_id",
        )
        .bind(id)
        .bind(now)
        .fetch_optional(&mut *conn)
        .await?
        .is_some();
        // Holds the customer's row: two writes of one profile take turns, each whole.
        let held = query("UPDATE customers SET updated_at = $2 WHERE customer_id = $1 RETURNING erased_at")
            .bind(id)
            .bind(now)
            .fetch_one(&mut *conn)
            .await?;
        if held.try_get::<Option<i64>>("erased_at")?.is_some() {
            return Err(StoreError::Rule(Rule::CustomerErased));
        }
        let before = query(
            "SELECT marketing_email, marketing_sms, e_receipt, version, created_at FROM customer_profiles \
             WHERE customer_id = $1",
        )
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
        let (consent_before, version, created_at) = match &before {
            Some(row) => (
                Consent {
                    marketing_email: row.try_get::<i64>("marketing_email")? != 0,
                    marketing_sms: row.try_get::<i64>("marketing_sms")? != 0,
                    e_receipt: row.try_get::<i64>("e_receipt")? != 0,
                },
                row.try_get::<i64>("version")?,
                row.try_get::<i64>("created_at")?,
            ),
            None => (Consent::default(), 0, now),
        };
        let consent = put.consent.unwrap_or(consent_before);
        // Nothing below reads what it writes: one batch, one round trip on PostgreSQL, where
        // its writes run at once on one snapshot; so each row is written by one of them only
        // (the words and groups kept are upserted, the others deleted), never deleted and
        // inserted again.
        let mut batch = Batch::default();
        let profile = &put.profile;
        batch.push(
            "INSERT INTO customer_profiles (customer_id, display_name, email, phone, postal_code, birth_date, notes, \
                 marketing_email, marketing_sms, e_receipt, version, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
             ON CONFLICT (customer_id) DO UPDATE SET display_name = excluded.display_name, email = excluded.email, \
                 phone = excluded.phone, postal_code = excluded.postal_code, birth_date = excluded.birth_date, \
                 notes = excluded.notes, marketing_email = excluded.marketing_email, \
                 marketing_sms = excluded.marketing_sms, e_receipt = excluded.e_receipt, version = excluded.version, \
                 created_at = excluded.created_at, updated_at = excluded.updated_at",
            vec![
                id.into(),
                profile.display_name.as_deref().into(),
                profile.email.as_ref().map(Email::as_str).into(),
                profile.phone.as_ref().map(Phone::as_str).into(),
                profile.postal_code.as_deref().into(),
                profile.birth_date.map(|date| date.to_string()).into(),
                profile.notes.as_deref().into(),
                i64::from(consent.marketing_email).into(),
                i64::from(consent.marketing_sms).into(),
                i64::from(consent.e_receipt).into(),
                (version + 1).into(),
                created_at.into(),
                now.into(),
            ],
        );
        let words = profile.display_name.as_deref().map(name_words).unwrap_or_default();
        let spaced = name_search::spaced(&words);
        let kept_words = KeyedRows {
            table: "customer_words",
            key: "word",
            extra: Some(("words", spaced.as_str())),
        };
        kept_words.replace(&mut batch, id, &words);
        let kept_groups = KeyedRows {
            table: "customer_groups",
            key: "group_name",
            extra: None,
        };
        kept_groups.replace(&mut batch, id, &profile.groups);
        // One statement, its rows in order: the history's ids follow the changes.
        let changes = consent_before.changes_to(consent);
        if !changes.is_empty() {
            let rows: Vec<String> = (0..changes.len())
                .map(|n| format!("($1, ${}, ${}, $2, $3)", 4 + 2 * n, 5 + 2 * n))
                .collect();
            let mut params: Vec<Param> = vec![id.into(), put.source.as_str().into(), now.into()];
            for (flag, granted) in changes {
                params.push(flag.as_str().into());
                params.push(i64::from(granted).into());
            }
            batch.push(
                format!(
                    "INSERT INTO customer_consents (customer_id, flag, granted, source, at) VALUES {}",
                    rows.join(", ")
                ),
                params,
            );
        }
        crate::feed::NewEvent {
            kind: EventType::CustomerChanged,
            occurred_at: now,
            store_id: None,
            register_id: None,
            subject: id,
            data: Some(crate::feed::data_of(&CustomerChanged { customer_id: id })?),
        }
        .push(&mut batch);
        batch.run(&mut *conn).await?;
        let rows = query(ONE_CUSTOMER.as_str()).bind(id).fetch_all(&mut *conn).await?;
        let (_, record) = customer_records(&rows, |_| Ok(()))?
            .pop()
            .ok_or(StoreError::NotFound("customer"))?;
        Ok((record, created))
    })
}

/// A table of a customer's rows keyed by one column (the words of their name, their groups),
/// with perhaps one more column of the same value in every row.
struct KeyedRows<'a> {
    table: &'static str,
    key: &'static str,
    extra: Option<(&'static str, &'a str)>,
}

impl KeyedRows<'_> {
    /// Queues the statements that leave exactly `keys` for the customer: the others deleted,
    /// these upserted, so that no row is both deleted and written in the batch.
    fn replace(&self, batch: &mut Batch, customer_id: &str, keys: &BTreeSet<String>) {
        let (table, key) = (self.table, self.key);
        let numbered = |from: usize| (from..from + keys.len()).map(|n| format!("${n}")).collect::<Vec<_>>();
        let key_params = || keys.iter().map(Param::from);
        // $1 the customer, then the keys.
        let others = match keys.is_empty() {
            true => String::new(),
            false => format!(" AND {key} NOT IN ({})", numbered(2).join(", ")),
        };
        batch.push(
            format!("DELETE FROM {table} WHERE customer_id = $1{others}"),
            std::iter::once(customer_id.into()).chain(key_params()).collect(),
        );
        if keys.is_empty() {
            return;
        }
        // $1 the customer, $2 the extra column's value when there is one, then the keys.
        let sql = match self.extra {
            Some((column, _)) => format!(
                "INSERT INTO {table} ({key}, customer_id, {column}) VALUES {} \
                 ON CONFLICT ({key}, customer_id) DO UPDATE SET {column} = excluded.{column}",
                numbered(3)
                    .iter()
                    .map(|p| format!("({p}, $1, $2)"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => format!(
                "INSERT INTO {table} ({key}, customer_id) VALUES {} ON CONFLICT ({key}, customer_id) DO NOTHING",
                numbered(2)
                    .iter()
                    .map(|p| format!("({p}, $1)"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let mut params: Vec<Param> = vec![customer_id.into()];
        if let Some((_, value)) = self.extra {
            params.push(value.into());
        }
        params.extend(key_params());
        batch.push(sql, params);
    }
}

/// Deletes every row of a customer's personal data and forfeits their points; `false` for a
/// customer never known. An erased customer is left as they are.
fn erase<'a>(
    conn: &'a mut Conn,
    customer_id: &'a CustomerId,
    reason: ErasureReason,
    now: i64,
) -> BoxFuture<'a, Result<bool, StoreError>> {
    Box::pin(async move {
        let id = customer_id.as_str();
        let held =
            query("UPDATE customers SET updated_at = updated_at WHERE customer_id = $1 RETURNING points, erased_at")
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?;
        let Some(held) = held else {
            return Ok(false);
        };
        if held.try_get::<Option<i64>>("erased_at")?.is_some() {
            return Ok(true);
        }
        for statement in [
            "DELETE FROM customer_profiles WHERE customer_id = $1",
            "DELETE FROM customer_words WHERE customer_id = $1",
            "DELETE FROM customer_groups WHERE customer_id = $1",
            "DELETE FROM customer_consents WHERE customer_id = $1",
        ] {
            query(statement).bind(id).execute(&mut *conn).await?;
        }
        let points: i64 = held.try_get("points")?;
        if points != 0 {
            query(RECORD_POINTS)
                .bind(id)
                .bind(PointsActivity::Forfeit.as_str())
                .bind(-points)
                .bind(None::<&str>)
                .bind(now)
                .execute(&mut *conn)
                .await?;
        }
        query("UPDATE customers SET points = 0, erased_at = $2 WHERE customer_id = $1")
            .bind(id)
            .bind(now)
            .execute(&mut *conn)
            .await?;
        let data = crate::feed::data_of(&serde_json::json!({"customerId": id, "reason": reason.as_str()}))?;
        crate::feed::NewEvent {
            kind: EventType::CustomerErased,
            occurred_at: now,
            store_id: None,
            register_id: None,
            subject: id,
            data: Some(data),
        }
        .record(conn)
        .await?;
        Ok(true)
    })
}

impl Store {
    pub async fn customer_groups(&self, customer_id: &CustomerId) -> Result<BTreeSet<String>, StoreError> {
        let rows = query("SELECT group_name FROM customer_groups WHERE customer_id = $1")
            .bind(customer_id.as_str())
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(|row| row.try_get("group_name")).collect()
    }
}

/// Keeps the customer in each of `groups` until the sale's transaction ends, or refuses the
/// sale when they left one since it was priced. The rows are locked by writing them unchanged,
/// which both engines understand: a profile's replacement waits for the sale, not the reverse.
pub(crate) async fn hold_groups(
    conn: &mut Conn,
    customer_id: &CustomerId,
    groups: &BTreeSet<String>,
) -> Result<(), StoreError> {
    for group in groups {
        let held = query(
            "UPDATE customer_groups SET group_name = group_name WHERE group_name = $1 AND customer_id = $2 \
             RETURNING group_name",
        )
        .bind(group.as_str())
        .bind(customer_id.as_str())
        .fetch_optional(&mut *conn)
        .await?;
        if held.is_none() {
            return Err(StoreError::Stale(Stale::CustomerLeftGroup(customer_id.clone())));
        }
    }
    Ok(())
}
