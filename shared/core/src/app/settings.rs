//! Settings read from a source and cached in-process with a TTL, so that a
//! changed parameter takes effect within the TTL without a redeploy.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use tokio::sync::Mutex;

use crate::ports::{Clock, PortError, SettingsProvider, SettingsSource};
use myao_domain::{Settings, TeamId};

/// The default time a loaded set of settings is used before reloading.
pub const DEFAULT_TTL_SECONDS: i64 = 60;

struct Cached {
    settings: Arc<Settings>,
    loaded_at: DateTime<Utc>,
}

/// A [`SettingsProvider`] over a [`SettingsSource`] with a TTL cache. It
/// fails closed: until one load succeeded, every call is an error (the
/// invocation fails and is retried) rather than the defaults. After that, a
/// source that fails keeps the last good settings, logged, and is tried
/// again at the next expiry; a bad value is logged and ignored.
pub struct CachedSettings {
    source: Arc<dyn SettingsSource>,
    /// The stack's own source, which the teams' are layered over (the
    /// same as `source` for the stack's settings).
    stack: Arc<dyn SettingsSource>,
    clock: Arc<dyn Clock>,
    ttl: Duration,
    cached: Mutex<Option<Cached>>,
    /// Each team's, cached alike for the life of the process.
    teams: std::sync::Mutex<HashMap<TeamId, Arc<CachedSettings>>>,
}

/// A team's settings: the stack's pairs, then the team's own, which win
/// (a later value of a name replaces an earlier one).
struct Layered {
    stack: Arc<dyn SettingsSource>,
    team: Arc<dyn SettingsSource>,
}

#[async_trait]
impl SettingsSource for Layered {
    async fn load(&self) -> Result<Vec<(String, String)>, PortError> {
        let mut pairs = self.stack.load().await?;
        pairs.extend(self.team.load().await?);
        Ok(pairs)
    }
}

impl CachedSettings {
    pub fn new(
        source: Arc<dyn SettingsSource>,
        clock: Arc<dyn Clock>,
        ttl: Duration,
    ) -> CachedSettings {
        CachedSettings {
            stack: source.clone(),
            source,
            clock,
            ttl,
            cached: Mutex::new(None),
            teams: std::sync::Mutex::default(),
        }
    }

    async fn load(&self) -> Result<Arc<Settings>, PortError> {
        match self.source.load().await {
            Ok(pairs) => {
                let (settings, issues) =
                    Settings::from_pairs(pairs.iter().map(|(n, v)| (n.as_str(), v.as_str())));
                for issue in issues {
                    tracing::warn!(setting = %issue.name, problem = %issue.problem, "{issue}");
                }
                Ok(Arc::new(settings))
            }
            Err(error) => Err(error),
        }
    }
}

#[async_trait]
impl SettingsProvider for CachedSettings {
    fn for_team(&self, team: &TeamId) -> Arc<dyn SettingsProvider> {
        let mut teams = self.teams.lock().unwrap_or_else(|p| p.into_inner());
        let cached = teams.entry(team.clone()).or_insert_with(|| {
            let source: Arc<dyn SettingsSource> = match self.stack.for_team(team) {
                Some(own) => Arc::new(Layered {
                    stack: self.stack.clone(),
                    team: own,
                }),
                // No teams' settings where these come from: the stack's.
                None => self.stack.clone(),
            };
            let mut settings = CachedSettings::new(source, self.clock.clone(), self.ttl);
            // A team's settings, asked for another team, are that team's.
            settings.stack = self.stack.clone();
            Arc::new(settings)
        });
        cached.clone()
    }

    async fn current(&self) -> Result<Arc<Settings>, PortError> {
        let now = self.clock.now();
        let mut cached = self.cached.lock().await;
        if let Some(c) = cached.as_ref() {
            if now - c.loaded_at < self.ttl {
                return Ok(c.settings.clone());
            }
        }
        let settings = match (self.load().await, cached.as_ref()) {
            (Ok(s), _) => s,
            (Err(error), Some(last)) => {
                tracing::error!(%error, "could not reload settings; keeping the last good ones");
                last.settings.clone()
            }
            (Err(error), None) => {
                tracing::error!(%error, "settings never loaded: refusing to run on defaults");
                return Err(PortError::unavailable(
                    "settings",
                    format!("never loaded: {error}"),
                ));
            }
        };
        *cached = Some(Cached {
            settings: settings.clone(),
            loaded_at: now,
        });
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::system::ManualClock;
    use crate::ports::PortError;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex as StdMutex;

    struct Source {
        pairs: StdMutex<Result<Vec<(String, String)>, PortError>>,
        loads: AtomicUsize,
    }

    #[async_trait]
    impl SettingsSource for Source {
        async fn load(&self) -> Result<Vec<(String, String)>, PortError> {
            self.loads.fetch_add(1, Ordering::SeqCst);
            self.pairs.lock().unwrap().clone()
        }
    }

    fn set(source: &Source, value: Result<Vec<(String, String)>, PortError>) {
        *source.pairs.lock().unwrap() = value;
    }

    #[tokio::test]
    async fn a_changed_value_takes_effect_after_the_ttl_and_not_before() {
        let clock = Arc::new(ManualClock::new(
            DateTime::<Utc>::from_timestamp(0, 0).unwrap(),
        ));
        let source = Arc::new(Source {
            pairs: StdMutex::new(Ok(vec![("min_wait_seconds".into(), "100".into())])),
            loads: AtomicUsize::new(0),
        });
        let cache = CachedSettings::new(source.clone(), clock.clone(), Duration::seconds(60));
        assert_eq!(cache.current().await.unwrap().min_wait_seconds, 100);
        set(&source, Ok(vec![("min_wait_seconds".into(), "200".into())]));
        clock.advance(Duration::seconds(59));
        assert_eq!(
            cache.current().await.unwrap().min_wait_seconds,
            100,
            "cached within the TTL"
        );
        assert_eq!(source.loads.load(Ordering::SeqCst), 1);
        clock.advance(Duration::seconds(1));
        assert_eq!(
            cache.current().await.unwrap().min_wait_seconds,
            200,
            "reloaded after the TTL"
        );
    }

    #[tokio::test]
    async fn a_failing_source_fails_closed_until_loaded_then_keeps_the_last_good_settings() {
        let clock = Arc::new(ManualClock::new(
            DateTime::<Utc>::from_timestamp(0, 0).unwrap(),
        ));
        let source = Arc::new(Source {
            pairs: StdMutex::new(Err(PortError::unavailable("ssm", "down"))),
            loads: AtomicUsize::new(0),
        });
        let cache = CachedSettings::new(source.clone(), clock.clone(), Duration::seconds(60));
        let never = cache
            .current()
            .await
            .expect_err("no defaults before a load");
        assert!(never.is_retryable(), "the invocation fails and is retried");
        set(&source, Ok(vec![("jitter_ratio".into(), "0".into())]));
        clock.advance(Duration::seconds(60));
        assert_eq!(cache.current().await.unwrap().jitter_ratio, 0.0);
        set(&source, Err(PortError::unavailable("ssm", "down")));
        clock.advance(Duration::seconds(60));
        assert_eq!(
            cache.current().await.unwrap().jitter_ratio,
            0.0,
            "last good kept"
        );
    }

    #[tokio::test]
    async fn a_malformed_value_keeps_its_default() {
        let clock = Arc::new(ManualClock::new(
            DateTime::<Utc>::from_timestamp(0, 0).unwrap(),
        ));
        let source = Arc::new(Source {
            pairs: StdMutex::new(Ok(vec![
                ("min_wait_seconds".into(), "soon".into()),
                ("message_limit".into(), "5".into()),
            ])),
            loads: AtomicUsize::new(0),
        });
        let cache = CachedSettings::new(source, clock, Duration::seconds(60));
        let s = cache.current().await.unwrap();
        assert_eq!((s.min_wait_seconds, s.message_limit), (300, 5));
    }
}
