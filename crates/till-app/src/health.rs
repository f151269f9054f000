//! Whether this node can serve: its database answers. Load balancers route to a node only
//! while it does.

use crate::app::App;
use crate::refusal::Error;

pub use till_store::Engine;

/// Asks the database for an answer; the engine it runs on when it gives one.
pub async fn ready(app: &App) -> Result<Engine, Error> {
    app.store().ping().await?;
    Ok(app.store().engine())
}
