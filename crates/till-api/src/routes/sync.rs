//! `GET /v1/sync/snapshot?storeId=`: everything a till needs to sell offline in its store, in
//! one consistent read, streamed as one JSON document per line (docs/sync.md).

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, QueryParams};
use crate::openapi::Text;
use crate::ops;
use crate::routes::catalog::CatalogItemView;
use crate::routes::coupons::CouponView;
use crate::routes::promotions::PromotionRuleView;
use crate::routes::store_prices::ScheduledStorePriceView;
use crate::routes::stores::StoreView;
use crate::state::AppState;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Serialize;
use till_app::sync::{self, Snapshot, SnapshotArticle, SnapshotPart, Snapshotted};
use till_core::ids::StoreId;
use till_core::instant::format_utc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(snapshot))
}

const NDJSON: &str = "application/x-ndjson";

/// One line of a snapshot, by `type`: the head first, then the articles, the promotions, the
/// coupons and the staff, then the end. A snapshot without its end line was cut short: the
/// till must not use it. Each line's shape carries its own `type`, so that a generated client
/// narrows a line by it.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum SnapshotLine {
    Head(SnapshotHeadLine),
    Article(SnapshotArticleLine),
    Promotion(SnapshotPromotionLine),
    Coupon(SnapshotCouponLine),
    Staff(SnapshotStaffLine),
    End(SnapshotEndLine),
}

/// The `type` of each kind of line, one value each.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
enum HeadType {
    Head,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
enum ArticleType {
    Article,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
enum PromotionType {
    Promotion,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
enum CouponType {
    Coupon,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
enum StaffType {
    Staff,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
enum EndType {
    End,
}

/// Where to follow the feed from, and the store.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotHeadLine {
    #[serde(rename = "type")]
    #[schema(inline)]
    kind: HeadType,
    /// The feed cursor the snapshot is consistent with: read `GET /v1/events?after=` from it.
    /// Every change up to it is in the snapshot; a change after it may be too, and its event
    /// applies again harmlessly.
    cursor: String,
    /// The instant the prices in force were read at.
    #[schema(value_type = crate::openapi::UtcInstant)]
    taken_at: String,
    store: StoreView,
}

/// An article as `GET /v1/catalog/skus/{skuId}` reads it, with the store's own prices of it.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotArticleLine {
    #[serde(rename = "type")]
    #[schema(inline)]
    kind: ArticleType,
    article: CatalogItemView,
    store_prices: OwnPricesView,
}

/// The store's own prices of an article. At an instant, the store's own price in force then
/// (the latest of `priceCents` and `scheduledPrices` started by then) replaces the catalog's;
/// none: the catalog's. The VAT rate is always the catalog's.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OwnPricesView {
    /// In force at `takenAt`, in cents; null when the store sells at the catalog's then.
    price_cents: Option<i64>,
    /// Later ones, soonest first.
    scheduled_prices: Vec<ScheduledStorePriceView>,
}

/// A promotion rule that may run in the store from `takenAt` on (active, not over, for this
/// store or every store), as `GET /v1/promotions` lists it.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotPromotionLine {
    #[serde(rename = "type")]
    #[schema(inline)]
    kind: PromotionType,
    promotion: PromotionRuleView,
    /// Its version, as the rule's ETag gives it.
    version: i64,
}

/// A coupon that may be presented from `takenAt` on (active, not over), as
/// `GET /v1/coupons/{code}` reads it.
#[derive(Serialize, utoipa::ToSchema)]
pub struct SnapshotCouponLine {
    #[serde(rename = "type")]
    #[schema(inline)]
    kind: CouponType,
    coupon: CouponView,
}

/// Someone who may sign in at a till: a name to show and a role, never a PIN.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotStaffLine {
    #[serde(rename = "type")]
    #[schema(inline)]
    kind: StaffType,
    subject: String,
    display_name: String,
    role: String,
}

/// The last line: the snapshot is whole, with how many lines of each kind it had.
#[derive(Serialize, utoipa::ToSchema)]
pub struct SnapshotEndLine {
    #[serde(rename = "type")]
    #[schema(inline)]
    kind: EndType,
    articles: u64,
    promotions: u64,
    coupons: u64,
    staff: u64,
}

struct SnapshotQuery {
    store_id: StoreId,
}

impl FromParams for SnapshotQuery {
    fn from_params(params: &Params) -> Option<Self> {
        let store_id = params.required("storeId", StoreId::parse)?;
        Some(SnapshotQuery { store_id })
    }
}

/// Take a store's snapshot, to sell offline.
///
/// Everything a till of the store prices and sells with, in one consistent read: the store; its
/// articles with the prices in force and scheduled, the store's own over the catalog's, and
/// their barcodes; the promotion rules and coupons that may apply there; the staff's names and
/// roles. Streamed as NDJSON, one line per item, so a catalog of any size reads in flat memory;
/// the last line is `{"type":"end",…}`. Then follow `GET /v1/events?after=` from the head's
/// `cursor`. A large download: not for an automated agent.
#[utoipa::path(get, path = "/v1/sync/snapshot", operation_id = "getSyncSnapshot", tag = "catalog",
    params(("storeId" = Text, Query, description = "The store")),
    responses((status = 200, description = "The snapshot, one JSON document per line", content_type = "application/x-ndjson", body = SnapshotLine),
              (status = 404, description = "No such store", body = crate::error::ErrorEnvelope)))]
async fn snapshot(
    _caller: Authorized<ops::GetSyncSnapshot>,
    State(state): State<AppState>,
    QueryParams(query): QueryParams<SnapshotQuery>,
) -> Result<Response, ApiError> {
    let Snapshotted::Taken(snapshot) = sync::snapshot(state.app(), query.store_id).await? else {
        return Err(ApiError::NotFound("Store not found.".into()));
    };
    let head = SnapshotLine::Head(SnapshotHeadLine {
        kind: HeadType::Head,
        cursor: snapshot.head.cursor.to_string(),
        taken_at: format_utc(snapshot.head.taken_at),
        store: snapshot.head.store.clone().into(),
    });
    let first = Bytes::from(Lines::default().of(head));
    let body = futures::stream::once(async move { Ok::<_, std::io::Error>(first) }).chain(futures::stream::unfold(
        Some((*snapshot, Counts::default())),
        next_lines,
    ));
    Ok((
        [(CONTENT_TYPE, NDJSON), (CACHE_CONTROL, "no-store")],
        Body::from_stream(body),
    )
        .into_response())
}

#[derive(Default)]
struct Counts {
    articles: u64,
    promotions: u64,
    coupons: u64,
    staff: u64,
}

/// The lines of the next part, or the end line once the read is whole; an error (which cuts
/// the response short, without its end line) when it failed.
async fn next_lines(
    state: Option<(Snapshot, Counts)>,
) -> Option<(Result<Bytes, std::io::Error>, Option<(Snapshot, Counts)>)> {
    let (mut snapshot, mut counts) = state?;
    let taken_at = snapshot.taken_at();
    let mut lines = Lines::default();
    match snapshot.next().await {
        Some(SnapshotPart::Head(_)) => {}
        Some(SnapshotPart::Articles(articles)) => {
            counts.articles += articles.len() as u64;
            for article in articles {
                lines = lines.of(SnapshotLine::Article(article_line(article, taken_at)));
            }
        }
        Some(SnapshotPart::Promotions(rules)) => {
            counts.promotions += rules.len() as u64;
            for stored in rules {
                lines = lines.of(SnapshotLine::Promotion(SnapshotPromotionLine {
                    kind: PromotionType::Promotion,
                    promotion: PromotionRuleView::from(&stored.rule),
                    version: stored.version,
                }));
            }
        }
        Some(SnapshotPart::Coupons(coupons)) => {
            counts.coupons += coupons.len() as u64;
            for coupon in coupons {
                lines = lines.of(SnapshotLine::Coupon(SnapshotCouponLine {
                    kind: CouponType::Coupon,
                    coupon: coupon.into(),
                }));
            }
        }
        Some(SnapshotPart::Staff(staff)) => {
            counts.staff += staff.len() as u64;
            for member in staff {
                lines = lines.of(SnapshotLine::Staff(SnapshotStaffLine {
                    kind: StaffType::Staff,
                    subject: member.subject.into_string(),
                    display_name: member.member.display_name,
                    role: member.member.role.as_str().to_owned(),
                }));
            }
        }
        None => {
            return match snapshot.whole().await {
                Ok(()) => {
                    let end = SnapshotLine::End(SnapshotEndLine {
                        kind: EndType::End,
                        articles: counts.articles,
                        promotions: counts.promotions,
                        coupons: counts.coupons,
                        staff: counts.staff,
                    });
                    Some((Ok(Lines::default().of(end).into()), None))
                }
                Err(error) => {
                    // Too late for an error envelope: the response ends without its end line.
                    let error = ApiError::from(error);
                    tracing::error!(detail = ?error, "a snapshot's read failed");
                    Some((Err(std::io::Error::other("the snapshot's read failed")), None))
                }
            };
        }
    }
    Some((Ok(lines.into()), Some((snapshot, counts))))
}

fn article_line(article: SnapshotArticle, taken_at: jiff::Timestamp) -> SnapshotArticleLine {
    let own = &article.own;
    SnapshotArticleLine {
        kind: ArticleType::Article,
        store_prices: OwnPricesView {
            price_cents: own.price_at(taken_at).map(|price| price.get()),
            scheduled_prices: own
                .after(taken_at)
                .iter()
                .filter_map(ScheduledStorePriceView::of)
                .collect(),
        },
        article: article.record.into(),
    }
}

/// Lines of NDJSON being written.
#[derive(Default)]
struct Lines(Vec<u8>);

impl Lines {
    fn of(mut self, line: SnapshotLine) -> Lines {
        // A line is made of this module's own shapes, which always serialize.
        if serde_json::to_writer(&mut self.0, &line).is_ok() {
            self.0.push(b'\n');
        }
        self
    }
}

impl From<Lines> for Bytes {
    fn from(lines: Lines) -> Bytes {
        Bytes::from(lines.0)
    }
}
