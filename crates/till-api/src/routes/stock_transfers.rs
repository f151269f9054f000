//! Transfers of goods between two stores (docs/stock.md): `POST /v1/stock-transfers`
//! sends, `POST /v1/stock-transfers/{transferId}/receive` receives with the differences
//! recorded, `GET /v1/stock-transfers/{transferId}` reads.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, Parsed, PathParams};
use crate::fields::{FromBody, Obj};
use crate::openapi::{SkuId as SkuIdText, Text};
use crate::ops;
use crate::routes::stock::{stock_lines, units};
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use till_app::stock::{Done, TransferAnswer};
use till_core::ids::{SkuId, StoreId, TransferId};
use till_core::money::MAX_SAFE_INTEGER;
use till_core::stock::{ReceivedLine, SentLine, Units};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(send_transfer))
        .routes(routes!(get_transfer))
        .routes(routes!(receive_transfer))
}

/// Body of `POST /v1/stock-transfers`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct TransferBody {
    /// Chosen by the back office; the same transfer sent again is answered again, not sent
    /// twice.
    #[schema(value_type = Text)]
    transfer_id: TransferId,
    #[schema(value_type = Text)]
    from_store_id: StoreId,
    /// Another store than `fromStoreId`.
    #[schema(value_type = Text)]
    to_store_id: StoreId,
    /// Each article once.
    #[schema(min_items = 1, max_items = 1000)]
    lines: Vec<SentLineBody>,
}

#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct SentLineBody {
    #[schema(value_type = SkuIdText)]
    sku_id: SkuId,
    /// Units sent.
    #[schema(value_type = i64, minimum = 1, maximum = 9007199254740991_i64)]
    quantity: Units,
}

/// Body of `POST /v1/stock-transfers/{transferId}/receive`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct ReceiveBody {
    /// Every article of the transfer once, with what arrived (0 when none did), and no other.
    #[schema(min_items = 1, max_items = 1000)]
    lines: Vec<ReceivedLineBody>,
}

#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct ReceivedLineBody {
    #[schema(value_type = SkuIdText)]
    sku_id: SkuId,
    /// Units that arrived.
    #[schema(value_type = i64, minimum = 0, maximum = 9007199254740991_i64)]
    received_quantity: Units,
}

impl FromBody for TransferBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let transfer_id = root.required("transferId", |f| f.parse_text(TransferId::parse));
        let from = root.required("fromStoreId", |f| f.parse_text(StoreId::parse));
        let to = root.required("toStoreId", |f| f.parse_text(StoreId::parse));
        let lines = stock_lines(root, "transfer", |obj, sku_id| {
            let quantity = obj.required("quantity", |f| f.integer(1, MAX_SAFE_INTEGER).and_then(Units::new));
            Some(SentLineBody {
                sku_id: sku_id?,
                quantity: quantity?,
            })
        });
        Some(TransferBody {
            transfer_id: transfer_id?,
            from_store_id: from?,
            to_store_id: to?,
            lines: lines?,
        })
    }
}

impl FromBody for ReceiveBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let lines = stock_lines(root, "receipt", |obj, sku_id| {
            let received = obj.required("receivedQuantity", units);
            Some(ReceivedLineBody {
                sku_id: sku_id?,
                received_quantity: received?,
            })
        });
        Some(ReceiveBody { lines: lines? })
    }
}

impl From<SentLineBody> for SentLine {
    fn from(line: SentLineBody) -> SentLine {
        SentLine {
            sku_id: line.sku_id,
            quantity: line.quantity,
        }
    }
}

impl From<ReceivedLineBody> for ReceivedLine {
    fn from(line: ReceivedLineBody) -> ReceivedLine {
        ReceivedLine {
            sku_id: line.sku_id,
            received_quantity: line.received_quantity,
        }
    }
}

/// `{transferId}`.
struct TransferPath(TransferId);

impl FromParams for TransferPath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("transferId", TransferId::parse).map(TransferPath)
    }
}

/// Send goods from one store to another.
///
/// Takes them out of the sending store's stock now (reason `transfer_out` in its ledger); the
/// receiving store's stock moves when they are received. Sent again with the same
/// `transferId` and content, the transfer is answered again (200) and sent once. A person
/// should confirm.
#[utoipa::path(post, path = "/v1/stock-transfers", operation_id = "sendStockTransfer", tag = "provisioning",
    request_body = TransferBody,
    responses((status = 201, description = "Sent", body = TransferAnswer),
              (status = 200, description = "Sent earlier with the same content", body = TransferAnswer),
              (status = 404, description = "Unknown store", body = crate::error::ErrorEnvelope),
              (status = 409, description = "The transferId was used for another transfer", body = crate::error::ErrorEnvelope),
              (status = 422, description = "An article not in the catalog", body = crate::error::ErrorEnvelope)))]
async fn send_transfer(
    _caller: Authorized<ops::SendStockTransfer>,
    State(state): State<AppState>,
    Parsed(body): Parsed<TransferBody>,
) -> Result<(StatusCode, Json<TransferAnswer>), ApiError> {
    let lines = body.lines.into_iter().map(SentLine::from).collect();
    let Done { record, replayed } = till_app::stock::send(
        state.app(),
        body.transfer_id,
        body.from_store_id,
        body.to_store_id,
        lines,
    )
    .await?;
    let status = if replayed { StatusCode::OK } else { StatusCode::CREATED };
    Ok((status, Json(TransferAnswer::from(&record))))
}

/// Read a transfer: what was sent and, once received, what arrived.
///
/// Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/stock-transfers/{transferId}", operation_id = "getStockTransfer", tag = "provisioning",
    params(("transferId" = Text, Path)),
    responses((status = 200, description = "The transfer", body = TransferAnswer),
              (status = 404, description = "No such transfer", body = crate::error::ErrorEnvelope)))]
async fn get_transfer(
    _caller: Authorized<ops::GetStockTransfer>,
    State(state): State<AppState>,
    PathParams(TransferPath(id)): PathParams<TransferPath>,
) -> Result<Json<TransferAnswer>, ApiError> {
    let record = till_app::stock::transfer(state.app(), &id)
        .await?
        .ok_or_else(|| ApiError::NotFound("Stock transfer not found.".into()))?;
    Ok(Json(TransferAnswer::from(&record)))
}

/// Receive a transfer: put what arrived into the receiving store.
///
/// States every article of the transfer once with the units that arrived; each is put into the
/// receiving store's stock (reason `transfer_in`) and its difference from what was sent is
/// recorded on the transfer. Received again with the same lines, the transfer is answered again
/// (200) and received once. A person should confirm.
#[utoipa::path(post, path = "/v1/stock-transfers/{transferId}/receive", operation_id = "receiveStockTransfer", tag = "provisioning",
    params(("transferId" = Text, Path)),
    request_body = ReceiveBody,
    responses((status = 201, description = "Received", body = TransferAnswer),
              (status = 200, description = "Received earlier with the same lines", body = TransferAnswer),
              (status = 404, description = "No such transfer", body = crate::error::ErrorEnvelope),
              (status = 409, description = "Received earlier with other quantities", body = crate::error::ErrorEnvelope),
              (status = 422, description = "The lines are not exactly the transfer's articles", body = crate::error::ErrorEnvelope)))]
async fn receive_transfer(
    _caller: Authorized<ops::ReceiveStockTransfer>,
    State(state): State<AppState>,
    PathParams(TransferPath(id)): PathParams<TransferPath>,
    Parsed(ReceiveBody { lines }): Parsed<ReceiveBody>,
) -> Result<(StatusCode, Json<TransferAnswer>), ApiError> {
    let lines = lines.into_iter().map(ReceivedLine::from).collect();
    let Done { record, replayed } = till_app::stock::receive(state.app(), id, lines).await?;
    let status = if replayed { StatusCode::OK } else { StatusCode::CREATED };
    Ok((status, Json(TransferAnswer::from(&record))))
}
