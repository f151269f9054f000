//! Every sentence a refused request is answered with, written once, with its status, from the
//! typed refusal of a use case or of storage. Clients show these to the person at the till.

use crate::error::{ApiError, capitalize};
use axum::http::StatusCode;
use jiff::SignedDuration;
use till_app::invoices::InvoiceProblem;
use till_app::payments::PaymentRefusal;
use till_app::refusal::{CardLineProblem, CouponUnusable, PinHolder, PriceGap, StockRefusal, Unapproved};
use till_app::sessions::OpenRefusal;
use till_app::storage::{Conflict, Forbidden, InstrumentRefusal, NewIdOf, Rule, Stale};
use till_app::{Error, Refusal};
use till_core::exports::Today;
use till_core::ids::SessionId;
use till_core::instant::format_utc;
use till_core::invoice::SellerGap;
use till_core::money::{Bps, Cents};
use till_core::offline::IssuedAtProblem;
use till_core::payment::OutcomeRefusal;
use till_core::returns::ReturnError;
use till_core::settlement::SettlementError;
use till_core::stored_value::{NotACode, RefundPolicyError, TenderProblem};

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        match error {
            Error::Refused(refusal) => refusal.into(),
            Error::Store(error) => error.into(),
            Error::Internal(error) => ApiError::Internal(error),
        }
    }
}

impl From<Refusal> for ApiError {
    fn from(refusal: Refusal) -> Self {
        let code = refusal.channel_code();
        match refusal {
            Refusal::StoreNotInNetwork | Refusal::Open(OpenRefusal::UnknownStore) => {
                ApiError::field("storeId", "is not a store of the network")
            }
            Refusal::TokenOfAnotherSession { token, named } => business(format!(
                "This till's token belongs to session {token}, but the request names session {named}."
            )),
            Refusal::SessionUnknown(session) => session_unknown(&session),
            Refusal::SessionClosed(session) => session_closed(&session),
            Refusal::SessionInOtherStore { session, store, named } => {
                business(format!("Register session {session} belongs to store {store}, not {named}."))
            }
            Refusal::RegisterNotSessions {
                named,
                session,
                register,
            } => business(format!(
                "The request names register {named}, but session {session} is on register {register}."
            )),
            Refusal::DifferentContent => ApiError::Conflict(
                "This transactionId was already finalized with different content; nothing was changed.".into(),
            ),
            Refusal::IssuedAt(IssuedAtProblem::TooOld { max_age }) => business(format!(
                "The sale was rung (issuedAt) more than {} hours ago, too long ago to be booked; nothing was changed.",
                max_age.as_hours()
            )),
            Refusal::IssuedAt(IssuedAtProblem::InFuture { tolerance }) => business(format!(
                "The sale's issuedAt is more than {} ahead of the server's clock: check the till's clock.",
                duration(tolerance)
            )),
            Refusal::IssuedAt(IssuedAtProblem::BeforeSession { opened_at, skew }) => business(format!(
                "The sale's issuedAt is more than {} before its session opened ({}): a sale is rung, and priced, \
                 within its session; check the till's clock. Nothing was changed.",
                duration(skew),
                format_utc(opened_at)
            )),
            Refusal::IssuedAt(IssuedAtProblem::AfterClose { closed_at, skew }) => business(format!(
                "The sale's issuedAt is more than {} after its session closed ({}): a closed session books only \
                 the sales rung before its close; open a new session to sell. Nothing was changed.",
                duration(skew),
                format_utc(closed_at)
            )),
            Refusal::ReturnNeedsScope => ApiError::Forbidden("A return needs the scope pos.returns.create.".into()),
            Refusal::CouponWithReturn => business("A coupon cannot be presented with a return."),
            Refusal::QuantitiesTooLarge => business("The sale's quantities are too large to be represented."),
            Refusal::ChangeTooLarge => business("The tenders' change is too large to be represented."),
            Refusal::ReportTooLarge => business(
                "The report's sums are too large to be represented: ask for a shorter period, or one store.",
            ),
            Refusal::Settlement { error, differing } => settlement(&error, &differing),
            // A reference of another shape is a bad field, not a business rule.
            Refusal::Tender {
                tender,
                problem: TenderProblem::NotACode,
            } => ApiError::field(format!("{}.reference", tender_path(tender)), NotACode.to_string()),
            Refusal::Tender { tender, problem } => business(format!(
                "Tender {} cannot be taken: {}.",
                tender_path(tender),
                tender_problem(problem)
            )),
            Refusal::GiftCardLine { line_id, problem } => business(match problem {
                CardLineProblem::NotCustom => format!("Line {line_id} sells a gift card, so it must be marked custom."),
                CardLineProblem::Taxed => format!(
                    "Line {line_id} sells a gift card, a multi-purpose voucher: its vatRate must be 0."
                ),
                CardLineProblem::OnReturn => format!("Line {line_id}: a gift card cannot be sold on a return."),
            }),
            Refusal::RefundPolicy(error) => business(refund_policy(error)),
            Refusal::EmptyCart => business("The cart is empty: a sale needs at least one line."),
            Refusal::LineWithoutArticle { line_id } => business(format!(
                "Line {line_id} names no article (skuId is null) and is not marked custom."
            )),
            Refusal::NotInCatalog { line_id, sku } => {
                business(format!("Line {line_id}: article {sku} is not in the catalog."))
            }
            Refusal::Coupon { code, why } => business(format!("Coupon {code} cannot be used: {}.", unusable(why))),
            Refusal::AmountsTooLarge => business("The sale's amounts are too large to be represented."),
            Refusal::Pricing(error) => business(format!("{}.", capitalize(&error.to_string()))),
            Refusal::DiscountsBeyondLimit { amount, share, subject } => ApiError::Forbidden(format!(
                "The declared discounts take {amount} ({}), more than {subject} may grant alone; a manager's approval \
                 (x-elevation-token) or the price:override permission is needed.",
                percent(share)
            )),
            Refusal::DiscountsNotApproved(why) => ApiError::Forbidden(format!(
                "The elevation token cannot approve these discounts: {}.",
                unapproved(why, "the sale")
            )),
            Refusal::ReturnNeedsApproval => ApiError::Forbidden(
                "A return without a receipt needs the price:override permission or a manager's approval \
                 (x-elevation-token)."
                    .into(),
            ),
            Refusal::ReturnNotApproved(why) => ApiError::Forbidden(format!(
                "The elevation token cannot approve this return without a receipt: {}.",
                unapproved(why, "a return")
            )),
            Refusal::NoSuchSale(_) => no_such_sale(),
            Refusal::NoSuchReceiptLink => ApiError::NotFound("No receipt has this link.".into()),
            Refusal::EReceiptsOff => business(
                "Receipts are not sent by e-mail here: the deployment has no mail server (TILL_SMTP_URL).",
            ),
            Refusal::NoReceiptAddress => business(
                "The sale has no customer who consented to e-receipts with an address on their profile; \
                 give the address to send it to (email).",
            ),
            Refusal::SendIdTaken(send) => ApiError::Conflict(format!(
                "Send {send} was queued for another sale; nothing was queued."
            )),
            Refusal::NoOriginal(id) => business(format!("There is no sale {id} to return goods from.")),
            Refusal::OriginalIsReturn(id) => business(format!(
                "{id} is itself a return; goods are returned against the sale they were bought in."
            )),
            Refusal::Return { error, original } => business(return_refused(error, original.as_str())),
            Refusal::RefundMismatch { error, refund } => business(refund_mismatch(&error, refund)),
            Refusal::ReturnAmountsTooLarge => business("The return's amounts are too large to be represented."),
            Refusal::NotATill => ApiError::Forbidden(
                "Only a till may ask for a manager's approval: use the register session's token, with the manager present."
                    .into(),
            ),
            Refusal::GrantSessionClosed(session) => business(format!("Register session {session} is closed.")),
            Refusal::RateLimited { retry_after } => channel(
                code,
                StatusCode::TOO_MANY_REQUESTS,
                format!("Too many approval requests for this manager; try again in {retry_after} seconds."),
                Some(retry_after),
            ),
            Refusal::LockedOut { holder, retry_after } => channel(
                code,
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "Too many wrong PINs for {}; try again in {retry_after} seconds.",
                    match holder {
                        PinHolder::Manager => "this manager",
                        PinHolder::Cashier => "this person",
                    }
                ),
                Some(retry_after),
            ),
            Refusal::WrongPin(PinHolder::Manager) => {
                channel(code, StatusCode::UNAUTHORIZED, "Unknown manager or wrong PIN.", None)
            }
            Refusal::WrongPin(PinHolder::Cashier) => ApiError::Unauthorized("Unknown cashier or wrong PIN.".into()),
            Refusal::GrantsStale => channel(
                code,
                StatusCode::FORBIDDEN,
                "This manager's permissions have not been confirmed recently; the back office must resynchronise them.",
                None,
            ),
            Refusal::MissingAuthority => channel(
                code,
                StatusCode::FORBIDDEN,
                "This manager may not approve a discount of this size.",
                None,
            ),
            Refusal::NoElevationRequired => channel(
                code,
                StatusCode::UNPROCESSABLE_ENTITY,
                "The cashier may grant this discount alone; finalize the sale without a token.",
                None,
            ),
            Refusal::ElevationUnavailable => channel(
                code,
                StatusCode::UNPROCESSABLE_ENTITY,
                "Manager approval is switched off for this deployment.",
                None,
            ),
            Refusal::NewStaffWithoutPin => ApiError::field("pin", "is required for a new staff member"),
            Refusal::MayNotWorkTill(subject) => ApiError::Forbidden(format!("{subject} may not work a till.")),
            Refusal::Open(OpenRefusal::RegisterInOtherStore(home)) => business(format!(
                "This register belongs to store {home}; it cannot open in another store."
            )),
            Refusal::Open(OpenRefusal::AlreadyOpen(session)) => ApiError::Conflict(format!(
                "This register already has an open session ({session}); close it first."
            )),
            Refusal::Open(OpenRefusal::NewRegisterId(problem)) => ApiError::field("registerId", problem.to_string()),
            Refusal::Open(OpenRefusal::DayClosed { day, through }) => business(format!(
                "This register's day {day} is closed (closed early, through {through}): no session opens on it \
                 until that period is over."
            )),
            Refusal::NoSuchSession(_) => ApiError::NotFound("Register session not found.".into()),
            Refusal::DrawerOfAnotherSession { token, named } => ApiError::Forbidden(format!(
                "This till's token belongs to session {token}; it cannot reach the drawer of session {named}."
            )),
            Refusal::DrawerNeedsScope => ApiError::Forbidden(
                "A session's drawer is reached with its own till's token or the scope pos.sessions.close.".into(),
            ),
            Refusal::MovementIdTaken(movement) => ApiError::Conflict(format!(
                "Movement {movement} was already recorded with different content; nothing was changed."
            )),
            Refusal::DrawerClosed(session) => business(format!(
                "Register session {session} is closed: its drawer was counted with its Z report."
            )),
            Refusal::Stock(refusal) => stock(refusal),
            Refusal::Payment(refusal) => payment(refusal),
            Refusal::Capture { tender, refusal } => business(format!(
                "Tender {} cannot be taken: {refusal}.",
                tender_path(tender)
            )),
            Refusal::CardRefund { tender, refusal } => business(format!(
                "Tender {} cannot be refunded to its payment: {refusal}.",
                tender_path(tender)
            )),
            Refusal::Invoice(problem) => invoice_problem(problem),
        }
    }
}

/// Why no invoice was issued; nothing was recorded, and no number taken.
fn invoice_problem(problem: InvoiceProblem) -> ApiError {
    let ticket = |index: usize| format!("transactionIds.{index}");
    match problem {
        InvoiceProblem::UnknownStore(store) => business(format!(
            "Store {store} is not a store of the network; no invoice was issued."
        )),
        InvoiceProblem::Seller(SellerGap::Missing(field)) => business(format!(
            "The store's identity has no {}, which an invoice names: complete it with PUT /v1/stores/{{storeId}}; no invoice was issued.",
            field.path()
        )),
        InvoiceProblem::Seller(gap) => business(format!(
            "{}: correct it with PUT /v1/stores/{{storeId}}; no invoice was issued.",
            capitalize(&gap.to_string())
        )),
        InvoiceProblem::NotInEuros(currency) => business(format!(
            "The store keeps its amounts in {currency}; till writes invoices in euros only. No invoice was issued."
        )),
        InvoiceProblem::NoSuchSale { index, transaction_id } => business(format!(
            "{} names no committed sale ({transaction_id}); no invoice was issued.",
            ticket(index)
        )),
        InvoiceProblem::OtherStore { index, transaction_id } => business(format!(
            "{} ({transaction_id}) is a sale of another store; an invoice covers the sales of its own store. No invoice was issued.",
            ticket(index)
        )),
        InvoiceProblem::Twice { index, .. } => ApiError::field(ticket(index), "is named twice"),
        InvoiceProblem::SalesAndReturns => business(
            "The tickets mix sales and returns: a sale is invoiced, a return is credited by a credit invoice of its own. No invoice was issued.",
        ),
        InvoiceProblem::ReturnWithoutReceipt { index, transaction_id } => business(format!(
            "{} ({transaction_id}) is a return without a receipt: only a return against an invoiced sale is credited. No invoice was issued.",
            ticket(index)
        )),
        InvoiceProblem::ReturnOfUninvoicedSale {
            index,
            transaction_id,
            original,
        } => business(format!(
            "{} ({transaction_id}) returns goods of sale {original}, which no invoice covers: there is nothing to credit. No invoice was issued.",
            ticket(index)
        )),
        InvoiceProblem::ReturnsOfSeveralInvoices => business(
            "The returns are of sales on several invoices: a credit invoice credits one invoice. No invoice was issued.",
        ),
        InvoiceProblem::AlreadyInvoiced { transaction_id, number } => ApiError::Conflict(format!(
            "Ticket {transaction_id} is already on invoice {number}: a ticket is invoiced once. No invoice was issued."
        )),
        InvoiceProblem::IdTaken(invoice_id) => ApiError::Conflict(format!(
            "The invoiceId {invoice_id} was used for another invoice; nothing was changed."
        )),
        InvoiceProblem::Refused(refusal) => business(format!(
            "These tickets cannot be invoiced: {refusal}. No invoice was issued."
        )),
        InvoiceProblem::Numbering(_) => business("The store's invoice numbers of the year are exhausted."),
        InvoiceProblem::NoSuchInvoice(_) => ApiError::NotFound("Invoice not found.".into()),
    }
}

/// A payment request's refusal: a conflict for another request under a taken id or another
/// outcome for a settled attempt; a well-formed amount that does not fit the attempt is a 422.
fn payment(refusal: PaymentRefusal) -> ApiError {
    match refusal {
        PaymentRefusal::NoSuchPayment(_) => ApiError::NotFound("Payment attempt not found.".into()),
        PaymentRefusal::IdTaken(payment) => ApiError::Conflict(format!(
            "Payment {payment} was already recorded with different content; nothing was changed."
        )),
        PaymentRefusal::Outcome { refusal, .. } => match refusal {
            OutcomeRefusal::Conflict { .. } => ApiError::Conflict(format!("{}.", capitalize(&refusal.to_string()))),
            _ => business(format!("{}.", capitalize(&refusal.to_string()))),
        },
        PaymentRefusal::Void { refusal, .. } => business(format!("{}.", capitalize(&refusal.to_string()))),
        PaymentRefusal::OfAnotherSession { token, named } => ApiError::Forbidden(format!(
            "This till's token belongs to session {token}; it cannot reach the payments of session {named}."
        )),
        PaymentRefusal::NeedsScope => ApiError::Forbidden(
            "Payments are reached with their session's till token, or the scope pos.sales.finalize (pos.sales.read to read them).".into(),
        ),
        PaymentRefusal::SessionNotOpen(session) => business(format!(
            "Register session {session} is not open: no card payment can be asked for it."
        )),
    }
}

impl From<Rule> for ApiError {
    fn from(rule: Rule) -> Self {
        match rule {
            Rule::SessionUnknown(session) => session_unknown(&session),
            Rule::SessionClosed(session) => session_closed(&session),
            Rule::CouponExhausted(code) => {
                business(format!("Coupon {code} has been redeemed as many times as it may be."))
            }
            Rule::PeriodClosed { register_id, through } => business(format!(
                "Register {register_id} is closed through {through}; no sale can be booked into a closed period."
            )),
            Rule::SessionOpenOnDay {
                register_id,
                day,
                session,
            } => business(format!(
                "Register {register_id}'s day {day} is not over and session {session} is open on it: close the \
                 session (its Z report) first, then the day. Nothing was sealed."
            )),
            Rule::RedemptionsAboveMaximum { redemptions } => business(format!(
                "the coupon was already redeemed {redemptions} times; maxRedemptions cannot be lower"
            )),
            Rule::PinNeeded => business("a new staff member needs a PIN"),
            Rule::CustomerErased => ApiError::Conflict(
                "This customer's personal data was erased: the id is retired and takes no profile again; \
                 nothing was changed."
                    .into(),
            ),
            Rule::NewId { of, problem } => ApiError::field(
                match of {
                    NewIdOf::Store => "storeId",
                    NewIdOf::Staff => "subject",
                },
                problem.to_string(),
            ),
            Rule::FirstPriceLater(sku) => business(format!(
                "Article {sku} is not in the catalog yet: its first price applies now (leave out \
                 effectiveFrom); later prices can then be scheduled."
            )),
            Rule::Tender { tender, why } => business(format!(
                "Tender {} cannot be taken: {}.",
                tender_path(tender),
                instrument_refused(why)
            )),
            Rule::GiftCardLine { line_id, why } => business(match why {
                InstrumentRefusal::AlreadyActive => {
                    format!("Line {line_id} cannot activate its gift card: the card is already active.")
                }
                other => format!(
                    "Line {line_id} cannot load its gift card: {}.",
                    instrument_refused(other)
                ),
            }),
        }
    }
}

impl From<Stale> for ApiError {
    fn from(stale: Stale) -> Self {
        business(match stale {
            Stale::TwinNotKept(id) => format!(
                "Another sale with transaction id {id} was being committed and was not kept; send this one again."
            ),
            Stale::ReturnRaced(id) => format!("Another return against sale {id} was committed meanwhile."),
            Stale::ReturnedUnitsMoved => "The units returned of a line have changed.".to_owned(),
            Stale::PaymentMoved(tender) => format!(
                "Tender {} cannot be taken: its payment was captured, voided or orphaned meanwhile.",
                tender_path(tender)
            ),
            Stale::RefundMoved(tender) => format!(
                "Tender {} cannot be refunded: another refund to its payment was committed meanwhile; send the return again.",
                tender_path(tender)
            ),
            Stale::CustomerLeftGroup(id) => {
                format!("Customer {id} left a group whose promotion priced this sale; price the cart again.")
            }
            Stale::ChainGrew { chain, register_id } => format!(
                "The {} chain of {register_id} grew within the archive's period while it was read; send the request again.",
                chain.as_str()
            ),
        })
    }
}

impl From<Forbidden> for ApiError {
    fn from(forbidden: Forbidden) -> Self {
        match forbidden {
            Forbidden::GrantSpentOrExpired => ApiError::Forbidden(
                "The elevation token was already spent or has expired; ask the manager again.".into(),
            ),
        }
    }
}

impl From<Conflict> for ApiError {
    fn from(conflict: Conflict) -> Self {
        match conflict {
            Conflict::RegisterAlreadyOpen(register) => {
                ApiError::Conflict(format!("register {register} already has an open session"))
            }
            Conflict::GiftCardExists => ApiError::Conflict("A gift card with this code already exists.".into()),
            Conflict::BarcodeTaken { barcode, sku } => ApiError::Conflict(format!(
                "Barcode {barcode} belongs to article {sku}: take it off that article first; nothing was changed."
            )),
        }
    }
}

/// A period of an export or an archive that ends on a day not begun yet in one of its stores.
pub(crate) fn period_ends_after_today(today: &Today) -> ApiError {
    ApiError::field(
        "to",
        format!("must not be after today ({} in {})", today.date, today.zone),
    )
}

/// A look-up of a sale by its transaction id that found none.
pub(crate) fn no_such_sale() -> ApiError {
    ApiError::NotFound("No sale with this transaction id.".into())
}

pub(crate) fn no_such_register() -> ApiError {
    ApiError::NotFound("No register with this id.".into())
}

pub(crate) fn not_in_catalog() -> ApiError {
    ApiError::NotFound("Article not found in the catalog.".into())
}

pub(crate) fn no_article_with_barcode() -> ApiError {
    ApiError::NotFound("No article of the catalog carries this barcode.".into())
}

fn stock(refusal: StockRefusal) -> ApiError {
    match refusal {
        StockRefusal::UnknownStore(store) => ApiError::NotFound(format!("Store {store} not found.")),
        StockRefusal::NotInCatalog { line, sku } => business(format!(
            "Line {line} (lines.{line}.skuId): article {sku} is not in the catalog; nothing was moved."
        )),
        StockRefusal::CountIdTaken(count) => ApiError::Conflict(format!(
            "Count {count} was already recorded with other lines; nothing was changed."
        )),
        StockRefusal::TransferIdTaken(transfer) => ApiError::Conflict(format!(
            "Transfer {transfer} was already sent with other content; nothing was changed."
        )),
        StockRefusal::SameStore => ApiError::field("toStoreId", "must be another store than fromStoreId"),
        StockRefusal::NoSuchTransfer(_) => ApiError::NotFound("Stock transfer not found.".into()),
        StockRefusal::AlreadyReceived(transfer) => ApiError::Conflict(format!(
            "Transfer {transfer} was already received with other quantities; nothing was changed."
        )),
        StockRefusal::NotSent { line, sku } => business(format!(
            "Line {line} (lines.{line}.skuId): article {sku} was not sent with this transfer; nothing was received."
        )),
        StockRefusal::NotStated(sku) => business(format!(
            "The receipt does not state article {sku} of the transfer: list every article sent, with 0 when none arrived; nothing was received."
        )),
    }
}

/// A tolerance as a person reads it: `5 minutes`, `90 seconds`.
fn duration(span: SignedDuration) -> String {
    let seconds = span.as_secs();
    match (seconds % 60, seconds / 60) {
        (0, 1) => "1 minute".to_owned(),
        (0, minutes) if minutes > 0 => format!("{minutes} minutes"),
        (_, _) if seconds == 1 => "1 second".to_owned(),
        _ => format!("{seconds} seconds"),
    }
}

fn business(message: impl Into<String>) -> ApiError {
    ApiError::Business(message.into())
}

/// A refusal on the elevation channel, by the code of its vocabulary (every refusal answered
/// there has one).
fn channel(
    code: Option<&'static str>,
    status: StatusCode,
    message: impl Into<String>,
    retry_after: Option<u64>,
) -> ApiError {
    ApiError::Channel {
        status,
        code: code.unwrap_or_default(),
        message: message.into(),
        retry_after,
    }
}

fn session_unknown(session: &SessionId) -> ApiError {
    business(format!("Register session {session} does not exist."))
}

fn session_closed(session: &SessionId) -> ApiError {
    business(format!(
        "Register session {session} is closed; open a new session to book sales."
    ))
}

/// A settlement refusal, with the lines the till priced differently when that explains it.
fn settlement(error: &SettlementError, differing: &[PriceGap]) -> ApiError {
    let mut message = error.to_string();
    if matches!(error, SettlementError::AmountDue { .. }) && !differing.is_empty() {
        let lines: Vec<String> = differing
            .iter()
            .map(|gap| {
                format!(
                    "line {}: the till says {}, the catalog {}",
                    gap.line_id, gap.till, gap.catalog
                )
            })
            .collect();
        message.push_str(&format!(" Prices differ on {}.", lines.join("; ")));
    }
    business(message)
}

/// A tender by its dot path in the request, as field errors name it.
fn tender_path(index: usize) -> String {
    format!("tenders.tenders.{index}")
}

fn tender_problem(problem: TenderProblem) -> String {
    match problem {
        TenderProblem::NoReference => "it needs a reference, the gift card's or the credit note's code".to_owned(),
        TenderProblem::NotACode => format!("its reference {NotACode}"),
        TenderProblem::NoCustomer => {
            "a loyalty tender spends the customer's points, and the sale names no customerId".to_owned()
        }
        TenderProblem::NotWholePoints { point_value } => format!(
            "a loyalty tender applies a whole number of points, each worth {}",
            Cents::new(point_value).unwrap_or(Cents::ZERO)
        ),
    }
}

/// Why a gift card, a credit note or points refused. An unknown instrument and one of
/// another store read alike.
fn instrument_refused(why: InstrumentRefusal) -> String {
    match why {
        InstrumentRefusal::Unknown => "no such gift card or credit note can be used here".to_owned(),
        InstrumentRefusal::Blocked => "it is blocked".to_owned(),
        InstrumentRefusal::Expired => "it has expired".to_owned(),
        InstrumentRefusal::Insufficient { balance } => format!("only {balance} is left on it"),
        InstrumentRefusal::NotEnoughPoints { points } => format!("the customer has only {points} points"),
        InstrumentRefusal::AlreadyActive => "it is already active".to_owned(),
    }
}

fn refund_policy(error: RefundPolicyError) -> String {
    match error {
        RefundPolicyError::OwedToStoredValue { tender, owed } => format!(
            "Tender {}: the original sale was paid partly with gift cards, credit notes or points, so {owed} of this \
             refund goes back to them (a gift card, a new credit note or points), not out.",
            tender_path(tender)
        ),
        RefundPolicyError::TooManyPoints { tender, at_most } => format!(
            "Tender {}: at most {at_most} of this refund goes back as points, the share of the points spent on the \
             original sale.",
            tender_path(tender)
        ),
    }
}

fn unusable(why: CouponUnusable) -> &'static str {
    match why {
        CouponUnusable::Unknown => "it does not exist",
        CouponUnusable::Inactive => "it is not active",
        CouponUnusable::NotYetValid => "it is not valid yet",
        CouponUnusable::Expired => "it has expired",
        CouponUnusable::Exhausted => "it has been redeemed as many times as it may be",
    }
}

/// Why an elevation token cannot approve what `needing` (`the sale`, `a return`) needs.
fn unapproved(why: Unapproved, needing: &str) -> String {
    match why {
        Unapproved::NotAToken => "it is not an elevation token".to_owned(),
        Unapproved::NoSuchGrant => "no such grant".to_owned(),
        Unapproved::Spent => "it was already spent".to_owned(),
        Unapproved::Expired => "it has expired".to_owned(),
        Unapproved::OtherSession => "it was issued to another till session".to_owned(),
        Unapproved::LineAndTicket => "one approval covers line discounts or ticket discounts, not both".to_owned(),
        Unapproved::WrongOperation { approves, needs } => {
            format!("it approves {}, {needing} needs {}", approves.as_str(), needs.as_str())
        }
        Unapproved::TooSmall { amount, percent, takes } => {
            format!(
                "the manager approved {}, the discounts take {takes}",
                approved_size(amount, percent)
            )
        }
        Unapproved::RefundAboveApproval { approved, refund } => {
            format!("the manager approved up to {approved}, the refund is {refund}")
        }
        Unapproved::NoAmount => "it names no amount, and a refund is approved by its amount".to_owned(),
    }
}

fn approved_size(amount: Option<Cents>, percent: Option<Bps>) -> String {
    match (amount, percent.map(self::percent)) {
        (Some(amount), Some(percent)) => format!("up to {amount} and {percent}"),
        (Some(amount), None) => format!("up to {amount}"),
        (None, Some(percent)) => format!("up to {percent}"),
        (None, None) => "nothing".to_owned(),
    }
}

/// `1250` basis points as `12.50 %`.
fn percent(bps: Bps) -> String {
    format!("{}.{:02} %", bps.get() / 100, bps.get() % 100)
}

fn return_refused(error: ReturnError, original: &str) -> String {
    match error {
        ReturnError::UnknownLine { line_id } => format!("Line {line_id} is not a line of sale {original}."),
        ReturnError::TooMany {
            line_id,
            quantity,
            remaining: 0,
        } => format!("All {quantity} units of line {line_id} have already been returned."),
        other => format!("{}.", capitalize(&other.to_string())),
    }
}

fn refund_mismatch(error: &SettlementError, refund: Cents) -> String {
    match error {
        SettlementError::AmountDue { amount_due, gap, .. } => {
            format!("The amount due ({amount_due}) differs from the refund for these lines ({refund}) by {gap}.")
        }
        other => other.to_string(),
    }
}
