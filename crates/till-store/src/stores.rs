//! The store network.

use crate::db::Store;
use crate::error::{NewIdOf, Rule, StoreError};
use crate::page::{Keyset, Window};
use crate::sql::{Conn, On, Row, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
use std::collections::HashSet;
pub use till_app::storage::people::StoreRecord;
use till_core::ids::{SkuId, StoreId, check_new_id};
use till_core::instant::{from_micros, to_micros};
use till_core::seller::{
    AddressLine, CountryCode, LegalName, PostalAddress, PostalCode, SellerIdentity, Siren, VatNumber,
};
use till_core::store::{Currency, Siret, StoreProfile, Timezone};

struct PutStore {
    store_id: StoreId,
    profile: StoreProfile,
    now: i64,
}

impl Store {
    pub async fn put_store(
        &self,
        store_id: StoreId,
        profile: StoreProfile,
        now: Timestamp,
    ) -> Result<(StoreRecord, bool), StoreError> {
        self.write(
            PutStore {
                store_id,
                profile,
                now: to_micros(now),
            },
            |c, i| Box::pin(put_store(c, i)),
        )
        .await
    }

    pub async fn get_store(&self, store_id: &StoreId) -> Result<Option<StoreRecord>, StoreError> {
        let row = query(SELECT_STORE)
            .bind(store_id.as_str())
            .fetch_optional(self.reader())
            .await?;
        row.as_ref().map(store_from_row).transpose()
    }

    pub async fn list_stores(&self, window: &Window<StoreId>) -> Result<Vec<StoreRecord>, StoreError> {
        let after = window.after.as_ref().map(StoreId::as_str);
        let rows = Keyset::new(LIST_STORES)
            .by_id("store_id", after, window.take)
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(store_from_row).collect()
    }

    pub async fn store_in_network(&self, store_id: &StoreId) -> Result<Option<bool>, StoreError> {
        let known = |stores: &HashSet<String>| stores.contains(store_id.as_str());
        if self.known_stores().read().is_ok_and(|stores| known(&stores)) {
            return Ok(Some(true));
        }
        let answer = store_in_network(self.reader(), store_id.as_str()).await?;
        if answer == Some(true)
            && let Ok(mut stores) = self.known_stores().write()
        {
            stores.insert(store_id.as_str().to_owned());
        }
        Ok(answer)
    }
}

pub(crate) async fn store_in_network<'e>(on: impl Into<On<'e>>, store_id: &str) -> Result<Option<bool>, StoreError> {
    let row = query(
        "SELECT (SELECT COUNT(*) FROM stores WHERE store_id = $1) AS known, \
                (SELECT COUNT(*) FROM (SELECT 1 FROM stores LIMIT 1) AS any_store) AS stores",
    )
    .bind(store_id)
    .fetch_one(on)
    .await?;
    let known: i64 = row.try_get("known")?;
    let stores: i64 = row.try_get("stores")?;
    Ok((stores > 0).then_some(known > 0))
}

/// A store's columns, as [`store_from_row`] reads them.
macro_rules! store_columns {
    () => {
        "store_id, name, timezone, currency, siret, legal_name, address_line1, address_line2, postal_code, \
         city, country, siren, vat_number, created_at, updated_at"
    };
}

pub(crate) const SELECT_STORE: &str = concat!("SELECT ", store_columns!(), " FROM stores WHERE store_id = $1");

const LIST_STORES: &str = concat!("SELECT ", store_columns!(), " FROM stores");

fn put_store<'a>(conn: &'a mut Conn, input: &'a PutStore) -> BoxFuture<'a, Result<(StoreRecord, bool), StoreError>> {
    Box::pin(async move {
        let existed = query("SELECT 1 FROM stores WHERE store_id = $1")
            .bind(input.store_id.as_str())
            .fetch_optional(&mut *conn)
            .await?
            .is_some();
        if !existed {
            check_new_id(input.store_id.as_str()).map_err(|problem| {
                StoreError::Rule(Rule::NewId {
                    of: NewIdOf::Store,
                    problem,
                })
            })?;
        }
        let profile = &input.profile;
        let seller = &profile.seller;
        let address = seller.address.as_ref();
        let row = query(concat!(
            "INSERT INTO stores (store_id, name, timezone, currency, siret, legal_name, address_line1, \
                 address_line2, postal_code, city, country, siren, vat_number, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14) \
             ON CONFLICT (store_id) DO UPDATE SET name = excluded.name, timezone = excluded.timezone, \
                 currency = excluded.currency, siret = excluded.siret, legal_name = excluded.legal_name, \
                 address_line1 = excluded.address_line1, address_line2 = excluded.address_line2, \
                 postal_code = excluded.postal_code, city = excluded.city, country = excluded.country, \
                 siren = excluded.siren, vat_number = excluded.vat_number, updated_at = excluded.updated_at \
             RETURNING ",
            store_columns!()
        ))
        .bind(input.store_id.as_str())
        .bind(&profile.name)
        .bind(profile.timezone.as_str())
        .bind(profile.currency.as_str())
        .bind(profile.siret.as_ref().map(Siret::as_str))
        .bind(seller.legal_name.as_ref().map(LegalName::as_str))
        .bind(address.map(|a| a.line1.as_str()))
        .bind(address.and_then(|a| a.line2.as_ref()).map(AddressLine::as_str))
        .bind(address.map(|a| a.postal_code.as_str()))
        .bind(address.map(|a| a.city.as_str()))
        .bind(address.map(|a| a.country.as_str()))
        .bind(seller.siren.as_ref().map(Siren::as_str))
        .bind(seller.vat_number.as_ref().map(VatNumber::as_str))
        .bind(input.now)
        .fetch_one(&mut *conn)
        .await?;
        Ok((store_from_row(&row)?, !existed))
    })
}

pub(crate) fn store_from_row(row: &Row) -> Result<StoreRecord, StoreError> {
    Ok(StoreRecord {
        store_id: StoreId::from_trusted(row.try_get("store_id")?),
        profile: StoreProfile {
            name: row.try_get("name")?,
            timezone: Timezone::from_trusted(row.try_get("timezone")?),
            currency: Currency::from_trusted(row.try_get("currency")?),
            siret: row.try_get::<Option<String>>("siret")?.map(Siret::from_trusted),
            seller: seller_from_row(row)?,
        },
        created_at: from_micros(row.try_get("created_at")?),
        updated_at: from_micros(row.try_get("updated_at")?),
    })
}

/// The seller's identity of a store's row: an address is kept whole or not at all.
fn seller_from_row(row: &Row) -> Result<SellerIdentity, StoreError> {
    let text = |column: &str| row.try_get::<Option<String>>(column);
    let address = match (
        text("address_line1")?,
        text("postal_code")?,
        text("city")?,
        text("country")?,
    ) {
        (Some(line1), Some(postal_code), Some(city), Some(country)) => Some(PostalAddress {
            line1: AddressLine::from_trusted(line1),
            line2: text("address_line2")?.map(AddressLine::from_trusted),
            postal_code: PostalCode::from_trusted(postal_code),
            city: AddressLine::from_trusted(city),
            country: CountryCode::from_trusted(country),
        }),
        _ => None,
    };
    Ok(SellerIdentity {
        legal_name: text("legal_name")?.map(LegalName::from_trusted),
        address,
        siren: text("siren")?.map(Siren::from_trusted),
        vat_number: text("vat_number")?.map(VatNumber::from_trusted),
    })
}

/// The store and the article exist: `NotFound` naming the one that does not.
pub(crate) async fn store_and_article_exist(
    conn: &mut Conn,
    store_id: &StoreId,
    sku_id: &SkuId,
) -> Result<(), StoreError> {
    let store = query("SELECT 1 FROM stores WHERE store_id = $1")
        .bind(store_id.as_str())
        .fetch_optional(&mut *conn)
        .await?;
    if store.is_none() {
        return Err(StoreError::NotFound("store"));
    }
    let sku = query("SELECT 1 FROM skus WHERE sku_id = $1")
        .bind(sku_id.as_str())
        .fetch_optional(&mut *conn)
        .await?;
    if sku.is_none() {
        return Err(StoreError::NotFound("article"));
    }
    Ok(())
}
