//! The tenders of a sale or a return: their shape as the document states it, their parser, and
//! what they mean as the domain's [`TenderSet`].

use super::request::choices;
use crate::fields::Field;
use crate::openapi::{Text, words};
use till_core::ids::TenderReference;
use till_core::money::{Cents, MAX_SAFE_INTEGER};
use till_core::sale::{Tender, TenderMethod, TenderSet};

#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TenderSetBody {
    #[schema(value_type = i64, minimum = 0, maximum = 9007199254740991_i64)]
    amount_due: Cents,
    tenders: Vec<TenderBody>,
    #[schema(minimum = 0, maximum = 9007199254740991_i64)]
    sequence: i64,
}

#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TenderBody {
    #[schema(value_type = Text)]
    id: String,
    #[schema(schema_with = method_schema)]
    method: TenderMethod,
    /// Amount applied to the sale.
    #[schema(value_type = i64, minimum = 0, maximum = 9007199254740991_i64)]
    applied: Cents,
    /// Amount handed over.
    #[schema(value_type = i64, minimum = 0, maximum = 9007199254740991_i64)]
    presented: Cents,
    #[schema(value_type = i64, minimum = 0, maximum = 9007199254740991_i64)]
    change: Cents,
    #[schema(value_type = i64, minimum = 0, maximum = 9007199254740991_i64)]
    forfeited: Cents,
    /// The instrument the tender draws on: a gift card's code for `gift_card` (4 to 64
    /// letters, digits, `-` and `_`, else 400), the code printed on the return's receipt for
    /// `credit_note` (its fiscal number redeems nothing), the voucher of a method another system
    /// keeps. Codes are compared without case. Optional.
    #[schema(value_type = Option<Text>)]
    reference: Option<TenderReference>,
}

fn method_schema() -> utoipa::openapi::schema::Schema {
    words(
        TenderMethod::ALL.iter().map(|method| method.as_str()),
        "How the tender pays.",
    )
}

pub(crate) fn tender_set(field: Field<'_>) -> Option<TenderSetBody> {
    let set = field.object()?;
    let amount_due = set.required("amountDue", |f| f.cents());
    let tenders = set.required("tenders", |f| f.array(tender));
    let sequence = set.required("sequence", |f| f.integer(0, MAX_SAFE_INTEGER));
    Some(TenderSetBody {
        amount_due: amount_due?,
        tenders: tenders?,
        sequence: sequence?,
    })
}

fn tender(field: Field<'_>) -> Option<TenderBody> {
    let methods = choices(&TenderMethod::ALL, TenderMethod::as_str);
    let tender = field.object()?;
    let id = tender.required("id", |f| f.text());
    let method = tender.required("method", |f| f.one_of(&methods));
    let applied = tender.required("applied", |f| f.cents());
    let presented = tender.required("presented", |f| f.cents());
    let change = tender.required("change", |f| f.cents());
    let forfeited = tender.required("forfeited", |f| f.cents());
    let reference = tender.optional("reference", |f| f.parse_text(TenderReference::parse));
    Some(TenderBody {
        id: id?,
        method: method?,
        applied: applied?,
        presented: presented?,
        change: change?,
        forfeited: forfeited?,
        reference: reference?,
    })
}

impl From<TenderSetBody> for TenderSet {
    fn from(body: TenderSetBody) -> TenderSet {
        let tenders = body.tenders.into_iter().map(|tender| Tender {
            id: tender.id,
            method: tender.method,
            applied: tender.applied,
            presented: tender.presented,
            change: tender.change,
            forfeited: tender.forfeited,
            reference: tender.reference,
        });
        TenderSet {
            amount_due: body.amount_due,
            tenders: tenders.collect(),
            sequence: body.sequence,
        }
    }
}
