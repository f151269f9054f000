//! The customer directory: `PUT/GET /v1/customers/{customerId}`, the list and its search,
//! `GET /v1/customers/{customerId}/export`, `POST /v1/customers/{customerId}/erase`, and the
//! loyalty points of `GET /v1/customers/{customerId}/loyalty`.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, Parsed, PathParams, QueryParams};
use crate::fields::{Field, FromBody, Obj};
use crate::openapi::{GroupName, Text};
use crate::ops;
use crate::pagination::{CursorKey, Page, PageQuery, Paging, Scope};
use crate::routes::Written;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use std::collections::BTreeSet;
use till_app::customers::{CustomerExport, CustomerKey, CustomerRecord, CustomerSearch, PutCustomer};
use till_core::customer::{
    Consent, ConsentSource, Email, MAX_GROUP_CHARS, MAX_GROUPS, MAX_NAME_CHARS, MAX_NOTES_CHARS, MAX_POSTAL_CODE_CHARS,
    Phone, Profile, SearchText, id_is_personal,
};
use till_core::ids::CustomerId;
use till_core::instant::format_utc;
use till_core::words::QueryProblem;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(put_customer, get_customer))
        .routes(routes!(list_customers))
        .routes(routes!(export_customer))
        .routes(routes!(erase_customer))
        .routes(routes!(get_loyalty))
}

/// `{customerId}` of a customer already known.
pub(crate) struct CustomerPath(pub(crate) CustomerId);

impl FromParams for CustomerPath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("customerId", CustomerId::parse).map(CustomerPath)
    }
}

/// `{customerId}` of a profile write: an id that is itself an e-mail address or a phone
/// number is refused, for the journal seals every id a sale names.
pub(crate) struct NewCustomerPath(pub(crate) CustomerId);

impl FromParams for NewCustomerPath {
    fn from_params(params: &Params) -> Option<Self> {
        params
            .required("customerId", |text| {
                let id = CustomerId::parse(text).map_err(|error| error.to_string())?;
                if id_is_personal(text) {
                    return Err(
                        "must not be an e-mail address or a phone number: the fiscal journal keeps every \
                         customer id for good; use a number of your own"
                            .to_owned(),
                    );
                }
                Ok(id)
            })
            .map(NewCustomerPath)
    }
}

/// Consent flags; each change is kept with its time and source.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConsentBody {
    marketing_email: bool,
    marketing_sms: bool,
    e_receipt: bool,
}

impl From<Consent> for ConsentBody {
    fn from(consent: Consent) -> Self {
        ConsentBody {
            marketing_email: consent.marketing_email,
            marketing_sms: consent.marketing_sms,
            e_receipt: consent.e_receipt,
        }
    }
}

/// Body of `PUT /v1/customers/{customerId}`: the profile replaces the one held; a consent left
/// out stands as it was.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct CustomerBody {
    #[schema(value_type = Option<String>, max_length = 200)]
    display_name: Option<String>,
    /// An address with a domain; kept lowercased.
    #[schema(value_type = Option<String>, format = "email")]
    email: Option<Email>,
    /// Any common form (`06 12 34 56 78`, `+33 6 12 34 56 78`, `0033612345678`); kept in E.164.
    #[schema(value_type = Option<String>)]
    phone: Option<Phone>,
    #[schema(value_type = Option<String>, max_length = 20)]
    postal_code: Option<String>,
    /// `YYYY-MM-DD`, a day of the calendar.
    #[schema(value_type = Option<String>, format = "date", pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    birth_date: Option<jiff::civil::Date>,
    #[schema(value_type = Option<Vec<GroupName>>, max_items = 50)]
    groups: Option<Vec<String>>,
    #[schema(value_type = Option<String>, max_length = 2000)]
    notes: Option<String>,
    consent: Option<ConsentBody>,
}

/// Text of at most `max` characters, without control characters (`multiline` lets line breaks
/// through).
fn bounded(field: Field<'_>, max: usize, multiline: bool) -> Option<String> {
    let text = field.string()?;
    if text.chars().count() > max {
        return field.fail(format!("must be at most {max} characters"));
    }
    let allowed = |c: char| !c.is_control() || (multiline && (c == '\n' || c == '\r' || c == '\t'));
    if !text.chars().all(allowed) {
        return field.fail("must not hold control characters");
    }
    Some(text.to_owned())
}

impl FromBody for CustomerBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let display_name = root.optional("displayName", |f| bounded(f, MAX_NAME_CHARS, false));
        let email = root.optional("email", |f| {
            f.string_as("must be an e-mail address with a domain", Email::parse)
        });
        let phone = root.optional("phone", |f| {
            f.string_as(
                "must be a phone number: a French number (06 12 34 56 78) or an international one starting with + or 00",
                Phone::parse,
            )
        });
        let postal_code = root.optional("postalCode", |f| bounded(f, MAX_POSTAL_CODE_CHARS, false));
        let birth_date = root.optional("birthDate", |f| {
            f.string_as("must be a date, YYYY-MM-DD", |text| {
                text.parse::<jiff::civil::Date>().ok()
            })
        });
        let groups = root.optional("groups", group_names);
        let notes = root.optional("notes", |f| bounded(f, MAX_NOTES_CHARS, true));
        let consent = root.optional("consent", |f| {
            let consent = f.object()?;
            let marketing_email = consent.required("marketingEmail", |f| f.boolean());
            let marketing_sms = consent.required("marketingSms", |f| f.boolean());
            let e_receipt = consent.required("eReceipt", |f| f.boolean());
            Some(ConsentBody {
                marketing_email: marketing_email?,
                marketing_sms: marketing_sms?,
                e_receipt: e_receipt?,
            })
        });
        Some(CustomerBody {
            display_name: display_name?,
            email: email?,
            phone: phone?,
            postal_code: postal_code?,
            birth_date: birth_date?,
            groups: groups?,
            notes: notes?,
            consent: consent?,
        })
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerView {
    customer_id: String,
    display_name: Option<String>,
    email: Option<String>,
    /// E.164.
    phone: Option<String>,
    postal_code: Option<String>,
    birth_date: Option<String>,
    groups: Vec<String>,
    notes: Option<String>,
    consent: ConsentBody,
    loyalty_points: i64,
    /// When a sale or a write first named the customer.
    created_at: String,
    updated_at: String,
    /// The last sale, return or write that named them: what the retention period counts from.
    last_activity_at: String,
    /// When their personal data was erased; null while it is held.
    erased_at: Option<String>,
}

impl From<CustomerRecord> for CustomerView {
    fn from(record: CustomerRecord) -> Self {
        let profile = record.profile;
        CustomerView {
            customer_id: record.customer_id.into_string(),
            display_name: profile.display_name,
            email: profile.email.map(|email| email.as_str().to_owned()),
            phone: profile.phone.map(|phone| phone.as_str().to_owned()),
            postal_code: profile.postal_code,
            birth_date: profile.birth_date.map(|date| date.to_string()),
            groups: profile.groups.into_iter().collect(),
            notes: profile.notes,
            consent: record.consent.into(),
            loyalty_points: record.loyalty_points,
            created_at: format_utc(record.created_at),
            updated_at: format_utc(record.updated_at),
            last_activity_at: format_utc(record.last_activity_at),
            erased_at: record.erased_at.map(format_utc),
        }
    }
}

/// Create or replace a customer's profile.
///
/// The profile replaces the one held (a field left out is cleared); a `consent` left out
/// stands as it was, and each flag it changes is kept in the consent history with the source
/// `api`. A `customerId` that is an e-mail address or a phone number is refused: the fiscal
/// journal keeps every id a sale names. A person should confirm.
#[utoipa::path(put, path = "/v1/customers/{customerId}", operation_id = "putCustomer", tag = "provisioning",
    params(("customerId" = Text, Path, description = "The chain's own number for the customer: never an e-mail address or a phone number")),
    request_body = CustomerBody,
    responses((status = 200, description = "Replaced", body = CustomerView),
              (status = 201, description = "Created", body = CustomerView),
              (status = 409, description = "The customer's personal data was erased; the id is retired", body = crate::error::ErrorEnvelope)))]
async fn put_customer(
    _caller: Authorized<ops::PutCustomer>,
    State(state): State<AppState>,
    PathParams(NewCustomerPath(customer_id)): PathParams<NewCustomerPath>,
    Parsed(body): Parsed<CustomerBody>,
) -> Result<Written<CustomerView>, ApiError> {
    let put = PutCustomer {
        customer_id,
        profile: Profile {
            display_name: body.display_name,
            email: body.email,
            phone: body.phone,
            postal_code: body.postal_code,
            birth_date: body.birth_date,
            groups: body.groups.unwrap_or_default().into_iter().collect::<BTreeSet<_>>(),
            notes: body.notes,
        },
        consent: body.consent.map(|consent| Consent {
            marketing_email: consent.marketing_email,
            marketing_sms: consent.marketing_sms,
            e_receipt: consent.e_receipt,
        }),
        source: ConsentSource::Api,
    };
    let (record, created) = till_app::customers::put(state.app(), put).await?;
    Ok(Written::new(created, record.into()))
}

pub(crate) fn not_found() -> ApiError {
    ApiError::NotFound("Customer not found: no sale or profile write has named them.".into())
}

/// Read a customer's profile.
///
/// A customer a sale named without a profile reads as a bare profile. Read-only; safe to call
/// at any time.
#[utoipa::path(get, path = "/v1/customers/{customerId}", operation_id = "getCustomer", tag = "provisioning",
    params(("customerId" = Text, Path)),
    responses((status = 200, description = "The profile", body = CustomerView),
              (status = 404, description = "No such customer", body = crate::error::ErrorEnvelope)))]
async fn get_customer(
    _caller: Authorized<ops::GetCustomer>,
    State(state): State<AppState>,
    PathParams(CustomerPath(customer_id)): PathParams<CustomerPath>,
) -> Result<Json<CustomerView>, ApiError> {
    let record = till_app::customers::get(state.app(), &customer_id)
        .await?
        .ok_or_else(not_found)?;
    Ok(Json(record.into()))
}

/// The search of `GET /v1/customers`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct CustomerQuery {
    /// Only the customers it finds: an e-mail address finds the profiles holding it (in any
    /// case), a phone number in any common form (`06 12 34 56 78`, `+33612345678`) those
    /// holding it, other text the customers whose name holds each of its words, the last one as
    /// the start of a word, with or without accents.
    #[param(value_type = Option<String>, min_length = 1, max_length = 100, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
    q: Option<(String, SearchText)>,
    /// Only the customers of this group.
    #[param(value_type = Option<Text>)]
    group: Option<String>,
}

/// The page of the list to read, with what it asks for (the console's search reads the same).
pub(crate) struct CustomerList {
    /// The search text as sent.
    pub(crate) q: Option<String>,
    pub(crate) search: CustomerSearch,
    pub(crate) group: Option<String>,
    pub(crate) paging: Paging<CustomerKey>,
}

impl FromParams for CustomerQuery {
    fn from_params(params: &Params) -> Option<Self> {
        let q = params.optional("q", |text| {
            SearchText::parse(text).map(|search| (text.to_owned(), search))
        });
        let group = params.optional("group", |text| Ok::<_, QueryProblem>(text.to_owned()));
        Some(CustomerQuery { q: q?, group: group? })
    }
}

impl FromParams for CustomerList {
    fn from_params(params: &Params) -> Option<Self> {
        let query = CustomerQuery::from_params(params);
        let page = PageQuery::read(params);
        let (CustomerQuery { q, group }, page) = (query?, page?);
        let scope = Scope::new("customers")
            .filter("q", q.as_ref().map(|(text, _)| text.clone()))
            .filter("group", group.clone());
        let paging = page.paging(params, scope)?;
        let text = q.as_ref().map(|(text, _)| text.clone());
        let search = match q {
            None => CustomerSearch::All,
            Some((_, SearchText::Email(email))) => CustomerSearch::Email(email),
            Some((_, SearchText::Phone(phone))) => CustomerSearch::Phone(phone),
            Some((_, SearchText::Name(name))) => CustomerSearch::Name(name),
        };
        Some(CustomerList {
            q: text,
            search,
            group,
            paging,
        })
    }
}

/// A list's key in a cursor: the word, a zero byte (no word holds one), then the customer.
impl CursorKey for CustomerKey {
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.word.as_bytes());
        out.push(0);
        out.extend_from_slice(self.customer_id.as_str().as_bytes());
    }

    fn read(bytes: &[u8]) -> Option<Self> {
        let split = bytes.iter().position(|&b| b == 0)?;
        let word = std::str::from_utf8(&bytes[..split]).ok()?;
        let id = std::str::from_utf8(&bytes[split + 1..]).ok()?;
        Some(CustomerKey {
            word: word.to_owned(),
            customer_id: CustomerId::parse(id).ok()?,
        })
    }
}

/// A page of the list, as the document names it.
type CustomerPage = Page<CustomerView>;

/// List or search the customers.
///
/// Without `q`, every customer by id. With `q`, those it finds by e-mail address, phone number
/// or words of the name; a name search lists them in the order of the word they were found by,
/// then by id, each once. Follow `nextCursor`, sent with the same `q` and `group`, until it is
/// null. Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/customers", operation_id = "listCustomers", tag = "provisioning",
    params(CustomerQuery, PageQuery),
    responses((status = 200, description = "A page of customers", body = CustomerPage)))]
async fn list_customers(
    _caller: Authorized<ops::ListCustomers>,
    State(state): State<AppState>,
    QueryParams(list): QueryParams<CustomerList>,
) -> Result<Json<CustomerPage>, ApiError> {
    let found =
        till_app::customers::search(state.app(), &list.search, list.group.as_deref(), &list.paging.window()).await?;
    Ok(Json(list.paging.page(
        found,
        |(key, _)| key.clone(),
        |(_, record)| record.into(),
    )))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConsentChangeView {
    /// `marketingEmail`, `marketingSms` or `eReceipt`.
    flag: String,
    granted: bool,
    /// `till`, `console` or `api`.
    source: String,
    at: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PointsLineView {
    /// `earn`, `redeem`, `refund`, `take_back`, `adjust` or `forfeit`.
    kind: String,
    points: i64,
    transaction_id: Option<String>,
    at: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamedTicketView {
    transaction_id: String,
    /// `sale` or `return`.
    kind: String,
    store_id: String,
    emitted_at: String,
    total_cents: i64,
}

/// Everything held on one customer.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerExportView {
    customer: CustomerView,
    /// Every change of a consent flag, oldest first.
    consent_history: Vec<ConsentChangeView>,
    /// Their loyalty points ledger, oldest first.
    loyalty_ledger: Vec<PointsLineView>,
    /// The sales and returns that name them, oldest first.
    tickets: Vec<NamedTicketView>,
}

impl From<CustomerExport> for CustomerExportView {
    fn from(export: CustomerExport) -> Self {
        CustomerExportView {
            customer: export.customer.into(),
            consent_history: export
                .consent_history
                .into_iter()
                .map(|change| ConsentChangeView {
                    flag: change.flag.as_str().to_owned(),
                    granted: change.granted,
                    source: change.source.as_str().to_owned(),
                    at: format_utc(change.at),
                })
                .collect(),
            loyalty_ledger: export
                .points
                .into_iter()
                .map(|line| PointsLineView {
                    kind: line.kind,
                    points: line.points,
                    transaction_id: line.transaction_id,
                    at: format_utc(line.at),
                })
                .collect(),
            tickets: export
                .tickets
                .into_iter()
                .map(|ticket| NamedTicketView {
                    transaction_id: ticket.transaction_id,
                    kind: ticket.kind,
                    store_id: ticket.store_id,
                    emitted_at: format_utc(ticket.emitted_at),
                    total_cents: ticket.total_cents,
                })
                .collect(),
        }
    }
}

/// Export everything held on a customer.
///
/// The profile, the history of their consent, their loyalty points ledger, and the sales and
/// returns that name them: what a customer who asks what the chain holds on them is given.
/// Only for a person answering that request.
#[utoipa::path(get, path = "/v1/customers/{customerId}/export", operation_id = "exportCustomer", tag = "provisioning",
    params(("customerId" = Text, Path)),
    responses((status = 200, description = "Everything held on the customer", body = CustomerExportView),
              (status = 404, description = "No such customer", body = crate::error::ErrorEnvelope)))]
async fn export_customer(
    _caller: Authorized<ops::ExportCustomer>,
    State(state): State<AppState>,
    PathParams(CustomerPath(customer_id)): PathParams<CustomerPath>,
) -> Result<Json<CustomerExportView>, ApiError> {
    let export = till_app::customers::export(state.app(), &customer_id)
        .await?
        .ok_or_else(not_found)?;
    Ok(Json(export.into()))
}

/// Erase a customer's personal data.
///
/// Deletes the profile, its search words, groups and consent history; forfeits the points with
/// a line of the ledger; sets `erasedAt`. The sales keep the bare id, and the fiscal journal
/// verifies as before. The event `customer.erased` carries the id only. Erasing again changes
/// nothing and answers the same. Cannot be undone: only for a person answering the customer's
/// request.
#[utoipa::path(post, path = "/v1/customers/{customerId}/erase", operation_id = "eraseCustomer", tag = "provisioning",
    params(("customerId" = Text, Path)),
    responses((status = 200, description = "The customer as erased", body = CustomerView),
              (status = 404, description = "No such customer", body = crate::error::ErrorEnvelope)))]
async fn erase_customer(
    _caller: Authorized<ops::EraseCustomer>,
    State(state): State<AppState>,
    PathParams(CustomerPath(customer_id)): PathParams<CustomerPath>,
) -> Result<Json<CustomerView>, ApiError> {
    let record = till_app::customers::erase(state.app(), &customer_id)
        .await?
        .ok_or_else(not_found)?;
    Ok(Json(record.into()))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoyaltyView {
    customer_id: String,
    points: i64,
}

/// Read a customer's loyalty points.
///
/// A customer is enrolled at their first sale. Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/customers/{customerId}/loyalty", operation_id = "getCustomerLoyalty", tag = "provisioning",
    params(("customerId" = Text, Path)),
    responses((status = 200, description = "The points balance", body = LoyaltyView),
              (status = 404, description = "Customer never seen at a sale", body = crate::error::ErrorEnvelope)))]
async fn get_loyalty(
    _caller: Authorized<ops::GetLoyalty>,
    State(state): State<AppState>,
    PathParams(CustomerPath(customer)): PathParams<CustomerPath>,
) -> Result<Json<LoyaltyView>, ApiError> {
    let account = till_app::customers::loyalty_account(state.app(), &customer)
        .await?
        .ok_or_else(|| ApiError::NotFound("Customer not found: no sale has named them yet.".into()))?;
    Ok(Json(LoyaltyView {
        customer_id: account.customer_id.into_string(),
        points: account.points,
    }))
}

/// Customer group names: each a non-blank text of at most [`MAX_GROUP_CHARS`] characters, at
/// most [`MAX_GROUPS`] of them. A profile's groups and a promotion's read alike.
pub(crate) fn group_names(field: Field<'_>) -> Option<Vec<String>> {
    let groups = field.array(|item| {
        if item.value().as_str().is_some_and(|name| name.trim().is_empty()) {
            return item.fail("must not be blank");
        }
        bounded(item, MAX_GROUP_CHARS, false)
    })?;
    if groups.len() > MAX_GROUPS {
        return field.fail(format!("must hold at most {MAX_GROUPS} groups"));
    }
    Some(groups)
}
