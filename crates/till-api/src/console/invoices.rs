//! The invoices of a sale on its page (docs/invoices.md, "The console"): the invoice covering
//! it and the credit invoices of its returns, each with its PDF; `POST
//! /console/sales/{transactionId}/invoice` issues one for the sale (or, for a return of an
//! invoiced sale, its credit invoice) as `createInvoice` does; `GET
//! /console/invoices/{invoiceId}/pdf` downloads the Factur-X PDF as `getInvoice` answers it.

use super::href::Href;
use super::layout::money;
use super::refused::Refused;
use super::session::{FORM_TOKEN, Visitor, Write};
use crate::error::ApiError;
use crate::extract::{FromParams, Params, PathParams};
use crate::ops;
use crate::routes::sales::SalePath;
use crate::state::AppState;
use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use till_app::invoices::{InvoiceRequest, InvoiceSummary};
use till_core::ids::{InvoiceId, StoreId, TransactionId};
use till_core::invoice::{Buyer, BuyerText};

/// The invoices of a sale as its page shows them.
pub struct InvoicePanel {
    covering: Vec<InvoiceSummary>,
    /// Whether the visitor may issue one here: they hold the scope and no invoice covers the
    /// sale yet.
    may_issue: bool,
    /// The invoice the visitor just issued.
    issued: Option<InvoiceId>,
    /// The id the form issues under: sent twice (a double click, a reload), it is answered
    /// again, not issued twice.
    invoice_id: String,
}

pub async fn panel_of(
    state: &AppState,
    visitor: &Visitor,
    id: &TransactionId,
    issued: Option<InvoiceId>,
) -> Result<InvoicePanel, Refused> {
    let may_read = visitor.may::<ops::GetInvoice>();
    let covering = match may_read {
        true => till_app::invoices::of_sale(state.app(), &visitor.principal, id).await?,
        false => Vec::new(),
    };
    let own = covering.iter().any(|invoice| invoice.transaction_ids.contains(id));
    Ok(InvoicePanel {
        may_issue: !own && visitor.may::<ops::CreateInvoice>(),
        covering,
        issued,
        invoice_id: till_app::secret::new_id("inv"),
    })
}

/// The section of the sale page: its invoices, and the form that issues one.
pub fn section(
    visitor: &Visitor,
    transaction_id: &str,
    is_return: bool,
    currency: &str,
    panel: &InvoicePanel,
) -> Markup {
    let words = visitor.words();
    let language = visitor.language();
    html! {
        @if panel.may_issue || !panel.covering.is_empty() {
            section #invoices {
                h2 { (words.invoices) }
                @if panel.issued.is_some() {
                    p.note #invoice-issued { (words.invoice_issued) }
                }
                @if !panel.covering.is_empty() {
                    table.invoices {
                        thead { tr { th { "N°" } th { (words.kind) } th { (words.invoice_issued_on) } th { (words.invoice_buyer) } th.n { (words.invoice_total) } th { } } }
                        tbody {
                            @for invoice in &panel.covering {
                                tr data-invoice=(invoice.invoice_id.as_str()) {
                                    td { (invoice.number) }
                                    td { @if invoice.credit { (words.credit_invoice) } @else { (words.invoice_kind) } }
                                    td { (invoice.issued_on) }
                                    td { (invoice.buyer_name) }
                                    td.n { (money(invoice.total_cents, currency, language)) }
                                    td { a.pdf href=(Href::to("/console/invoices").segment(invoice.invoice_id.as_str()).then("pdf")) { (words.invoice_pdf) } }
                                }
                            }
                        }
                    }
                }
                @if panel.may_issue {
                    form.invoice method="post" action=(Href::to("/console/sales").segment(transaction_id).then("invoice")) {
                        input type="hidden" name=(FORM_TOKEN) value=(visitor.form_token());
                        input type="hidden" name="invoiceId" value=(panel.invoice_id);
                        label { (words.buyer_name) " " input name="name" required autocomplete="organization"; }
                        label { (words.buyer_siren) " " input name="siren" inputmode="numeric" autocomplete="off"; }
                        label { (words.buyer_vat_number) " " input name="vatNumber" autocomplete="off"; }
                        label { (words.buyer_line1) " " input name="line1" required autocomplete="address-line1"; }
                        label { (words.buyer_line2) " " input name="line2" autocomplete="address-line2"; }
                        label { (words.buyer_postal_code) " " input name="postalCode" required autocomplete="postal-code"; }
                        label { (words.buyer_city) " " input name="city" required autocomplete="address-level2"; }
                        label { (words.buyer_country) " " input name="country" required value="FR" autocomplete="country"; }
                        button type="submit" {
                            @if is_return { (words.issue_credit_invoice) } @else { (words.issue_invoice) }
                        }
                    }
                }
            }
        }
    }
}

/// The form's fields: the invoice's id and the buyer, read by the core's rules.
pub struct InvoiceForm {
    invoice_id: InvoiceId,
    buyer: Buyer,
}

impl FromParams for InvoiceForm {
    fn from_params(params: &Params) -> Option<Self> {
        let invoice_id = params.required("invoiceId", InvoiceId::parse);
        let optional = |name: &str| params.optional(name, |t| Ok::<_, String>(t.to_owned())).flatten();
        let (name, line1, postal_code, city, country) = (
            params.text("name"),
            params.text("line1"),
            params.text("postalCode"),
            params.text("city"),
            params.text("country"),
        );
        let (siren, vat_number, line2) = (optional("siren"), optional("vatNumber"), optional("line2"));
        let (name, line1, postal_code, city, country) = (name?, line1?, postal_code?, city?, country?);
        let parsed = Buyer::parse(&BuyerText {
            name: &name,
            siren: siren.as_deref(),
            vat_number: vat_number.as_deref(),
            line1: &line1,
            line2: line2.as_deref(),
            postal_code: &postal_code,
            city: &city,
            country: &country,
        });
        let buyer = match parsed {
            Ok(buyer) => Some(buyer),
            Err(refused) => {
                for refusal in refused {
                    let field = refusal.field.path().rsplit('.').next().unwrap_or_default();
                    params.fail::<()>(field, refusal.problem);
                }
                None
            }
        };
        Some(InvoiceForm {
            invoice_id: invoice_id?,
            buyer: buyer?,
        })
    }
}

/// Issues the sale's invoice as `createInvoice` does, then shows the sale with it.
pub async fn issue(
    State(state): State<AppState>,
    path: Result<PathParams<SalePath>, ApiError>,
    write: Write<InvoiceForm>,
) -> Result<Markup, Refused> {
    let PathParams(SalePath(id)) = path?;
    let Write { visitor, form } = write;
    visitor.require::<ops::CreateInvoice>()?;
    let receipt = till_app::receipts::receipt(state.app(), &visitor.principal, &id).await?;
    let request = InvoiceRequest {
        invoice_id: form.invoice_id,
        store_id: StoreId::from_trusted(receipt.receipt.sale.store_id.clone()),
        transaction_ids: vec![id.clone()],
        buyer: form.buyer,
    };
    let invoiced = till_app::invoices::issue(state.app(), &visitor.principal, request).await?;
    super::sales::show(&state, visitor, &id, Some(invoiced.invoice.invoice_id)).await
}

/// `{invoiceId}` of the console's PDF address.
pub struct InvoicePath(InvoiceId);

impl FromParams for InvoicePath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("invoiceId", InvoiceId::parse).map(InvoicePath)
    }
}

/// The invoice's Factur-X PDF, as `getInvoice` answers it, to download.
pub async fn pdf(
    visitor: Visitor,
    State(state): State<AppState>,
    path: Result<PathParams<InvoicePath>, ApiError>,
) -> Result<Response, Refused> {
    visitor.require::<ops::GetInvoice>()?;
    let PathParams(InvoicePath(id)) = path?;
    let invoice = till_app::invoices::get(state.app(), &visitor.principal, &id).await?;
    let bytes = crate::routes::invoices::pdf_of(&invoice)?;
    let mut response = bytes.into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/pdf"));
    if let Ok(disposition) = HeaderValue::from_str(&format!("attachment; filename=\"{}.pdf\"", invoice.number)) {
        headers.insert(CONTENT_DISPOSITION, disposition);
    }
    Ok(response)
}
