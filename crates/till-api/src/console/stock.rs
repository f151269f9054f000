//! `GET /console/stock`: find an article by name or barcode (the catalog search of
//! `GET /v1/catalog/skus?q=`), then its level in each store (`getStock`) and its latest
//! movements in one of them (`listStockMovements`): the store asked for, else the first that
//! holds the article.

use super::forms::Query;
use super::href::Href;
use super::language::Language;
use super::layout::{self, Nav};
use super::refused::Refused;
use super::session::Visitor;
use super::today::stores;
use crate::error::ApiError;
use crate::extract::{FromParams, Params};
use crate::ops;
use crate::state::AppState;
use axum::extract::State;
use maud::{Markup, html};
use till_app::catalog::CatalogRecord;
use till_app::stock::Movement;
use till_app::storage::Window;
use till_core::barcode::Gtin;
use till_core::ids::{SkuId, StoreId};
use till_core::words::NameQuery;

/// Articles a search shows.
const FOUND_SHOWN: usize = 25;
/// Latest movements shown per store.
const MOVEMENTS_SHOWN: usize = 10;

/// What to look up: words or a barcode, and the article picked among those found.
pub struct StockQuery {
    q: Option<String>,
    search: Option<Search>,
    sku: Option<SkuId>,
    store: Option<StoreId>,
}

enum Search {
    Barcode(Gtin),
    Name(NameQuery),
}

impl FromParams for StockQuery {
    fn from_params(params: &Params) -> Option<Self> {
        let search = params.optional("q", |text| match Gtin::parse(text) {
            Ok(gtin) => Ok((text.to_owned(), Search::Barcode(gtin))),
            Err(_) => NameQuery::parse(text).map(|name| (text.to_owned(), Search::Name(name))),
        });
        let sku = params.optional("sku", SkuId::parse);
        let store = params.optional("store", StoreId::parse);
        let (search, sku, store) = (search?, sku?, store?);
        let (q, search) = search.map_or((None, None), |(q, search)| (Some(q), Some(search)));
        Some(StockQuery { q, search, sku, store })
    }
}

async fn find(state: &AppState, search: &Search) -> Result<Vec<CatalogRecord>, Refused> {
    let app = state.app();
    Ok(match search {
        Search::Barcode(gtin) => till_app::catalog::by_barcode(app, gtin).await?.into_iter().collect(),
        Search::Name(name) => {
            let window = Window {
                after: None,
                take: FOUND_SHOWN,
            };
            let found = till_app::catalog::search(app, name, &window).await?;
            found.into_iter().map(|(_, record)| record).collect()
        }
    })
}

/// Refused unless the visitor may search the catalog, read levels and movements, and list the
/// stores.
pub fn allowed(visitor: &Visitor) -> Result<(), Refused> {
    visitor.require::<ops::ListCatalogItems>()?;
    visitor.require::<ops::GetStock>()?;
    visitor.require::<ops::ListStockMovements>()?;
    visitor.require::<ops::ListStores>()
}

pub async fn page(
    visitor: Visitor,
    State(state): State<AppState>,
    Query(query): Query<StockQuery>,
) -> Result<Markup, Refused> {
    allowed(&visitor)?;
    let words = visitor.words();
    let language = visitor.language();
    let found = match &query.search {
        Some(search) => find(&state, search).await?,
        None => Vec::new(),
    };
    let article = match &query.sku {
        Some(sku) => Some(
            till_app::catalog::article(state.app(), sku)
                .await?
                .ok_or_else(crate::phrases::not_in_catalog)?,
        ),
        None => None,
    };
    let levels = match &article {
        Some(article) => Some(levels(&state, &article.item.sku_id).await?),
        None => None,
    };
    let shown = levels.as_deref().and_then(|levels| {
        let asked = query.store.as_ref();
        levels
            .iter()
            .find(|level| asked == Some(&level.store_id))
            .or_else(|| levels.iter().find(|level| asked.is_none() && level.stocked))
            .or_else(|| levels.first().filter(|_| asked.is_none()))
    });
    if levels.is_some() && query.store.is_some() && shown.is_none() {
        return Err(ApiError::NotFound("There is no store with this id.".into()).into());
    }
    let movements = match (&article, shown) {
        (Some(article), Some(level)) => {
            till_app::stock::latest_movements(state.app(), &level.store_id, &article.item.sku_id, MOVEMENTS_SHOWN)
                .await
                .map_err(ApiError::from)?
        }
        _ => Vec::new(),
    };
    let q = query.q.as_deref();
    let body = html! {
        h1 { (words.stock) }
        form.picker method="get" action="/console/stock" {
            span.field.wide {
                label for="q" { (words.article_query) }
                input #q name="q" value=[q] required;
            }
            button type="submit" { (words.search) }
        }
        @if query.search.is_some() {
            ul.found #found {
                @for record in &found {
                    li {
                        a href=(article_link(q, &record.item.sku_id)) { (record.item.name) }
                        " " span.note { (record.barcodes.join(", ")) }
                    }
                }
                @if found.is_empty() {
                    li { (words.no_article) }
                }
            }
        }
        @if let (Some(article), Some(levels)) = (&article, &levels) {
            section #article data-sku=(article.item.sku_id.as_str()) {
                h2 { (article.item.name) }
                p.note { code { (article.item.sku_id.as_str()) } " " (article.barcodes.join(", ")) }
                table #levels {
                    thead { tr { th { (words.store) } th.n { (words.on_hand) } th {} } }
                    tbody {
                        @for level in levels {
                            tr.level data-store=(level.store_id.as_str()) data-on-hand=(level.on_hand) {
                                td data-label=(words.store) { (level.store_name) " " span.note { "(" (level.store_id.as_str()) ")" } }
                                td.n data-label=(words.on_hand) { (level.on_hand) }
                                td.actions { a href=(article_link(q, &article.item.sku_id).query("store", level.store_id.as_str())) { (words.latest_movements) } }
                            }
                        }
                    }
                }
                @if let Some(level) = shown {
                    (latest(level, &movements, language))
                }
            }
        }
    };
    Ok(layout::page(words.nav_stock, Nav::Stock, &visitor, body))
}

fn article_link(q: Option<&str>, sku: &SkuId) -> Href {
    Href::to("/console/stock").query_some("q", q).query("sku", sku.as_str())
}

/// An article in one store.
struct Level {
    store_id: StoreId,
    store_name: String,
    zone: jiff::tz::TimeZone,
    on_hand: i64,
    /// Whether a level was ever recorded for it there.
    stocked: bool,
}

async fn levels(state: &AppState, sku: &SkuId) -> Result<Vec<Level>, Refused> {
    let mut levels = Vec::new();
    for store in stores(state).await? {
        let level = till_app::stock::level(state.app(), &store.store_id, sku).await?;
        levels.push(Level {
            zone: store.profile.timezone.zone(),
            store_name: store.profile.name,
            store_id: store.store_id,
            on_hand: level.as_ref().map_or(0, |level| level.on_hand),
            stocked: level.is_some(),
        });
    }
    Ok(levels)
}

fn latest(level: &Level, movements: &[Movement], language: Language) -> Markup {
    let words = language.words();
    html! {
        section #movements data-store=(level.store_id.as_str()) {
            h3 { ((words.latest_movements_in)(&level.store_name)) }
            @if movements.is_empty() {
                p.note { (words.no_movement) }
            } @else {
                table.movements {
                    thead { tr { th { (words.when) } th { (words.reason) } th.n { (words.units) } th { (words.reference) } } }
                    tbody {
                        @for movement in movements.iter().rev() {
                            tr data-movement=(movement.id) data-reason=(movement.reason.as_str()) {
                                td data-label=(words.when) { (layout::local_time(movement.at, &level.zone, language)) }
                                td data-label=(words.reason) { (language.stock_reason(movement.reason)) }
                                td.n data-label=(words.units) { (format!("{:+}", movement.delta)) }
                                td data-label=(words.reference) { (movement.reference.as_deref().unwrap_or(words.none)) }
                            }
                        }
                    }
                }
            }
        }
    }
}
