//! Whether this node can serve: its database answers. Load balancers route to a node only
//! while it does.

use crate::app::App;
use crate::refusal::Error;

pub use crate::storage::Engine;

/// Asks the database for an answer; the engine it runs on when it gives one.
pub async fn ready(app: &App) -> Result<Engine, Error> {
    app.health().ping().await?;
    Ok(app.health().engine())
}
