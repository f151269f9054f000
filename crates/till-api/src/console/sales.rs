//! `GET /console/sales`: the sales search of `GET /v1/sales` (store, register, customer, type,
//! a local day), newest first a page at a time; `GET /console/sales/{transactionId}`: a sale
//! with its receipt as the printer lays it out and its e-mails, printing nothing; `POST
//! /console/sales/{transactionId}/prints`: prints it as `printReceipt` does; `POST
//! /console/sales/{transactionId}/receipt/send`: e-mails it as `sendReceipt` does; its invoices
//! and the form that issues one are [`super::invoices`]'.

use super::forms::Query;
use super::href::Href;
use super::invoices::{self, InvoicePanel};
use super::layout::{self, Nav, money};
use super::refused::Refused;
use super::session::{FORM_TOKEN, NoFields, Visitor, Write};
use super::today::{chosen, currency_of, day_zone, local_day, parse_date, store_select, stores, zone_of};
use crate::error::ApiError;
use crate::extract::{FromParams, Params, PathParams};
use crate::ops;
use crate::pagination::{PageQuery, Paging, Scope};
use crate::receipt::{Columns, Rendering};
use crate::routes::sales::SalePath;
use crate::state::AppState;
use axum::extract::State;
use jiff::civil::Date;
use maud::{Markup, html};
use till_app::e_receipts::SendRecord;
use till_app::receipts::{Print, ProvenReceipt};
use till_app::sales::{SaleFilter, SaleSummary};
use till_app::storage::Newest;
use till_core::customer::Email;
use till_core::e_receipt::masked;
use till_core::ids::{CustomerId, InvoiceId, RegisterId, SendId, StoreId, TransactionId};
use till_core::instant::from_micros;
use till_core::sale::SaleType;

/// The search form's fields, and the page.
pub struct SalesQuery {
    store: Option<StoreId>,
    register: Option<RegisterId>,
    customer: Option<CustomerId>,
    kind: Option<SaleType>,
    date: Option<Date>,
    paging: Paging<Newest<TransactionId>>,
}

impl FromParams for SalesQuery {
    fn from_params(params: &Params) -> Option<Self> {
        let store = params.optional("store", StoreId::parse);
        let register = params.optional("register", RegisterId::parse);
        let customer = params.optional("customer", CustomerId::parse);
        let kind = params.optional("type", |text| {
            SaleType::ALL
                .into_iter()
                .find(|kind| kind.as_str() == text)
                .ok_or("must be sale, rental, repair or return")
        });
        let date = params.optional("date", parse_date);
        let page = PageQuery::read(params);
        let (store, register, customer, kind, date) = (store?, register?, customer?, kind?, date?);
        let scope = Scope::new("console-sales")
            .filter("store", store.as_ref())
            .filter("register", register.as_ref())
            .filter("customer", customer.as_ref())
            .filter("type", kind.map(SaleType::as_str))
            .filter("date", date);
        let paging = page?.paging(params, scope)?;
        Some(SalesQuery {
            store,
            register,
            customer,
            kind,
            date,
            paging,
        })
    }
}

impl SalesQuery {
    /// The address of the same search, for the link to the next page.
    fn with_cursor(&self, cursor: &str) -> Href {
        Href::to("/console/sales")
            .query_some("store", self.store.as_ref().map(StoreId::as_str))
            .query_some("register", self.register.as_ref().map(RegisterId::as_str))
            .query_some("customer", self.customer.as_ref().map(CustomerId::as_str))
            .query_some("type", self.kind.map(SaleType::as_str))
            .query_some("date", self.date.map(|d| d.to_string()).as_deref())
            .query("cursor", cursor)
    }
}

/// Refused unless the visitor may search the sales.
pub fn allowed(visitor: &Visitor) -> Result<(), Refused> {
    visitor.require::<ops::SearchSales>()
}

pub async fn search(
    visitor: Visitor,
    State(state): State<AppState>,
    Query(query): Query<SalesQuery>,
) -> Result<Markup, Refused> {
    allowed(&visitor)?;
    let words = visitor.words();
    let language = visitor.language();
    // The store list is for the picker and the day's zone; without its scope the search
    // still runs, across every store, days cut in the default zone.
    let (stores, store) = if visitor.may::<ops::ListStores>() {
        (stores(&state).await?, chosen(&state, query.store.as_ref()).await?)
    } else {
        (Vec::new(), None)
    };
    let store = store.as_ref();
    let zone = day_zone(&stores, store);
    let currency = currency_of(store.or(stores.first()));
    let (from, to) = match query.date {
        Some(date) => {
            let (from, to) = local_day(date, &zone)?;
            (Some(from), Some(to))
        }
        None => (None, None),
    };
    let filter = SaleFilter {
        store_id: query.store.clone(),
        register_id: query.register.clone(),
        session_id: None,
        customer_id: query.customer.clone(),
        kind: query.kind,
        from,
        to,
    };
    let found = till_app::sales::search(state.app(), &filter, &query.paging.window()).await?;
    let (sales, next) = query.paging.page(found, SaleSummary::key, |sale| sale).into_parts();
    let body = html! {
        h1 { (words.sales) }
        form.picker method="get" action="/console/sales" {
            @if !stores.is_empty() {
                (store_select(&stores, store, words))
            }
            span.field {
                label for="register" { (words.register) }
                input #register name="register" value=[query.register.as_ref().map(|r| r.as_str())];
            }
            span.field {
                label for="customer" { (words.customer) }
                input #customer name="customer" value=[query.customer.as_ref().map(|c| c.as_str())];
            }
            span.field {
                label for="type" { (words.kind) }
                select #type name="type" {
                    option value="" { (words.any) }
                    @for kind in SaleType::ALL {
                        option value=(kind.as_str()) selected[query.kind == Some(kind)] { (language.sale_type(kind)) }
                    }
                }
            }
            span.field {
                label for="date" { (words.day) }
                input #date type="date" name="date" value=[query.date.map(|d| d.to_string())];
            }
            button type="submit" { (words.search) }
        }
        table #sales.wide {
            thead {
                tr {
                    th { (words.when) } th { (words.ticket) } th { (words.kind) } th { (words.store) } th { (words.register) }
                    th { (words.seller) } th { (words.customer) } th.n { (words.items) } th.n { (words.total) }
                }
            }
            tbody {
                @for sale in &sales {
                    tr data-transaction=(sale.transaction_id.as_str()) data-total=(sale.total_cents) {
                        td data-label=(words.when) { (layout::local_time(sale.emitted_at, &zone, language)) }
                        td data-label=(words.ticket) { a href=(Href::to("/console/sales").segment(sale.transaction_id.as_str())) { (sale.number) } }
                        td data-label=(words.kind) { (language.sale_type(sale.kind)) }
                        td data-label=(words.store) { (sale.store_id.as_str()) }
                        td data-label=(words.register) { (sale.register_id.as_str()) }
                        td data-label=(words.seller) { (sale.seller_id.as_str()) }
                        td data-label=(words.customer) { (sale.customer_id.as_ref().map_or(words.none, |c| c.as_str())) }
                        td.n data-label=(words.items) { (sale.item_count) }
                        td.n data-label=(words.total) { (money(sale.total_cents, &currency, language)) }
                    }
                }
                @if sales.is_empty() {
                    tr.empty { td colspan="9" { (words.no_sale_matches) } }
                }
            }
        }
        @if let Some(cursor) = next {
            p { a.next href=(query.with_cursor(&cursor)) { (words.older_sales) } }
        }
    };
    Ok(layout::page(words.nav_sales, Nav::Sales, &visitor, body))
}

/// The sale with its receipt as shown, and the prints made: viewing it records nothing and
/// seals nothing.
pub async fn sale(
    visitor: Visitor,
    State(state): State<AppState>,
    path: Result<PathParams<SalePath>, ApiError>,
) -> Result<Markup, Refused> {
    let PathParams(SalePath(id)) = path?;
    show(&state, visitor, &id, None).await
}

/// The sale's page as shown, with the invoice the visitor just `issued`, if any.
pub(super) async fn show(
    state: &AppState,
    visitor: Visitor,
    id: &TransactionId,
    issued: Option<InvoiceId>,
) -> Result<Markup, Refused> {
    visitor.require::<ops::GetSale>()?;
    let receipt = till_app::receipts::receipt(state.app(), &visitor.principal, id).await?;
    let mail = mail_of(state, &visitor, id, None).await?;
    let invoices = invoices::panel_of(state, &visitor, id, issued).await?;
    Ok(sale_page(&visitor, &receipt, None, &mail, &invoices))
}

/// The e-mails of a sale as its page shows them.
struct MailPanel {
    /// Whether the visitor may send the receipt by e-mail here: a mail server is configured
    /// and they hold the scope.
    may_send: bool,
    sends: Vec<SendRecord>,
    /// The send the visitor just asked for.
    queued: Option<SendId>,
}

async fn mail_of(
    state: &AppState,
    visitor: &Visitor,
    id: &TransactionId,
    queued: Option<SendId>,
) -> Result<MailPanel, Refused> {
    let enabled = state.app().settings().e_receipts;
    let sends = match enabled && visitor.may::<ops::ListReceiptSends>() {
        true => till_app::e_receipts::sends(state.app(), &visitor.principal, id).await?,
        false => Vec::new(),
    };
    Ok(MailPanel {
        may_send: enabled && visitor.may::<ops::SendReceipt>(),
        sends,
        queued,
    })
}

/// The address a receipt is e-mailed to: none for the sale's customer's.
pub struct SendForm {
    email: Option<Email>,
}

impl FromParams for SendForm {
    fn from_params(params: &Params) -> Option<Self> {
        let email = params.optional("email", |text| {
            Email::parse(text).ok_or("must be an e-mail address with a domain")
        })?;
        Some(SendForm { email })
    }
}

/// E-mails the receipt as `sendReceipt` does, then shows the sale with the send queued.
pub async fn send(
    State(state): State<AppState>,
    path: Result<PathParams<SalePath>, ApiError>,
    write: Write<SendForm>,
) -> Result<Markup, Refused> {
    let PathParams(SalePath(id)) = path?;
    let Write { visitor, form } = write;
    visitor.require::<ops::SendReceipt>()?;
    let requested = till_app::e_receipts::send(state.app(), &visitor.principal, &id, None, form.email).await?;
    let receipt = till_app::receipts::receipt(state.app(), &visitor.principal, &id).await?;
    let mail = mail_of(&state, &visitor, &id, Some(requested.record.id)).await?;
    let invoices = invoices::panel_of(&state, &visitor, &id, None).await?;
    Ok(sale_page(&visitor, &receipt, None, &mail, &invoices))
}

/// Prints the receipt as `printReceipt` does (the original, or a DUPLICATA sealed in the
/// register's duplicate chain), then shows the sale with the receipt printed, for the browser
/// to print.
pub async fn print(
    State(state): State<AppState>,
    path: Result<PathParams<SalePath>, ApiError>,
    write: Write<NoFields>,
) -> Result<Markup, Refused> {
    let PathParams(SalePath(id)) = path?;
    let visitor = write.visitor;
    visitor.require::<ops::PrintReceipt>()?;
    let printed = till_app::receipts::print(state.app(), &visitor.principal, &id, None).await?;
    let mail = mail_of(&state, &visitor, &id, None).await?;
    let invoices = invoices::panel_of(&state, &visitor, &id, None).await?;
    Ok(sale_page(
        &visitor,
        &printed.receipt,
        Some(&printed.print),
        &mail,
        &invoices,
    ))
}

/// A sale with its receipt: as shown, or as `printed` just now.
fn sale_page(
    visitor: &Visitor,
    proven: &ProvenReceipt,
    printed: Option<&Print>,
    mail: &MailPanel,
    invoices: &InvoicePanel,
) -> Markup {
    let receipt = &proven.receipt;
    let sale = &receipt.sale;
    let zone = zone_of(receipt.store.as_ref());
    let currency = currency_of(receipt.store.as_ref());
    let rendering = printed.map_or(Rendering::Shown, Rendering::Print);
    let text = crate::receipt::text(proven, rendering, Columns::default());
    let may_print = visitor.may::<ops::PrintReceipt>();
    let words = visitor.words();
    let language = visitor.language();
    let title = format!("{} {}", words.ticket, sale.number);
    let body = html! {
        h1 { (title) }
        dl.facts {
            div { dt { (words.transaction) } dd #transaction { (sale.transaction_id) } }
            div { dt { (words.kind) } dd { (language.sale_type_named(&sale.kind)) } }
            div { dt { (words.when) } dd { (layout::local_time(from_micros(sale.emitted_at), &zone, language)) } }
            div { dt { (words.store) } dd { (sale.store_id) } }
            div { dt { (words.register) } dd { (sale.register_id) " (" ((words.ticket_of_chain)(receipt.seq)) ")" } }
            div { dt { (words.seller) } dd { (receipt.seller_name.as_deref().unwrap_or(&sale.seller_id)) } }
            div { dt { (words.customer) } dd { (sale.customer_id.as_deref().unwrap_or(words.none)) } }
            div { dt { (words.total) } dd #total data-value=(sale.total_cents) { (money(sale.total_cents, &currency, language)) } }
        }
        section {
            h2 { (words.receipt) }
            @match printed {
                Some(print) => p.note #printed data-print=(print.print_no) {
                    @match print.duplicata() {
                        None => { (words.printed_original) }
                        Some(number) => { ((words.printed_duplicata)(print.print_no, number)) }
                    }
                    (words.print_for_customer)
                },
                None => p.note { (words.receipt_shown) },
            }
            pre.receipt #receipt { (text) }
            @if may_print {
                form.print method="post" action=(Href::to("/console/sales").segment(&sale.transaction_id).then("prints")) {
                    input type="hidden" name=(FORM_TOKEN) value=(visitor.form_token());
                    button type="submit" {
                        @if receipt.prints.is_empty() && printed.is_none() { (words.print) } @else { (words.print_duplicata) }
                    }
                }
            }
        }
        @if mail.may_send || !mail.sends.is_empty() {
            section #emails {
                h2 { (words.emails) }
                @if mail.queued.is_some() {
                    p.note #queued { (words.email_queued) }
                }
                @if !mail.sends.is_empty() {
                    table.sends {
                        thead { tr { th { (words.email_queued_at) } th { (words.email_to) } th { (words.email_state) } th.n { (words.email_attempts) } } }
                        tbody {
                            @for send in &mail.sends {
                                tr data-send=(send.id.as_str()) data-state=(send.state.as_str()) {
                                    td { (layout::local_time(send.queued_at, &zone, language)) }
                                    td { @match &send.email { Some(email) => (masked(email)), None => (language.recipient_named(send.recipient)) } }
                                    td { (language.send_state_named(send.state)) }
                                    td.n { (send.attempts) }
                                }
                            }
                        }
                    }
                }
                @if mail.may_send {
                    form.send method="post" action=(Href::to("/console/sales").segment(&sale.transaction_id).then("receipt").then("send")) {
                        input type="hidden" name=(FORM_TOKEN) value=(visitor.form_token());
                        label { (words.email_address) " " input type="email" name="email" autocomplete="off"; }
                        button type="submit" { (words.send_by_email) }
                    }
                }
            }
        }
        (invoices::section(visitor, &sale.transaction_id, sale.kind == "return", &currency, invoices))
        p { a href="/console/sales" { (words.back_to_sales) } }
    };
    layout::page(&title, Nav::Sales, visitor, body)
}
