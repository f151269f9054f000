//! `PUT/GET /v1/stores/{storeId}`: the store network.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, Parsed, PathParams, QueryParams};
use crate::fields::{Field, FromBody, Obj};
use crate::openapi::Text;
use crate::ops;
use crate::pagination::{Page, PageQuery, Paging, Scope};
use crate::routes::Written;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::OnceLock;
use till_app::stores::{self, StoreRecord};
use till_core::ids::StoreId;
use till_core::instant::format_utc;
use till_core::seller::{
    AddressLine, CountryCode, IdentityProblem, LINE_PATTERN, LegalName, PostalAddress, PostalCode, SellerIdentity,
    Siren, VAT_PREFIXES, VatNumber,
};
use till_core::store::{Currency, Siret, StoreProfile, Timezone};
use utoipa::openapi::RefOr;
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(put_store, get_store))
        .routes(routes!(list_stores))
}

/// Body of `PUT /v1/stores/{storeId}`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct StoreBody {
    #[schema(value_type = Text)]
    name: String,
    /// Days close at midnight in it. Default `Europe/Paris`.
    #[schema(value_type = Option<TimezoneName>)]
    timezone: Option<Timezone>,
    /// ISO 4217 code. Default `EUR`.
    #[schema(value_type = Option<String>, pattern = "^[A-Z]{3}$")]
    currency: Option<Currency>,
    /// French establishment number, 14 digits, printed on receipts. With a `siren`, it starts
    /// with it.
    #[schema(value_type = Option<String>, pattern = "^[0-9]{14}$")]
    siret: Option<Siret>,
    /// The company's registered name, printed on receipts and invoices: up to 200 characters,
    /// no control character, not only spaces.
    #[schema(value_type = Option<LegalNameText>)]
    legal_name: Option<LegalName>,
    /// The store's postal address, printed on receipts and invoices.
    #[schema(value_type = Option<AddressShape>)]
    address: Option<PostalAddress>,
    /// The company's number in the French registry: 9 digits passing the Luhn check.
    #[schema(value_type = Option<String>, pattern = "^[0-9]{9}$")]
    siren: Option<Siren>,
    /// The intra-community VAT number as the registries write it: an EU prefix (`FR`, `BE`,
    /// `EL`, ...) then 2 to 13 capital letters or digits; a French number is `FR`, the key of
    /// its SIREN (two digits, `(12 + 3 × (SIREN mod 97)) mod 97`), then the SIREN, and with a
    /// `siren` it is that SIREN's.
    #[schema(value_type = Option<VatNumberText>)]
    vat_number: Option<VatNumber>,
}

/// A store's postal address, in the body and in the answer.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddressShape {
    #[schema(value_type = AddressLineText)]
    line1: String,
    #[schema(value_type = Option<AddressLineText>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    line2: Option<String>,
    /// 5 digits in France; elsewhere up to 10 letters, digits, spaces or dashes, with a letter
    /// or a digit.
    #[schema(max_length = 10, pattern = "^[A-Za-z0-9 -]*[A-Za-z0-9][A-Za-z0-9 -]*$")]
    postal_code: String,
    #[schema(value_type = AddressLineText)]
    city: String,
    #[schema(value_type = CountryName)]
    country: String,
}

/// A line of text of the seller's identity as the document names it: up to `$max`
/// characters, none a control character, not only spaces.
macro_rules! identity_line {
    ($name:ident, $max:expr, $description:literal) => {
        pub(crate) struct $name;

        impl utoipa::PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(1))
                    .max_length(Some($max))
                    .pattern(Some(LINE_PATTERN))
                    .description(Some($description))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {}
    };
}

identity_line!(
    LegalNameText,
    LegalName::MAX_CHARS,
    "A company's registered name: up to 200 characters, none a control character, not only spaces."
);
identity_line!(
    AddressLineText,
    AddressLine::MAX_CHARS,
    "A line of an address, or its city: up to 100 characters, none a control character, not only spaces."
);

/// An ISO 3166-1 alpha-2 code, as the document lists them.
pub(crate) struct CountryName;

impl utoipa::PartialSchema for CountryName {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(CountryCode::assigned()))
            .description(Some("A country, as ISO 3166-1 alpha-2 codes it."))
            .into()
    }
}

impl utoipa::ToSchema for CountryName {}

pub(crate) struct VatNumberText;

impl utoipa::PartialSchema for VatNumberText {
    fn schema() -> RefOr<Schema> {
        let prefixes: Vec<&str> = VAT_PREFIXES.split_whitespace().collect();
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(format!("^({})[0-9A-Z]{{2,13}}$", prefixes.join("|"))))
            .description(Some(
                "An intra-community VAT number: an EU prefix, then 2 to 13 capital letters or digits.",
            ))
            .into()
    }
}

impl utoipa::ToSchema for VatNumberText {}

impl From<&PostalAddress> for AddressShape {
    fn from(address: &PostalAddress) -> Self {
        AddressShape {
            line1: address.line1.as_str().to_owned(),
            line2: address.line2.as_ref().map(|l| l.as_str().to_owned()),
            postal_code: address.postal_code.as_str().to_owned(),
            city: address.city.as_str().to_owned(),
            country: address.country.as_str().to_owned(),
        }
    }
}

/// A field of the seller's identity, parsed by the core's rule, refused with its words.
pub(crate) fn identity<T>(field: Field<'_>, parse: impl FnOnce(&str) -> Result<T, IdentityProblem>) -> Option<T> {
    let text = field.string()?;
    match parse(text) {
        Ok(value) => Some(value),
        Err(problem) => field.fail(problem.to_string()),
    }
}

pub(crate) fn address(field: Field<'_>) -> Option<PostalAddress> {
    let object = field.object()?;
    let line1 = object.required("line1", |f| identity(f, AddressLine::parse));
    let line2 = object.optional("line2", |f| identity(f, AddressLine::parse));
    let city = object.required("city", |f| identity(f, AddressLine::parse));
    let country = object.required("country", |f| identity(f, CountryCode::parse));
    // A postal code is read by its country's rule, once the country is known.
    let postal_code = match &country {
        Some(country) => object.required("postalCode", |f| identity(f, |t| PostalCode::parse(t, country))),
        None => None,
    };
    Some(PostalAddress {
        line1: line1?,
        line2: line2?,
        postal_code: postal_code?,
        city: city?,
        country: country?,
    })
}

impl FromBody for StoreBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let name = root.required("name", |f| f.text());
        let timezone = root.optional("timezone", |f| {
            f.string_as("must be an IANA time zone such as Europe/Paris", timezone)
        });
        let currency = root.optional("currency", |f| {
            f.string_as("must be an ISO 4217 code such as EUR", Currency::parse)
        });
        let siret = root.optional("siret", |f| f.string_as("must be 14 digits", Siret::parse));
        let legal_name = root.optional("legalName", |f| identity(f, LegalName::parse));
        let address = root.optional("address", address);
        let siren = root.optional("siren", |f| identity(f, Siren::parse));
        let vat_number = root.optional("vatNumber", |f| identity(f, VatNumber::parse));
        let (siret, legal_name, address, siren, vat_number) = (siret?, legal_name?, address?, siren?, vat_number?);
        let seller = SellerIdentity {
            legal_name,
            address,
            siren,
            vat_number,
        };
        let seller = match seller.checked(siret.as_ref().map(Siret::as_str)) {
            Ok(seller) => seller,
            Err(problem @ IdentityProblem::SiretOfAnotherSiren) => return root.fail("siret", problem.to_string()),
            Err(problem) => return root.fail("vatNumber", problem.to_string()),
        };
        Some(StoreBody {
            name: name?,
            timezone: timezone?,
            currency: currency?,
            siret,
            legal_name: seller.legal_name,
            address: seller.address,
            siren: seller.siren,
            vat_number: seller.vat_number,
        })
    }
}

impl From<StoreBody> for StoreProfile {
    fn from(body: StoreBody) -> StoreProfile {
        StoreProfile {
            name: body.name,
            timezone: body.timezone.unwrap_or_else(Timezone::default_zone),
            currency: body.currency.unwrap_or_else(Currency::default_currency),
            siret: body.siret,
            seller: SellerIdentity {
                legal_name: body.legal_name,
                address: body.address,
                siren: body.siren,
                vat_number: body.vat_number,
            },
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoreView {
    store_id: String,
    name: String,
    timezone: String,
    currency: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    siret: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    legal_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    address: Option<AddressShape>,
    #[serde(skip_serializing_if = "Option::is_none")]
    siren: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    vat_number: Option<String>,
    created_at: String,
    updated_at: String,
}

impl From<StoreRecord> for StoreView {
    fn from(record: StoreRecord) -> Self {
        let seller = record.profile.seller;
        StoreView {
            store_id: record.store_id.into_string(),
            name: record.profile.name,
            timezone: record.profile.timezone.as_str().to_owned(),
            currency: record.profile.currency.as_str().to_owned(),
            siret: record.profile.siret.map(|s| s.as_str().to_owned()),
            legal_name: seller.legal_name.map(|n| n.as_str().to_owned()),
            address: seller.address.as_ref().map(AddressShape::from),
            siren: seller.siren.map(|s| s.as_str().to_owned()),
            vat_number: seller.vat_number.map(|v| v.as_str().to_owned()),
            created_at: format_utc(record.created_at),
            updated_at: format_utc(record.updated_at),
        }
    }
}

/// The time zone names a store may name: those of the bundled time zone database, spelled as it
/// spells them (its look-up alone would also take `europe/paris`).
fn timezone_names() -> &'static BTreeSet<String> {
    static NAMES: OnceLock<BTreeSet<String>> = OnceLock::new();
    NAMES.get_or_init(|| {
        jiff::tz::db()
            .available()
            .map(|name| name.as_str().to_owned())
            .collect()
    })
}

fn timezone(text: &str) -> Option<Timezone> {
    timezone_names().contains(text).then(|| Timezone::parse(text)).flatten()
}

/// An IANA time zone name, as the document lists them.
struct TimezoneName;

impl utoipa::PartialSchema for TimezoneName {
    fn schema() -> RefOr<Schema> {
        let names = timezone_names();
        let mut extensions = Extensions::default();
        // Generated clients name each value; `Etc/GMT+1` and `Etc/GMT-1` must not collide.
        extensions.insert(
            "x-enum-varnames".to_owned(),
            Value::from(names.iter().map(|name| variable_name(name)).collect::<Vec<_>>()),
        );
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(names.iter().map(String::as_str)))
            .description(Some(
                "An IANA time zone, spelled as the time zone database does (the one bundled with this \
                 server).",
            ))
            .extensions(Some(extensions))
            .into()
    }
}

impl utoipa::ToSchema for TimezoneName {}

/// `Etc/GMT+1` as `ETC_GMT_PLUS_1`: letters and digits, words joined by `_`, signs spelled out.
fn variable_name(zone: &str) -> String {
    let mut name = String::with_capacity(zone.len() + 8);
    let mut chars = zone.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '+' => name.push_str("_PLUS_"),
            '-' if chars.peek().is_some_and(char::is_ascii_digit) => name.push_str("_MINUS_"),
            c if c.is_ascii_alphanumeric() => name.push(c.to_ascii_uppercase()),
            _ => name.push('_'),
        }
    }
    let words: Vec<&str> = name.split('_').filter(|word| !word.is_empty()).collect();
    words.join("_")
}

/// `{storeId}` of the store routes.
pub(crate) struct StorePath(StoreId);

impl FromParams for StorePath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("storeId", StoreId::parse).map(StorePath)
    }
}

/// Create or replace a store.
///
/// Back-office provisioning. Once the network has a store, sales must name one of its stores.
/// Idempotent: sending the same body again changes nothing. A person should confirm the change.
#[utoipa::path(put, path = "/v1/stores/{storeId}", operation_id = "putStore", tag = "provisioning",
    params(("storeId" = Text, Path, description = "Store identifier")),
    request_body = StoreBody,
    responses((status = 200, description = "Replaced", body = StoreView),
              (status = 201, description = "Created", body = StoreView)))]
async fn put_store(
    _caller: Authorized<ops::PutStore>,
    State(state): State<AppState>,
    PathParams(StorePath(id)): PathParams<StorePath>,
    Parsed(body): Parsed<StoreBody>,
) -> Result<Written<StoreView>, ApiError> {
    let written = stores::put_store(state.app(), id, body.into()).await?;
    Ok(Written::new(written.created, written.record.into()))
}

/// Read a store.
///
/// Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/stores/{storeId}", operation_id = "getStore", tag = "provisioning",
    params(("storeId" = Text, Path, description = "Store identifier")),
    responses((status = 200, description = "The store", body = StoreView),
              (status = 404, description = "No such store", body = crate::error::ErrorEnvelope)))]
async fn get_store(
    _caller: Authorized<ops::GetStore>,
    State(state): State<AppState>,
    PathParams(StorePath(id)): PathParams<StorePath>,
) -> Result<Json<StoreView>, ApiError> {
    let record = stores::get_store(state.app(), &id)
        .await?
        .ok_or_else(|| ApiError::NotFound("Store not found.".into()))?;
    Ok(Json(record.into()))
}

/// The page of the store list to read; the list has no filter.
struct StoreList(Paging<StoreId>);

impl FromParams for StoreList {
    fn from_params(params: &Params) -> Option<Self> {
        PageQuery::read(params)?
            .paging(params, Scope::new("stores"))
            .map(StoreList)
    }
}

/// A page of the list, as the document names it.
type StorePage = Page<StoreView>;

/// List the stores.
///
/// Every store of the network by id, a page at a time: follow `nextCursor` until it is null.
/// Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/stores", operation_id = "listStores", tag = "provisioning",
    params(PageQuery),
    responses((status = 200, description = "A page of stores, by id", body = StorePage)))]
async fn list_stores(
    _caller: Authorized<ops::ListStores>,
    State(state): State<AppState>,
    QueryParams(StoreList(paging)): QueryParams<StoreList>,
) -> Result<Json<StorePage>, ApiError> {
    let records = stores::list_stores(state.app(), &paging.window()).await?;
    Ok(Json(paging.page(
        records,
        |record| record.store_id.clone(),
        StoreView::from,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_time_zone_has_its_own_variable_name() {
        let names: BTreeSet<String> = timezone_names().iter().map(|zone| variable_name(zone)).collect();
        assert_eq!(names.len(), timezone_names().len());
        assert_eq!(variable_name("Etc/GMT+1"), "ETC_GMT_PLUS_1");
        assert_eq!(variable_name("America/Port-au-Prince"), "AMERICA_PORT_AU_PRINCE");
        assert!(timezone("Europe/Paris").is_some());
        assert!(timezone("europe/paris").is_none(), "spelled as the database spells it");
    }
}
