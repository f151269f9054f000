//! Sales reports: the sales of a period, in a store, on a register or across the chain, added
//! up by local day or hour, article, seller, tender method or VAT rate (see
//! `till_core::report`).

use crate::app::App;
use crate::refusal::{Error, Refusal};
use crate::storage::ReadAt;
use crate::storage::sales::ReportScope;
use till_core::ids::{RegisterId, StoreId};
use till_core::report::{GroupBy, Period, Report, ReportError, assemble};

/// A report asked for, parsed.
pub struct ReportRequest {
    pub store_id: Option<StoreId>,
    pub register_id: Option<RegisterId>,
    pub period: Period,
    pub group_by: GroupBy,
}

/// The report: the rollups of the sessions closed, and those of the sessions still open
/// computed from their sales. Sessions closed before rollups existed are rolled up first.
pub async fn sales_report(app: &App, request: ReportRequest) -> Result<Report, Error> {
    let scope = ReportScope {
        store_id: request.store_id,
        register_id: request.register_id,
        period: request.period,
    };
    app.sales_book().roll_up_pending(&scope).await?;
    // A report is the back office's, as of a moment ago: on a standby when there is one.
    let pieces = app
        .sales_book()
        .report_pieces(&scope, request.group_by, ReadAt::Standby)
        .await?;
    assemble(request.group_by, pieces).map_err(|error| match error {
        ReportError::Overflow(_) => Refusal::ReportTooLarge.into(),
        unreadable @ ReportError::UnknownRate(_) => Error::internal(unreadable),
    })
}
