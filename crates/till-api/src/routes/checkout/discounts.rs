//! The discounts a till declares on a sale: their three shapes as the document states them,
//! their parser (a line discount must name a line of the cart), and what they mean as the
//! domain's [`DeclaredDiscount`].

use super::request::choices;
use crate::fields::{Field, Obj};
use crate::openapi::{Absent, Text, absent, words};
use std::collections::HashSet;
use till_core::money::{Bps, Cents};
use till_core::sale::{DeclaredDiscount, DeclaredKind, DiscountReason};

const ONLY_LINE: &str = "is only for line discounts";
const ONLY_TICKET_AMOUNT: &str = "is only for ticket amount discounts";

/// A discount the till declares: a percent off one line, a percent off the ticket, or an
/// amount off the ticket; its `scope` and `basis` say which.
#[derive(utoipa::ToSchema)]
#[serde(untagged)]
pub enum DeclaredDiscountBody {
    LinePercent(LinePercentDiscount),
    TicketPercent(TicketPercentDiscount),
    TicketAmount(TicketAmountDiscount),
}

// The `scope` and `basis` of each shape are the variant it was read into; the properties of
// the other shapes are stated absent.

/// `percentBps` off one cart line, named by `lineId`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LinePercentDiscount {
    #[schema(value_type = Text)]
    id: String,
    #[schema(schema_with = reason_schema)]
    reason: DiscountReason,
    #[schema(inline)]
    scope: LineScope,
    #[schema(inline)]
    basis: PercentBasis,
    /// The `id` of a line of this cart.
    #[schema(value_type = Text)]
    line_id: String,
    #[schema(value_type = i64, minimum = 1, maximum = 10000)]
    percent_bps: Bps,
    #[schema(schema_with = absent, required = false)]
    amount_cents: Absent,
}

/// `percentBps` off the whole ticket.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TicketPercentDiscount {
    #[schema(value_type = Text)]
    id: String,
    #[schema(schema_with = reason_schema)]
    reason: DiscountReason,
    #[schema(inline)]
    scope: TicketScope,
    #[schema(inline)]
    basis: PercentBasis,
    #[schema(value_type = i64, minimum = 1, maximum = 10000)]
    percent_bps: Bps,
    #[schema(schema_with = absent, required = false)]
    line_id: Absent,
    #[schema(schema_with = absent, required = false)]
    amount_cents: Absent,
}

/// `amountCents` off the whole ticket, capped at its total.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TicketAmountDiscount {
    #[schema(value_type = Text)]
    id: String,
    #[schema(schema_with = reason_schema)]
    reason: DiscountReason,
    #[schema(inline)]
    scope: TicketScope,
    #[schema(inline)]
    basis: AmountBasis,
    #[schema(value_type = i64, minimum = 1, maximum = 9007199254740991_i64)]
    amount_cents: Cents,
    #[schema(schema_with = absent, required = false)]
    line_id: Absent,
    #[schema(schema_with = absent, required = false)]
    percent_bps: Absent,
}

fn reason_schema() -> utoipa::openapi::schema::Schema {
    words(
        DiscountReason::ALL.iter().map(|reason| reason.as_str()),
        "Why the discount is granted.",
    )
}

#[derive(Clone, Copy, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum LineScope {
    Line,
}

#[derive(Clone, Copy, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TicketScope {
    Ticket,
}

#[derive(Clone, Copy, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PercentBasis {
    Percent,
}

#[derive(Clone, Copy, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AmountBasis {
    Amount,
}

pub(super) fn declared(field: Field<'_>, line_ids: &HashSet<String>) -> Option<DeclaredDiscountBody> {
    let reasons = choices(&DiscountReason::ALL, DiscountReason::as_str);
    let discount = field.object()?;
    let id = discount.required("id", |f| f.text());
    let reason = discount.required("reason", |f| f.one_of(&reasons));
    let scope = discount.required("scope", |f| {
        f.one_of(&[("line", Scope::Line), ("ticket", Scope::Ticket)])
    });
    let basis = discount.required("basis", |f| {
        f.one_of(&[("percent", Basis::Percent), ("amount", Basis::Amount)])
    });
    let (scope, basis) = (scope?, basis?);
    Some(match (scope, basis) {
        (Scope::Line, Basis::Percent) => {
            reject(&discount, "amountCents", ONLY_TICKET_AMOUNT);
            let line_id = discount.required("lineId", |f| {
                let text = f.text()?;
                if line_ids.contains(&text) {
                    Some(text)
                } else {
                    f.fail("does not match the id of any cart line")
                }
            });
            let percent = discount.required("percentBps", |f| f.bps(1));
            DeclaredDiscountBody::LinePercent(LinePercentDiscount {
                id: id?,
                reason: reason?,
                scope: LineScope::Line,
                basis: PercentBasis::Percent,
                line_id: line_id?,
                percent_bps: percent?,
                amount_cents: Absent,
            })
        }
        (Scope::Line, Basis::Amount) => {
            return discount.fail(
                "basis",
                "must be percent for a line discount (line amount discounts do not exist)",
            );
        }
        (Scope::Ticket, Basis::Percent) => {
            reject(&discount, "lineId", ONLY_LINE);
            reject(&discount, "amountCents", ONLY_TICKET_AMOUNT);
            let percent = discount.required("percentBps", |f| f.bps(1))?;
            DeclaredDiscountBody::TicketPercent(TicketPercentDiscount {
                id: id?,
                reason: reason?,
                scope: TicketScope::Ticket,
                basis: PercentBasis::Percent,
                percent_bps: percent,
                line_id: Absent,
                amount_cents: Absent,
            })
        }
        (Scope::Ticket, Basis::Amount) => {
            reject(&discount, "lineId", ONLY_LINE);
            reject(&discount, "percentBps", "is only for percent discounts");
            let amount = discount.required("amountCents", |f| f.positive_cents())?;
            DeclaredDiscountBody::TicketAmount(TicketAmountDiscount {
                id: id?,
                reason: reason?,
                scope: TicketScope::Ticket,
                basis: AmountBasis::Amount,
                amount_cents: amount,
                line_id: Absent,
                percent_bps: Absent,
            })
        }
    })
}

#[derive(Clone, Copy)]
enum Scope {
    Line,
    Ticket,
}

#[derive(Clone, Copy)]
enum Basis {
    Percent,
    Amount,
}

/// A property that does not belong to this shape.
fn reject(obj: &Obj<'_>, key: &str, message: &str) {
    if obj.has(key) {
        obj.fail::<()>(key, message);
    }
}

impl From<DeclaredDiscountBody> for DeclaredDiscount {
    fn from(body: DeclaredDiscountBody) -> DeclaredDiscount {
        let (id, reason, kind) = match body {
            DeclaredDiscountBody::LinePercent(LinePercentDiscount {
                id,
                reason,
                scope: LineScope::Line,
                basis: PercentBasis::Percent,
                line_id,
                percent_bps,
                amount_cents: Absent,
            }) => (
                id,
                reason,
                DeclaredKind::LinePercent {
                    line_id,
                    percent: percent_bps,
                },
            ),
            DeclaredDiscountBody::TicketPercent(TicketPercentDiscount {
                id,
                reason,
                scope: TicketScope::Ticket,
                basis: PercentBasis::Percent,
                percent_bps,
                line_id: Absent,
                amount_cents: Absent,
            }) => (id, reason, DeclaredKind::TicketPercent { percent: percent_bps }),
            DeclaredDiscountBody::TicketAmount(TicketAmountDiscount {
                id,
                reason,
                scope: TicketScope::Ticket,
                basis: AmountBasis::Amount,
                amount_cents,
                line_id: Absent,
                percent_bps: Absent,
            }) => (id, reason, DeclaredKind::TicketAmount { amount: amount_cents }),
        };
        DeclaredDiscount { id, reason, kind }
    }
}
