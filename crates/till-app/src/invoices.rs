//! Invoices for business customers (docs/invoices.md): one or more committed sales of a store
//! made out to a company, or a credit invoice of returns of sales an invoice covers. The use
//! case reads the store, its seller identity and each ticket's sealed record, decides which
//! kind of invoice the tickets make, and hands storage a draft that storage numbers and keeps
//! in one transaction with its seal.

use crate::app::App;
use crate::caller::Principal;
use crate::refusal::{Error, Refusal};
use crate::storage::invoices::{InvoiceFilter, IssueOutcome, NewInvoice};
use crate::storage::{Newest, ReadAt, Window};
use serde_json::json;
use till_core::canonical::fingerprint;
use till_core::fiscal::payload::SaleRecord;
use till_core::ids::{InvoiceId, StoreId, TransactionId};
use till_core::invoice::{
    Buyer, Credited, Draft, InvoiceNumber, InvoiceReference, InvoiceRefusal, InvoiceSeller, NumberProblem, SellerGap,
};
use till_core::store::Currency;

pub use crate::storage::invoices::{InvoiceSummary, StoredInvoice};

/// An invoice as the back office asks for it, parsed.
#[derive(Clone, Debug)]
pub struct InvoiceRequest {
    pub invoice_id: InvoiceId,
    pub store_id: StoreId,
    /// Each once, in the order the invoice lists them.
    pub transaction_ids: Vec<TransactionId>,
    pub buyer: Buyer,
}

/// An invoice issued now, or answered again from an earlier request with the same content.
pub struct Invoiced {
    pub invoice: StoredInvoice,
    pub replayed: bool,
}

/// Why no invoice was issued.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InvoiceProblem {
    /// The store named is not in the network (or not the till's own).
    UnknownStore(StoreId),
    /// The store's identity lacks what an invoice names.
    Seller(SellerGap),
    /// The store keeps its amounts in another currency than the euro, which the XML states.
    NotInEuros(String),
    /// `transactionIds.{index}` names no committed sale.
    NoSuchSale {
        index: usize,
        transaction_id: TransactionId,
    },
    /// `transactionIds.{index}` is a sale of another store.
    OtherStore {
        index: usize,
        transaction_id: TransactionId,
    },
    /// `transactionIds.{index}` is named twice.
    Twice {
        index: usize,
        transaction_id: TransactionId,
    },
    /// Sales and returns together: a sale is invoiced, a return credited.
    SalesAndReturns,
    /// `transactionIds.{index}` is a return without a receipt, against no sale.
    ReturnWithoutReceipt {
        index: usize,
        transaction_id: TransactionId,
    },
    /// `transactionIds.{index}` returns goods of a sale no invoice covers.
    ReturnOfUninvoicedSale {
        index: usize,
        transaction_id: TransactionId,
        original: TransactionId,
    },
    /// The returns are of sales on several invoices: a credit invoice credits one.
    ReturnsOfSeveralInvoices,
    /// `transactionId` is on invoice `number` already.
    AlreadyInvoiced {
        transaction_id: TransactionId,
        number: String,
    },
    /// The invoice id was used for another invoice.
    IdTaken(InvoiceId),
    /// The tickets cannot make an invoice (amounts, VAT roundings, a damaged record).
    Refused(InvoiceRefusal),
    /// The store's sequence of the year is exhausted.
    Numbering(NumberProblem),
    NoSuchInvoice(InvoiceId),
}

impl From<InvoiceProblem> for Error {
    fn from(problem: InvoiceProblem) -> Self {
        Error::Refused(Refusal::Invoice(problem))
    }
}

/// Issues the invoice `request` asks for, or answers again the one its id issued before.
pub async fn issue(app: &App, caller: &Principal, request: InvoiceRequest) -> Result<Invoiced, Error> {
    // A till's session reaches its own store only, also for an invoice issued before.
    if !caller.reads_store(request.store_id.as_str()) {
        return Err(InvoiceProblem::UnknownStore(request.store_id).into());
    }
    let fingerprint = fingerprint_of(&request);
    // An id seen before answers what it issued, whatever changed since in the store or sales.
    if let Some(earlier) = app.invoices().invoice(&request.invoice_id).await? {
        return answered_again(app, earlier, &fingerprint).await;
    }
    let Some(store) = app.people().get_store(&request.store_id).await? else {
        return Err(InvoiceProblem::UnknownStore(request.store_id).into());
    };
    InvoiceSeller::of(&store.profile.seller).map_err(InvoiceProblem::Seller)?;
    if store.profile.currency.as_str() != Currency::DEFAULT {
        return Err(InvoiceProblem::NotInEuros(store.profile.currency.as_str().to_owned()).into());
    }
    let tickets = read_tickets(app, &request).await?;
    let credit_of = credited_invoice(app, &request, &tickets).await?;
    for transaction_id in &request.transaction_ids {
        if let Some(covering) = app.invoices().invoice_covering(transaction_id).await? {
            return Err(InvoiceProblem::AlreadyInvoiced {
                transaction_id: transaction_id.clone(),
                number: covering.number,
            }
            .into());
        }
    }
    let zone = store.profile.timezone.zone();
    let issued_at = app.now();
    let issued_on = issued_at.to_zoned(zone.clone()).date();
    let draft = Draft {
        invoice_id: request.invoice_id.clone(),
        store_id: request.store_id.clone(),
        issued_on,
        issued_at,
        seller: store.profile.seller.clone(),
        buyer: request.buyer.clone(),
        time_zone: zone,
        tickets: tickets.into_iter().map(|(record, _)| record).collect(),
        credit_of,
    };
    // Made once with a number of the year before storage takes the real one: what the tickets
    // cannot make is refused before anything is written.
    let trial = InvoiceNumber::of(request.store_id.clone(), issued_on.year(), 1).map_err(InvoiceProblem::Numbering)?;
    draft.issue(trial).map_err(|refusal| refused(&request, refusal))?;
    let outcome = app
        .invoices()
        .issue_invoice(NewInvoice {
            draft,
            fingerprint: fingerprint.clone(),
        })
        .await?;
    match outcome {
        IssueOutcome::Issued(invoice) => Ok(Invoiced {
            invoice,
            replayed: false,
        }),
        IssueOutcome::Replayed(earlier) | IssueOutcome::IdTaken(earlier) => {
            answered_again(app, earlier, &fingerprint).await
        }
        IssueOutcome::AlreadyInvoiced { transaction_id, number } => {
            Err(InvoiceProblem::AlreadyInvoiced { transaction_id, number }.into())
        }
        IssueOutcome::Refused(refusal) => Err(refused(&request, refusal)),
    }
}

async fn answered_again(app: &App, earlier: StoredInvoice, fingerprint: &str) -> Result<Invoiced, Error> {
    if earlier.fingerprint != fingerprint {
        return Err(InvoiceProblem::IdTaken(earlier.invoice_id).into());
    }
    Ok(app
        .answer_again(Invoiced {
            invoice: earlier,
            replayed: true,
        })
        .await?)
}

/// The canonical form of what the request asks, without its id.
fn fingerprint_of(request: &InvoiceRequest) -> String {
    let buyer = &request.buyer;
    let address = &buyer.address;
    fingerprint(&json!({
        "storeId": request.store_id.as_str(),
        "transactionIds": request.transaction_ids.iter().map(TransactionId::as_str).collect::<Vec<_>>(),
        "buyer": {
            "name": buyer.name.as_str(),
            "siren": buyer.siren.as_ref().map(|s| s.as_str()),
            "vatNumber": buyer.vat_number.as_ref().map(|v| v.as_str()),
            "address": {
                "line1": address.line1.as_str(),
                "line2": address.line2.as_ref().map(|l| l.as_str()),
                "postalCode": address.postal_code.as_str(),
                "city": address.city.as_str(),
                "country": address.country.as_str(),
            },
        },
    }))
}

type Ticket = (SaleRecord, Option<SaleRecord>);

/// Each ticket's sealed record, with the record of the sale a return gives goods back from.
async fn read_tickets(app: &App, request: &InvoiceRequest) -> Result<Vec<Ticket>, Error> {
    let mut tickets: Vec<Ticket> = Vec::with_capacity(request.transaction_ids.len());
    for (index, transaction_id) in request.transaction_ids.iter().enumerate() {
        if request.transaction_ids[..index].contains(transaction_id) {
            return Err(InvoiceProblem::Twice {
                index,
                transaction_id: transaction_id.clone(),
            }
            .into());
        }
        let Some(ticket) = app.sales_book().sale_record(transaction_id).await? else {
            return Err(InvoiceProblem::NoSuchSale {
                index,
                transaction_id: transaction_id.clone(),
            }
            .into());
        };
        if ticket.0.store_id != request.store_id.as_str() {
            return Err(InvoiceProblem::OtherStore {
                index,
                transaction_id: transaction_id.clone(),
            }
            .into());
        }
        tickets.push(ticket);
    }
    Ok(tickets)
}

const RETURN: &str = "return";

/// `None` for an invoice of sales; the invoice credited when every ticket is a return against
/// a receipt of a sale that one invoice covers.
async fn credited_invoice(app: &App, request: &InvoiceRequest, tickets: &[Ticket]) -> Result<Option<Credited>, Error> {
    let returns = tickets.iter().filter(|(record, _)| record.kind == RETURN).count();
    if returns == 0 {
        return Ok(None);
    }
    if returns != tickets.len() {
        return Err(InvoiceProblem::SalesAndReturns.into());
    }
    let mut credited: Option<InvoiceSummary> = None;
    for (index, (record, _)) in tickets.iter().enumerate() {
        let transaction_id = request.transaction_ids[index].clone();
        let Some(original) = &record.original else {
            return Err(InvoiceProblem::ReturnWithoutReceipt { index, transaction_id }.into());
        };
        let original = TransactionId::from_trusted(original.transaction_id.clone());
        let Some(covering) = app.invoices().invoice_covering(&original).await? else {
            return Err(InvoiceProblem::ReturnOfUninvoicedSale {
                index,
                transaction_id,
                original,
            }
            .into());
        };
        match &credited {
            Some(first) if first.invoice_id != covering.invoice_id => {
                return Err(InvoiceProblem::ReturnsOfSeveralInvoices.into());
            }
            _ => credited = Some(covering),
        }
    }
    let Some(summary) = credited else {
        return Ok(None);
    };
    let number = InvoiceNumber::parse(&summary.number).map_err(|_| {
        Error::Store(crate::storage::StoreError::Corrupt(format!(
            "invoice number {}",
            summary.number
        )))
    })?;
    Ok(Some(Credited {
        invoice_id: summary.invoice_id.clone(),
        reference: InvoiceReference {
            number,
            issued_on: summary.issued_on,
        },
        sales: summary
            .transaction_ids
            .iter()
            .map(|id| id.as_str().to_owned())
            .collect(),
    }))
}

/// A refusal of the domain, naming the ticket it is about by its place in the request.
fn refused(request: &InvoiceRequest, refusal: InvoiceRefusal) -> Error {
    let place = |id: &str| {
        request
            .transaction_ids
            .iter()
            .position(|t| t.as_str() == id)
            .map(|index| (index, request.transaction_ids[index].clone()))
    };
    let problem = match &refusal {
        InvoiceRefusal::AnotherStore(id) => {
            place(id).map(|(index, transaction_id)| InvoiceProblem::OtherStore { index, transaction_id })
        }
        InvoiceRefusal::Twice(id) => {
            place(id).map(|(index, transaction_id)| InvoiceProblem::Twice { index, transaction_id })
        }
        InvoiceRefusal::Seller(gap) => Some(InvoiceProblem::Seller(*gap)),
        _ => None,
    };
    problem.unwrap_or(InvoiceProblem::Refused(refusal)).into()
}

/// The invoice `invoice_id`, for a caller who reads its store.
pub async fn get(app: &App, caller: &Principal, invoice_id: &InvoiceId) -> Result<StoredInvoice, Error> {
    match app.invoices().invoice(invoice_id).await? {
        Some(invoice) if caller.reads_store(invoice.store_id.as_str()) => Ok(invoice),
        _ => Err(InvoiceProblem::NoSuchInvoice(invoice_id.clone()).into()),
    }
}

/// The invoices `filter` admits, newest first, in `window`; a till's token lists its own
/// store's only.
pub async fn list(
    app: &App,
    caller: &Principal,
    filter: InvoiceFilter,
    window: &Window<Newest<InvoiceId>>,
) -> Result<Vec<InvoiceSummary>, Error> {
    let Some(store_id) = caller.store_to_list(filter.store_id.clone()) else {
        return Ok(Vec::new());
    };
    let filter = InvoiceFilter { store_id, ..filter };
    Ok(app.invoices().list_invoices(&filter, window, ReadAt::Standby).await?)
}

/// The invoices covering a sale: its own, and the credit invoices of its returns, oldest first.
pub async fn of_sale(
    app: &App,
    caller: &Principal,
    transaction_id: &TransactionId,
) -> Result<Vec<InvoiceSummary>, Error> {
    let Some((store_id, _)) = app.sales_book().sale_answer(transaction_id).await? else {
        return Err(Refusal::NoSuchSale(transaction_id.clone()).into());
    };
    if !caller.reads_store(store_id.as_str()) {
        return Err(Refusal::NoSuchSale(transaction_id.clone()).into());
    }
    let mut covering = Vec::new();
    if let Some(invoice) = app.invoices().invoice_covering(transaction_id).await? {
        covering.push(invoice);
    }
    for returned in app.sales_book().returns_against(transaction_id).await? {
        let id = TransactionId::from_trusted(returned.transaction_id);
        if let Some(credit) = app.invoices().invoice_covering(&id).await?
            && !covering.iter().any(|known| known.invoice_id == credit.invoice_id)
        {
            covering.push(credit);
        }
    }
    Ok(covering)
}
