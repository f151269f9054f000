//! The accountant's exports (the FEC, the e-reporting aggregates) and the fiscal archives read
//! only closed days. A period must have begun in every store it covers, and every day of it
//! with sales must be sealed by its register's day closure; the exports themselves are
//! computed by till-core from the days read here.

use crate::app::App;
use crate::refusal::Error;
use crate::storage::ReadAt;
use crate::storage::fiscal::DaysAsked;
use crate::storage::fiscal::ExportDays;
use jiff::civil::Date;
use std::collections::BTreeMap;
use till_core::exports::{ClosedDay, Today, last_day_begun};
use till_core::ids::{RegisterId, StoreId};

/// A period of days to export: local dates, both inclusive, of every register or of some.
pub struct Period {
    pub from: Date,
    pub to: Date,
    /// Only the registers of this store.
    pub store_id: Option<StoreId>,
    /// Only this register.
    pub register_id: Option<RegisterId>,
}

/// What the period holds.
pub enum Days {
    /// Every day of the period with sales is closed: these, in order of day and register.
    Closed {
        days: Vec<ClosedDay>,
        /// The SIRET of each store the days belong to, when known.
        sirets: BTreeMap<String, Option<String>>,
    },
    /// The period ends after `today`, the last day begun in a store it covers.
    NotBegun(Today),
    /// A register has sales on a day of the period that its day closure has not sealed yet.
    Open { register_id: String, date: String },
}

/// The closed days of the period, once it has begun everywhere it covers.
pub async fn closed_days(app: &App, period: Period) -> Result<Days, Error> {
    let store_id = period.store_id.map(StoreId::into_string);
    let register_id = period.register_id.map(RegisterId::into_string);
    if let Err(today) = begun(app, store_id.as_deref(), register_id.as_deref(), period.to).await? {
        return Ok(Days::NotBegun(today));
    }
    let asked = DaysAsked {
        from: period.from,
        to: period.to,
        store_id,
        register_id,
    };
    // Closed days never change: a standby that shows a day's closure holds its entries too.
    Ok(match app.journal().export_days(asked, ReadAt::Standby).await? {
        ExportDays::Closed { days, sirets } => Days::Closed { days, sirets },
        ExportDays::Open { register_id, date } => Days::Open { register_id, date },
    })
}

/// Whether a period ending on `to` has begun in the time zone of every store it covers (a day
/// that has not begun somewhere holds nothing to export or archive yet); else the last day
/// that has.
pub(crate) async fn begun(
    app: &App,
    store_id: Option<&str>,
    register_id: Option<&str>,
    to: Date,
) -> Result<Result<(), Today>, Error> {
    let zones = app.journal().period_zones(store_id, register_id).await?;
    let today = last_day_begun(&zones, app.now());
    Ok(if to > today.date { Err(today) } else { Ok(()) })
}
