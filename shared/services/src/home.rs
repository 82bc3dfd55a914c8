//! The stack's own workspace (issue 56): the team of the stack's own bot
//! token, learned once from `auth.test` and kept in the table, where
//! ingest reads it to tell the stack's own events from a stranger's. The
//! memory function's recurring run (hourly) learns it when it is not kept
//! yet, and `myao serve` at its start: ingest itself never calls Slack.

use myao_core::ports::{Installations, PortError, SlackApi};
use myao_domain::install::Home;

/// The stack's own workspace: the one kept, else the one `slack`'s token
/// is of, kept from now on. A stack with no token of its own (a client id
/// and secret only) has none: Slack refuses, and nothing is kept.
pub async fn learn(store: &dyn Installations, slack: &dyn SlackApi) -> Result<Home, PortError> {
    if let Some(home) = store.home().await? {
        return Ok(home);
    }
    let home = slack.own_workspace().await?;
    store.put_home(&home).await?;
    tracing::info!(team = %home.team, "the stack's own workspace learned");
    Ok(home)
}
