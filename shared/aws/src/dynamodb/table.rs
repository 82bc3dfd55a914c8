//! The store's handle on its table, in a module of its own so that the
//! modules implementing the ports on it find it beside them rather than in
//! their parent.

use std::sync::Arc;

use aws_sdk_dynamodb::Client;

use myao_core::ports::Clock;
use myao_domain::TeamId;

pub(super) const SERVICE: &str = "dynamodb";

/// [`Store`](myao_core::ports::Store) on one DynamoDB table (see the module
/// docs for the layout).
#[derive(Clone)]
pub struct DynamoStore {
    pub(super) client: Client,
    pub(super) table: String,
    pub(super) clock: Arc<dyn Clock>,
    /// Whose items it reads and writes: a team's, or (`None`) the stack's own.
    pub(super) team: Option<TeamId>,
}

impl std::fmt::Debug for DynamoStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamoStore")
            .field("table", &self.table)
            .field("team", &self.team)
            .finish_non_exhaustive()
    }
}

impl DynamoStore {
    /// The store on `table`; `clock` decides which items have expired.
    pub fn new(client: Client, table: impl Into<String>, clock: Arc<dyn Clock>) -> DynamoStore {
        DynamoStore {
            client,
            table: table.into(),
            clock,
            team: None,
        }
    }

    /// The same table as `team` sees it: every key of what it reads and
    /// writes is in that team's part of the table (see the module docs).
    pub fn for_team(&self, team: &TeamId) -> DynamoStore {
        DynamoStore {
            team: Some(team.clone()),
            ..self.clone()
        }
    }

    /// The table's name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The SDK client, for tools and tests that look at the table directly.
    pub fn client(&self) -> &Client {
        &self.client
    }
}
