//! `PUT/GET /v1/staff/{subject}`, `GET /v1/staff`: people who work the tills, their roles, PINs
//! and limits.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, Parsed, PathParams, QueryParams};
use crate::fields::{FromBody, Obj};
use crate::openapi::Text;
use crate::ops;
use crate::pagination::{Page, PageQuery, Paging, Scope};
use crate::routes::Written;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use till_app::staff::{self, StaffRecord};
use till_core::grant::{Grant, GrantSet, Role};
use till_core::ids::Subject;
use till_core::instant::format_utc;
use till_core::money::{Bps, Cents};
use till_core::staff::{DiscountLimit, Pin, StaffMember};
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, SchemaType, Type};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(put_staff, get_staff))
        .routes(routes!(list_staff))
}

/// Body of `PUT /v1/staff/{subject}`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct StaffBody {
    #[schema(value_type = Text)]
    display_name: String,
    #[schema(schema_with = role_schema)]
    role: Role,
    /// 4 to 12 digits. Write-only; required when creating, optional to keep the current PIN.
    #[schema(value_type = Option<String>, pattern = "^[0-9]{4,12}$", write_only)]
    pin: Option<Pin>,
    #[schema(schema_with = permissions_schema)]
    permissions: Option<Vec<Grant>>,
    discount_limit: Option<DiscountLimitBody>,
}

impl FromBody for StaffBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let roles: Vec<(&str, Role)> = Role::ALL.iter().map(|r| (r.as_str(), *r)).collect();
        let display_name = root.required("displayName", |f| f.text());
        let role = root.required("role", |f| f.one_of(&roles));
        let pin = root.optional("pin", |f| f.string_as("must be 4 to 12 digits", Pin::parse));
        let permissions = root.optional("permissions", |f| {
            f.array(|item| item.string_as("is not a known scope or permission", Grant::parse))
        });
        let discount_limit = root.optional("discountLimit", |f| {
            let limit = f.object()?;
            let percent = limit.required("percentBps", |f| f.bps(0));
            let amount = limit.required("amountCents", |f| f.cents());
            Some(DiscountLimitBody {
                percent_bps: percent?,
                amount_cents: amount?,
            })
        });
        Some(StaffBody {
            display_name: display_name?,
            role: role?,
            pin: pin?,
            permissions: permissions?,
            discount_limit: discount_limit?,
        })
    }
}

impl StaffBody {
    /// The member as written, and the PIN to set when one was sent.
    fn member(self) -> (StaffMember, Option<Pin>) {
        let member = StaffMember {
            display_name: self.display_name,
            role: self.role,
            permissions: self.permissions.unwrap_or_default().into_iter().collect(),
            discount_limit: self.discount_limit.map(|limit| DiscountLimit {
                percent: limit.percent_bps,
                amount: limit.amount_cents,
            }),
        };
        (member, self.pin)
    }
}

fn role_schema() -> Schema {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(Role::ALL.iter().map(|role| role.as_str())))
        .description(Some(
            "`cashier`, `manager` (adds price:override) or `admin` (every scope).",
        ))
        .into()
}

fn permissions_schema() -> Schema {
    let word = ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(Grant::ALL.iter().map(|grant| grant.as_str())));
    ArrayBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Array, Type::Null]))
        .items(word)
        .description(Some(
            "Scopes or permissions beyond the role's, such as `price:override`.",
        ))
        .into()
}

/// What the person may grant alone. Absent: unlimited with price:override, nothing without.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiscountLimitBody {
    #[schema(value_type = i64, minimum = 0, maximum = 10000)]
    percent_bps: Bps,
    #[schema(value_type = i64, minimum = 0, maximum = 9007199254740991_i64)]
    amount_cents: Cents,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StaffView {
    subject: String,
    display_name: String,
    role: String,
    /// Grants beyond the role's.
    permissions: Vec<String>,
    /// Everything the person holds: the role's grants and the permissions.
    scopes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    discount_limit: Option<DiscountLimitBody>,
    /// When these grants were last written; elevation refuses managers whose grants are stale.
    grants_synced_at: String,
    created_at: String,
    updated_at: String,
}

impl From<StaffRecord> for StaffView {
    fn from(record: StaffRecord) -> Self {
        let words = |set: GrantSet| set.iter().map(|g| g.as_str().to_owned()).collect();
        StaffView {
            subject: record.subject.into_string(),
            display_name: record.member.display_name.clone(),
            role: record.member.role.as_str().to_owned(),
            permissions: words(record.member.permissions),
            scopes: words(record.member.grants()),
            discount_limit: record.member.discount_limit.map(|limit| DiscountLimitBody {
                percent_bps: limit.percent,
                amount_cents: limit.amount,
            }),
            grants_synced_at: format_utc(record.grants_synced_at),
            created_at: format_utc(record.created_at),
            updated_at: format_utc(record.updated_at),
        }
    }
}

/// `{subject}` of the staff routes.
struct StaffPath(Subject);

impl FromParams for StaffPath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("subject", Subject::parse).map(StaffPath)
    }
}

/// Create or replace a staff member.
///
/// Back-office provisioning of a person's role, PIN, extra permissions and discount limit. Each
/// write refreshes `grantsSyncedAt`. A person should confirm.
#[utoipa::path(put, path = "/v1/staff/{subject}", operation_id = "putStaffMember", tag = "provisioning",
    params(("subject" = Text, Path, description = "The person's subject, as in their access tokens")),
    request_body = StaffBody,
    responses((status = 200, description = "Replaced", body = StaffView),
              (status = 201, description = "Created", body = StaffView)))]
async fn put_staff(
    _caller: Authorized<ops::PutStaff>,
    State(state): State<AppState>,
    PathParams(StaffPath(subject)): PathParams<StaffPath>,
    Parsed(body): Parsed<StaffBody>,
) -> Result<Written<StaffView>, ApiError> {
    let (member, pin) = body.member();
    let written = staff::put_staff(state.app(), subject, member, pin).await?;
    Ok(Written::new(written.created, written.record.into()))
}

/// Read a staff member (never their PIN).
///
/// Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/staff/{subject}", operation_id = "getStaffMember", tag = "provisioning",
    params(("subject" = Text, Path)),
    responses((status = 200, description = "The staff member", body = StaffView),
              (status = 404, description = "No such staff member", body = crate::error::ErrorEnvelope)))]
async fn get_staff(
    _caller: Authorized<ops::GetStaff>,
    State(state): State<AppState>,
    PathParams(StaffPath(subject)): PathParams<StaffPath>,
) -> Result<Json<StaffView>, ApiError> {
    let record = staff::get_staff(state.app(), &subject)
        .await?
        .ok_or_else(|| ApiError::NotFound("Staff member not found.".into()))?;
    Ok(Json(record.into()))
}

/// The page of the staff list to read; the list has no filter.
struct StaffList(Paging<Subject>);

impl FromParams for StaffList {
    fn from_params(params: &Params) -> Option<Self> {
        PageQuery::read(params)?
            .paging(params, Scope::new("staff"))
            .map(StaffList)
    }
}

/// A page of the list, as the document names it.
type StaffPage = Page<StaffView>;

/// List the staff (never their PINs).
///
/// Every staff member by subject, a page at a time: follow `nextCursor` until it is null.
/// Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/staff", operation_id = "listStaffMembers", tag = "provisioning",
    params(PageQuery),
    responses((status = 200, description = "A page of staff members, by subject", body = StaffPage)))]
async fn list_staff(
    _caller: Authorized<ops::ListStaff>,
    State(state): State<AppState>,
    QueryParams(StaffList(paging)): QueryParams<StaffList>,
) -> Result<Json<StaffPage>, ApiError> {
    let records = staff::list_staff(state.app(), &paging.window()).await?;
    Ok(Json(paging.page(
        records,
        |record| record.subject.clone(),
        StaffView::from,
    )))
}
