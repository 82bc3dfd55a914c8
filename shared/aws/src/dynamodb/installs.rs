//! The store on DynamoDB: the installations (`INSTALL` / team), the
//! install links' one-time states (`OAUTH#{state}` / `-`, with a TTL) and
//! the stack's own workspace (`HOME` / `-`).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use myao_core::ports::{Installations, PortError};
use myao_domain::install::{Home, Installation};
use myao_domain::TeamId;

use super::items::{
    home_item, installation_item, n, oauth_state_item, s, time_text, TOKEN_EXPIRES,
};
use super::ops::*;
use super::schema::{Key, INSTALLATIONS_PK, TTL_ATTRIBUTE};
use super::table::DynamoStore;

#[async_trait]
impl Installations for DynamoStore {
    async fn put_installation(&self, installation: &Installation) -> Result<(), PortError> {
        self.put_item(installation_item(installation)?).await
    }

    async fn installation(&self, team: &TeamId) -> Result<Option<Installation>, PortError> {
        self.get_live(Key::installation(team)).await
    }

    async fn installations(&self) -> Result<Vec<Installation>, PortError> {
        let query = self
            .query()
            .key_condition_expression("pk = :pk")
            .expression_attribute_values(":pk", self.partition(INSTALLATIONS_PK));
        self.query_live(query).await
    }

    async fn renew_installation(
        &self,
        renewed: &Installation,
        was: DateTime<Utc>,
    ) -> Result<bool, PortError> {
        let put = self
            .put(installation_item(renewed)?)
            .condition_expression("#expires = :was")
            .expression_attribute_names("#expires", TOKEN_EXPIRES)
            .expression_attribute_values(":was", s(time_text(was)))
            .send()
            .await;
        Ok(written("PutItem", put)?.made())
    }

    async fn delete_installation(&self, team: &TeamId) -> Result<(), PortError> {
        self.delete_item(Key::installation(team)).await
    }

    async fn put_oauth_state(
        &self,
        state: &str,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        self.put_item(oauth_state_item(state, expires_at)).await
    }

    async fn take_oauth_state(&self, state: &str) -> Result<bool, PortError> {
        // One delete decides: only the first redirect with a live state
        // removes it; a second, a forged or an expired one finds none.
        let delete = self
            .delete(Key::oauth_state(state))
            .condition_expression("attribute_exists(pk) AND #exp > :now")
            .expression_attribute_names("#exp", TTL_ATTRIBUTE)
            .expression_attribute_values(":now", n(self.now()))
            .send()
            .await;
        Ok(written("DeleteItem", delete)?.made())
    }

    async fn home(&self) -> Result<Option<Home>, PortError> {
        self.get_live(Key::home()).await
    }

    async fn put_home(&self, home: &Home) -> Result<(), PortError> {
        self.put_item(home_item(home)?).await
    }
}
