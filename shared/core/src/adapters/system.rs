//! The real clock and random source, and simple fixed ones.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::ports::{Clock, PortError, RandomSource, Secrets, SettingsProvider, Unguessable};
use myao_domain::Settings;

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when told to: tests and the replay's virtual time.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<DateTime<Utc>>,
}

impl ManualClock {
    pub fn new(start: DateTime<Utc>) -> ManualClock {
        ManualClock {
            now: Mutex::new(start),
        }
    }

    /// Moves the clock to `at` (never backwards).
    pub fn set(&self, at: DateTime<Utc>) {
        let mut now = self.now.lock().unwrap_or_else(|p| p.into_inner());
        if at > *now {
            *now = at;
        }
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: chrono::Duration) {
        let mut now = self.now.lock().unwrap_or_else(|p| p.into_inner());
        *now += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// SplitMix64: small, fast and good enough for jitter.
#[derive(Debug)]
pub struct SplitMix {
    state: AtomicU64,
}

impl SplitMix {
    /// A generator with a fixed seed: the same numbers every run.
    pub fn seeded(seed: u64) -> SplitMix {
        SplitMix {
            state: AtomicU64::new(seed),
        }
    }

    /// A generator seeded from the process's random hasher keys.
    pub fn from_entropy() -> SplitMix {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(Utc::now().timestamp_nanos_opt().unwrap_or_default() as u64);
        SplitMix::seeded(h.finish())
    }

    fn next_u64(&self) -> u64 {
        let mut z = self
            .state
            .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
            .wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

impl RandomSource for SplitMix {
    fn unit(&self) -> f64 {
        // 53 random bits make every f64 in [0, 1) on a 2^-53 grid.
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// [`Unguessable`] draws from std's hasher keys, which the process takes
/// from the operating system's random source: each draw is SipHash under
/// those secret keys of a fresh hasher's state, a counter and the time.
#[derive(Debug, Default)]
pub struct OsUnguessable {
    count: AtomicU64,
}

impl Unguessable for OsUnguessable {
    fn draws(&self) -> [u64; 2] {
        let draw = || {
            let mut h = RandomState::new().build_hasher();
            h.write_u64(self.count.fetch_add(1, Ordering::Relaxed));
            h.write_u64(Utc::now().timestamp_nanos_opt().unwrap_or_default() as u64);
            h.finish()
        };
        [draw(), draw()]
    }
}

/// The same draws every time: for tests of what uses [`Unguessable`].
#[derive(Debug, Clone, Copy)]
pub struct FixedDraws(pub [u64; 2]);

impl Unguessable for FixedDraws {
    fn draws(&self) -> [u64; 2] {
        self.0
    }
}

/// Always the same number: for tests that want an exact jitter.
#[derive(Debug, Clone, Copy)]
pub struct FixedRandom(pub f64);

impl RandomSource for FixedRandom {
    fn unit(&self) -> f64 {
        self.0
    }
}

/// Settings that never change (tests, and the local mode after loading).
#[derive(Debug, Clone)]
pub struct FixedSettings(pub Arc<Settings>);

impl FixedSettings {
    pub fn new(settings: Settings) -> FixedSettings {
        FixedSettings(Arc::new(settings))
    }
}

#[async_trait]
impl SettingsProvider for FixedSettings {
    /// The same settings: they have no teams' own.
    fn for_team(&self, _team: &myao_domain::TeamId) -> Arc<dyn SettingsProvider> {
        Arc::new(self.clone())
    }

    async fn current(&self) -> Result<Arc<Settings>, PortError> {
        Ok(self.0.clone())
    }
}

/// Secrets held in memory (the local mode reads them from its configuration).
#[derive(Clone, Default)]
pub struct StaticSecrets {
    values: std::collections::HashMap<String, String>,
}

impl std::fmt::Debug for StaticSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Names only: values are never printed.
        f.debug_struct("StaticSecrets")
            .field("names", &self.values.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl StaticSecrets {
    pub fn new() -> StaticSecrets {
        StaticSecrets::default()
    }

    pub fn with(mut self, name: &str, value: &str) -> StaticSecrets {
        self.values.insert(name.to_owned(), value.to_owned());
        self
    }
}

#[async_trait]
impl Secrets for StaticSecrets {
    async fn get(&self, name: &str) -> Result<String, PortError> {
        self.values
            .get(name)
            .cloned()
            .ok_or_else(|| PortError::refused("secrets", format!("no secret named {name}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_mix_is_repeatable_and_in_range() {
        let a = SplitMix::seeded(7);
        let b = SplitMix::seeded(7);
        for _ in 0..1000 {
            let x = a.unit();
            assert_eq!(x, b.unit());
            assert!((0.0..1.0).contains(&x));
        }
    }

    #[test]
    fn manual_clock_never_goes_back() {
        let t0 = DateTime::<Utc>::from_timestamp(1_000, 0).unwrap();
        let c = ManualClock::new(t0);
        c.set(DateTime::<Utc>::from_timestamp(500, 0).unwrap());
        assert_eq!(c.now(), t0);
        c.advance(chrono::Duration::seconds(5));
        assert_eq!(c.now().timestamp(), 1_005);
    }

    #[test]
    fn static_secrets_never_print_values() {
        let s = StaticSecrets::new().with("slack_bot_token", "bot-token-secret-value");
        assert!(!format!("{s:?}").contains("secret-value"));
    }
}
