//! Settings and secrets in SSM Parameter Store.
//!
//! Settings are the plain parameters directly under one path
//! (`/myao/prod/min_wait_seconds`); secrets are SecureString parameters read
//! one by one with decryption, and cached in process. A secret's value is
//! never logged, nor put into an error.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_ssm::types::ParameterType;
use aws_sdk_ssm::Client;
use tokio::time::Instant;

use crate::errors::{expecting, port_error};
use myao_core::ports::{PortError, Secrets, SettingsSource};
use myao_domain::TeamId;

const SERVICE: &str = "ssm";
/// How long a secret is reused before it is read again.
pub const SECRET_TTL: Duration = Duration::from_secs(300);

/// [`SettingsSource`] on the parameters directly under `path`.
#[derive(Debug, Clone)]
pub struct SsmSettingsSource {
    pub client: Client,
    /// The settings' path, e.g. `/myao/prod` (a trailing `/` is fine).
    pub path: String,
}

impl SsmSettingsSource {
    /// The path as GetParametersByPath wants it, and the prefix of the
    /// names it returns.
    fn path_and_prefix(&self) -> (String, String) {
        let trimmed = self.path.trim_matches('/');
        if trimmed.is_empty() {
            ("/".to_owned(), "/".to_owned())
        } else {
            (format!("/{trimmed}"), format!("/{trimmed}/"))
        }
    }
}

/// A setting's name relative to `prefix`, or `None` for what is not a
/// setting: a name elsewhere, or one in a sub-path such as `secrets/`.
fn setting_name<'a>(name: &'a str, prefix: &str) -> Option<&'a str> {
    name.strip_prefix(prefix)
        .filter(|rest| !rest.is_empty() && !rest.contains('/'))
}

#[async_trait]
impl SettingsSource for SsmSettingsSource {
    /// `{path}/teams/{team}/`: a team's own settings sit below the stack's,
    /// where the stack's read (one level, never recursive) does not reach.
    fn for_team(&self, team: &TeamId) -> Option<Arc<dyn SettingsSource>> {
        let (path, _) = self.path_and_prefix();
        Some(Arc::new(TeamSsmSettings(SsmSettingsSource {
            client: self.client.clone(),
            path: format!("{}/teams/{team}/", path.trim_end_matches('/')),
        })))
    }

    async fn load(&self) -> Result<Vec<(String, String)>, PortError> {
        let pairs = self.pairs().await?;
        // The stack creates every setting: none at all is a wrong path or
        // deleted parameters, and running on the defaults would fail open.
        if pairs.is_empty() {
            let (path, _) = self.path_and_prefix();
            return Err(PortError::refused(
                SERVICE,
                format!("no settings under {path}: is MYAO_SETTINGS_PATH right?"),
            ));
        }
        Ok(pairs)
    }
}

/// A team's own settings (`{path}/teams/{team}/`): often none at all, which
/// leaves the stack's in force.
struct TeamSsmSettings(SsmSettingsSource);

#[async_trait]
impl SettingsSource for TeamSsmSettings {
    async fn load(&self) -> Result<Vec<(String, String)>, PortError> {
        self.0.pairs().await
    }
}

impl SsmSettingsSource {
    /// The plain parameters one level under the path, as settings.
    async fn pairs(&self) -> Result<Vec<(String, String)>, PortError> {
        let (path, prefix) = self.path_and_prefix();
        let mut pairs = Vec::new();
        let mut pages = self
            .client
            .get_parameters_by_path()
            .path(&path)
            .recursive(false)
            .with_decryption(false)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| port_error(SERVICE, "GetParametersByPath", e))?;
            for p in page.parameters() {
                let Some(full) = p.name() else { continue };
                let Some(name) = setting_name(full, &prefix) else {
                    tracing::debug!(parameter = full, "not a setting: skipped");
                    continue;
                };
                if p.r#type() == Some(&ParameterType::SecureString) {
                    // Undecrypted it is noise; decrypted it does not belong in settings.
                    tracing::warn!(
                        parameter = full,
                        "a SecureString among the settings: skipped"
                    );
                    continue;
                }
                pairs.push((name.to_owned(), p.value().unwrap_or_default().to_owned()));
            }
        }
        Ok(pairs)
    }
}

/// [`Secrets`] from SSM SecureString parameters, each cached for a TTL.
pub struct SsmSecrets {
    client: Client,
    cache: Mutex<HashMap<String, (String, Instant)>>,
    /// Held while a parameter is read: a caller that finds the cache empty
    /// while another reads waits for that read (ingest's first event for the
    /// one its cold start began) instead of making a second call.
    reading: tokio::sync::Mutex<()>,
    ttl: Duration,
}

impl std::fmt::Debug for SsmSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Names only: values are never printed.
        let names: Vec<String> = self
            .cache
            .lock()
            .map(|c| c.keys().cloned().collect())
            .unwrap_or_default();
        f.debug_struct("SsmSecrets")
            .field("cached", &names)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl SsmSecrets {
    /// Secrets with the default TTL of [`SECRET_TTL`].
    pub fn new(client: Client) -> SsmSecrets {
        SsmSecrets::with_ttl(client, SECRET_TTL)
    }

    pub fn with_ttl(client: Client, ttl: Duration) -> SsmSecrets {
        SsmSecrets {
            client,
            cache: Mutex::new(HashMap::new()),
            reading: tokio::sync::Mutex::new(()),
            ttl,
        }
    }

    fn cached(&self, name: &str) -> Option<String> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .get(name)
            .filter(|(_, at)| at.elapsed() < self.ttl)
            .map(|(value, _)| value.clone())
    }
}

#[async_trait]
impl Secrets for SsmSecrets {
    async fn get(&self, name: &str) -> Result<String, PortError> {
        if let Some(value) = self.cached(name) {
            return Ok(value);
        }
        let _reading = self.reading.lock().await;
        if let Some(value) = self.cached(name) {
            return Ok(value);
        }
        let got = self
            .client
            .get_parameter()
            .name(name)
            .with_decryption(true)
            .send()
            .await;
        let Ok(out) = expecting(SERVICE, "GetParameter", "ParameterNotFound", got)? else {
            return Err(PortError::refused(
                SERVICE,
                format!("no parameter named {name}"),
            ));
        };
        let value = out
            .parameter()
            .and_then(|p| p.value())
            .ok_or_else(|| PortError::refused(SERVICE, format!("parameter {name} has no value")))?
            .to_owned();
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.to_owned(), (value.clone(), Instant::now()));
        tracing::debug!(parameter = name, "secret read");
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_direct_children_of_the_path_are_settings() {
        let p = "/myao/prod/";
        assert_eq!(
            setting_name("/myao/prod/min_wait_seconds", p),
            Some("min_wait_seconds")
        );
        assert_eq!(setting_name("/myao/prod/secrets/slack_bot_token", p), None);
        assert_eq!(setting_name("/myao/production/x", p), None);
        assert_eq!(setting_name("/myao/prod/", p), None);
    }

    #[test]
    fn the_path_is_normalised() {
        let conf = aws_sdk_ssm::Config::builder()
            .behavior_version(aws_sdk_ssm::config::BehaviorVersion::latest())
            .build();
        let source = |path: &str| SsmSettingsSource {
            client: Client::from_conf(conf.clone()),
            path: path.to_owned(),
        };
        for path in ["/myao/prod", "/myao/prod/", "myao/prod"] {
            assert_eq!(
                source(path).path_and_prefix(),
                ("/myao/prod".to_owned(), "/myao/prod/".to_owned())
            );
        }
        assert_eq!(
            source("/").path_and_prefix(),
            ("/".to_owned(), "/".to_owned())
        );
    }
}
