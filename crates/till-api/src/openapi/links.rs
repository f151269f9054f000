//! The links of the document: from an answer to the calls it makes possible, and the pass that
//! adds them to each operation's responses.

use super::operations_mut;
use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::{OpenApi, RefOr};

/// From an answer to the calls it makes possible, so that a client (or a stateful fuzzer)
/// can follow a resource from its creation: `(operation, statuses, link, target, parameters,
/// body)`. Parameter values and body fields are OpenAPI runtime expressions.
type LinkSpec = (
    &'static str,
    &'static [&'static str],
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    Option<fn() -> serde_json::Value>,
);

const LINKS: &[LinkSpec] = &[
    (
        "putStore",
        &["200", "201"],
        "getStore",
        "getStore",
        &[("storeId", "$request.path.storeId")],
        None,
    ),
    (
        "putCatalogItem",
        &["200", "201"],
        "getCatalogItem",
        "getCatalogItem",
        &[("skuId", "$request.path.skuId")],
        None,
    ),
    (
        "putStock",
        &["200"],
        "getStock",
        "getStock",
        &[("storeId", "$request.path.storeId"), ("skuId", "$request.path.skuId")],
        None,
    ),
    (
        "putStaffMember",
        &["200", "201"],
        "getStaffMember",
        "getStaffMember",
        &[("subject", "$request.path.subject")],
        None,
    ),
    (
        "putStaffMember",
        &["201"],
        "openRegisterSession",
        "openRegisterSession",
        &[],
        Some(|| serde_json::json!({"cashierSubject": "$request.path.subject", "pin": "$request.body#/pin"})),
    ),
    (
        "putCoupon",
        &["200", "201"],
        "getCoupon",
        "getCoupon",
        &[("code", "$request.path.code")],
        None,
    ),
    (
        "upsertPromotion",
        &["200", "201"],
        "getPromotionRule",
        "getPromotionRule",
        &[("id", "$response.body#/id")],
        None,
    ),
    (
        "upsertPromotion",
        &["200", "201"],
        "replacePromotionRule",
        "replacePromotionRule",
        &[("id", "$response.body#/id")],
        None,
    ),
    (
        "upsertPromotion",
        &["200", "201"],
        "deactivatePromotion",
        "deactivatePromotion",
        &[("id", "$response.body#/id")],
        None,
    ),
    (
        "replacePromotionRule",
        &["200"],
        "getPromotionRule",
        "getPromotionRule",
        &[("id", "$request.path.id")],
        None,
    ),
    (
        "openRegisterSession",
        &["201"],
        "getRegisterSession",
        "getRegisterSession",
        &[("sessionId", "$response.body#/sessionId")],
        None,
    ),
    (
        "openRegisterSession",
        &["201"],
        "closeRegisterSession",
        "closeRegisterSession",
        &[("sessionId", "$response.body#/sessionId")],
        None,
    ),
    (
        "openRegisterSession",
        &["201"],
        "finalizeSale",
        "finalizeSale",
        &[],
        Some(|| {
            serde_json::json!({
                "sessionId": "$response.body#/sessionId",
                "storeId": "$response.body#/storeId",
                "registerId": "$response.body#/registerId"
            })
        }),
    ),
    (
        "finalizeSale",
        &["201"],
        "getSale",
        "getSale",
        &[("transactionId", "$response.body#/transaction/id")],
        None,
    ),
    (
        "finalizeSale",
        &["201"],
        "printReceipt",
        "printReceipt",
        &[("transactionId", "$response.body#/transaction/id")],
        None,
    ),
    (
        "finalizeSale",
        &["201"],
        "getReceipt",
        "getReceipt",
        &[("transactionId", "$response.body#/transaction/id")],
        None,
    ),
    (
        "finalizeSale",
        &["201"],
        "getSaleLines",
        "getSaleLines",
        &[("transactionId", "$response.body#/transaction/id")],
        None,
    ),
    (
        "finalizeSale",
        &["201"],
        "getSaleReturns",
        "getSaleReturns",
        &[("transactionId", "$response.body#/transaction/id")],
        None,
    ),
    (
        "finalizeSale",
        &["201"],
        "verifyRegisterJournal",
        "verifyRegisterJournal",
        &[("registerId", "$response.body#/registerId")],
        None,
    ),
    (
        "createReturn",
        &["201"],
        "getSaleReturns",
        "getSaleReturns",
        &[("transactionId", "$response.body#/original/transactionId")],
        None,
    ),
    (
        "closeFiscalPeriod",
        &["201"],
        "listFiscalClosures",
        "listFiscalClosures",
        &[("registerId", "$request.path.registerId")],
        None,
    ),
    (
        "makeFiscalArchive",
        &["201"],
        "getFiscalArchive",
        "getFiscalArchive",
        &[("archiveId", "$response.header.x-till-archive-id")],
        None,
    ),
];

pub(super) fn add_links(api: &mut OpenApi) {
    for operation in operations_mut(api) {
        let id = operation.operation_id.clone().unwrap_or_default();
        for (_, statuses, name, target, parameters, body) in LINKS.iter().filter(|link| link.0 == id) {
            for status in *statuses {
                let Some(RefOr::T(response)) = operation.responses.responses.get_mut(*status) else {
                    panic!("{id} has no {status} response to link from");
                };
                let mut link = LinkBuilder::new().operation_id(*target);
                for (parameter, expression) in *parameters {
                    link = link.parameter(*parameter, *expression);
                }
                link = link.request_body(body.map(|body| body()));
                response.links.insert((*name).to_owned(), RefOr::T(link.build()));
            }
        }
    }
}
