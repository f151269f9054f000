//! The customer directory: profiles written at the counter, in the console or through the
//! API, found by name, address or phone number; everything held on one customer exported on
//! request, and their personal data erased on request or after the retention period. The
//! fiscal journal names a customer by id only, so an erasure leaves it verifying as before.

use crate::app::App;
use crate::refusal::Error;
use jiff::Timestamp;
use till_core::e_receipt::MailFailure;
use till_core::ids::CustomerId;

use crate::storage::Window;
pub use crate::storage::customers::{
    ConsentChange, CustomerExport, CustomerKey, CustomerRecord, CustomerSearch, ErasureReason, NamedTicket, PointsLine,
    PutCustomer,
};
pub use crate::storage::stored_value::LoyaltyAccount;

/// Customers the retention job erases per pass.
const RETENTION_BATCH: usize = 500;

/// `None` for a customer no sale has named yet.
pub async fn loyalty_account(app: &App, customer_id: &CustomerId) -> Result<Option<LoyaltyAccount>, Error> {
    Ok(app.stored_value().loyalty_account(customer_id).await?)
}

pub async fn get(app: &App, customer_id: &CustomerId) -> Result<Option<CustomerRecord>, Error> {
    Ok(app.customers().get_customer(customer_id).await?)
}

/// Creates or replaces a profile; `true` when the customer was new.
pub async fn put(app: &App, put: PutCustomer) -> Result<(CustomerRecord, bool), Error> {
    Ok(app.customers().put_customer(put, app.now()).await?)
}

pub async fn search(
    app: &App,
    search: &CustomerSearch,
    group: Option<&str>,
    window: &Window<CustomerKey>,
) -> Result<Vec<(CustomerKey, CustomerRecord)>, Error> {
    Ok(app.customers().search_customers(search, group, window).await?)
}

pub async fn export(app: &App, customer_id: &CustomerId) -> Result<Option<CustomerExport>, Error> {
    Ok(app.customers().export_customer(customer_id).await?)
}

/// Erases a customer's personal data on their request; erasing again answers the same.
pub async fn erase(app: &App, customer_id: &CustomerId) -> Result<Option<CustomerRecord>, Error> {
    erase_one(app, customer_id, ErasureReason::Request, app.now()).await
}

/// A receipt still waiting to be e-mailed to the customer's address, typed at the till for that
/// send alone, lets it go with the profile: the send is given up, then the profile erased. In
/// that order, as two writes: a failure between them leaves the profile, its address with it,
/// and erasing again finishes the work. A send queued to the address between the two is as
/// one queued just after the erasure, to an address typed at the till anew.
async fn erase_one(
    app: &App,
    customer_id: &CustomerId,
    reason: ErasureReason,
    now: Timestamp,
) -> Result<Option<CustomerRecord>, Error> {
    app.mail()
        .give_up_sends_to_customer(customer_id, MailFailure::NoAddress)
        .await?;
    Ok(app.customers().erase_customer(customer_id, reason, now).await?)
}

/// The retention job's pass on this node: when its turn is free (one node a day), erases every
/// customer without activity for the retention period. The customers erased.
pub async fn run_retention(app: &App, holder: &str) -> Result<usize, Error> {
    let now = app.now();
    let day = jiff::SignedDuration::from_hours(24);
    let until = now.checked_add(day).unwrap_or(Timestamp::MAX);
    if !app.customers().claim_retention(holder, now, until).await? {
        return Ok(0);
    }
    let retention =
        jiff::SignedDuration::try_from(app.settings().customer_retention).unwrap_or(jiff::SignedDuration::MAX);
    let before = now.checked_sub(retention).unwrap_or(Timestamp::MIN);
    let (mut erased, mut after) = (0, None);
    loop {
        let inactive = app
            .customers()
            .inactive_customers(before, after.as_ref(), RETENTION_BATCH)
            .await?;
        let count = inactive.len();
        for customer in &inactive {
            erase_one(app, customer, ErasureReason::Retention, now).await?;
            erased += 1;
        }
        after = inactive.into_iter().last();
        if count < RETENTION_BATCH {
            return Ok(erased);
        }
    }
}
