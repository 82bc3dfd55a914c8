//! The time an invocation must be done by, carried to the LLM and Slack
//! adapters so that they size each attempt to the time left and stop
//! retrying in time, instead of being killed mid-call by Lambda.
//!
//! A [`Deadline`] is a monotonic [`tokio::time::Instant`], not a time of the
//! injected [`Clock`](crate::ports::Clock): it bounds the real time spent
//! waiting on the network, which the injected clock does not measure (a
//! test's `ManualClock` stands still while a stub hangs, a replay's virtual
//! clock is months behind). Lambda's deadline (epoch milliseconds of the
//! system clock) is turned into one once, at the edge, against that same
//! system clock: [`Deadline::from_epoch_millis`]. A tokio instant also
//! follows `tokio::time::pause` in tests.
//!
//! It travels as a task-local set around a job ([`Deadline::scope`]), so no
//! port changes its signature: an adapter asks [`CallBudget::attempt_timeout`].
//! Outside a scope there is no deadline, and the adapters keep their
//! configured timeouts and retries.

use std::future::Future;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

use myao_domain::settings::{
    JUDGMENT_FUNCTION_TIMEOUT_SECONDS, MEMORY_FUNCTION_TIMEOUT_SECONDS,
    RESPONSE_FUNCTION_TIMEOUT_SECONDS,
};
use myao_domain::JobKind;

tokio::task_local! {
    static CURRENT: Deadline;
}

/// The instant by which an invocation must be done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Deadline(Instant);

impl Deadline {
    pub fn at(instant: Instant) -> Deadline {
        Deadline(instant)
    }

    /// `budget` from now.
    pub fn after(budget: Duration) -> Deadline {
        Deadline(Instant::now() + budget)
    }

    /// Lambda's `Context::deadline` (epoch milliseconds). `None` for 0, what
    /// a `Context::default()` holds (tests, a local invocation): no deadline
    /// is known.
    pub fn from_epoch_millis(millis: u64) -> Option<Deadline> {
        Deadline::from_epoch_millis_at(millis, SystemTime::now(), Instant::now())
    }

    /// The same, with the system time and the instant of "now" given.
    pub fn from_epoch_millis_at(
        millis: u64,
        wall_now: SystemTime,
        now: Instant,
    ) -> Option<Deadline> {
        if millis == 0 {
            return None;
        }
        let at = UNIX_EPOCH + Duration::from_millis(millis);
        // A deadline already past leaves nothing.
        let left = at.duration_since(wall_now).unwrap_or(Duration::ZERO);
        Some(Deadline(now + left))
    }

    pub fn instant(self) -> Instant {
        self.0
    }

    /// The time left at `now` (zero once past).
    pub fn remaining_at(self, now: Instant) -> Duration {
        self.0.saturating_duration_since(now)
    }

    /// The time left now.
    pub fn remaining(self) -> Duration {
        self.remaining_at(Instant::now())
    }

    /// The deadline in force in this task, if any.
    pub fn current() -> Option<Deadline> {
        CURRENT.try_with(|d| *d).ok()
    }

    /// Runs `work` with `deadline` in force (`None`: whatever is in force
    /// already). Inside another scope, the earlier of the two wins: a job
    /// cannot outlive its invocation.
    pub async fn scope<F: Future>(deadline: Option<Deadline>, work: F) -> F::Output {
        let effective = match (deadline, Deadline::current()) {
            (Some(d), Some(outer)) => Some(d.min(outer)),
            (d, outer) => d.or(outer),
        };
        match effective {
            Some(d) => CURRENT.scope(d, work).await,
            None => work.await,
        }
    }
}

/// The time a job of `kind` gets in the local mode: its Lambda function's
/// timeout, so that it is cut where production would cut it.
pub fn job_budget(kind: JobKind) -> Duration {
    let seconds = match kind {
        JobKind::Judgment | JobKind::Proactive => JUDGMENT_FUNCTION_TIMEOUT_SECONDS,
        JobKind::Response => RESPONSE_FUNCTION_TIMEOUT_SECONDS,
        JobKind::ThreadMemory
        | JobKind::MemorySweep
        | JobKind::ChannelMemory
        | JobKind::WorkspaceMemory
        | JobKind::Forget
        | JobKind::Purge => MEMORY_FUNCTION_TIMEOUT_SECONDS,
    };
    Duration::from_secs(u64::from(seconds))
}

/// How one kind of outside call spends the time left before the deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallBudget {
    /// Kept back for what follows the call: reporting a failure in time,
    /// giving a claim back, the next call.
    pub margin: Duration,
    /// The shortest attempt worth starting: one cut shorter could not
    /// finish, so it is not started.
    pub min_attempt: Duration,
}

impl CallBudget {
    /// The next attempt's timeout under the deadline in force: `limit` (the
    /// configured timeout), cut to the time left less the margin. `None`
    /// when that is shorter than `min_attempt` (or `limit`, if shorter): the
    /// attempt is not started.
    pub fn attempt_timeout(&self, limit: Duration) -> Option<Duration> {
        self.attempt_timeout_before(Deadline::current(), Instant::now(), limit)
    }

    /// The same for a given deadline and time.
    pub fn attempt_timeout_before(
        &self,
        deadline: Option<Deadline>,
        now: Instant,
        limit: Duration,
    ) -> Option<Duration> {
        let Some(deadline) = deadline else {
            return Some(limit);
        };
        let room = deadline.remaining_at(now).saturating_sub(self.margin);
        let timeout = limit.min(room);
        (!timeout.is_zero() && timeout >= self.min_attempt.min(limit)).then_some(timeout)
    }

    /// Whether waiting `wait` before a retry still leaves time for an
    /// attempt after it, under the deadline in force.
    pub fn can_wait(&self, wait: Duration) -> bool {
        self.can_wait_before(Deadline::current(), Instant::now(), wait)
    }

    /// The same for a given deadline and time.
    pub fn can_wait_before(
        &self,
        deadline: Option<Deadline>,
        now: Instant,
        wait: Duration,
    ) -> bool {
        deadline.is_none_or(|d| {
            d.remaining_at(now) >= wait.saturating_add(self.margin + self.min_attempt)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUDGET: CallBudget = CallBudget {
        margin: Duration::from_secs(2),
        min_attempt: Duration::from_secs(1),
    };

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn without_a_deadline_the_configured_timeout_and_waits_stand() {
        let now = Instant::now();
        assert_eq!(
            BUDGET.attempt_timeout_before(None, now, secs(30)),
            Some(secs(30))
        );
        assert!(BUDGET.can_wait_before(None, now, secs(3600)));
    }

    #[test]
    fn an_attempt_is_cut_to_the_time_left_less_the_margin() {
        let now = Instant::now();
        let deadline = Some(Deadline::at(now + secs(10)));
        // Plenty of time: the configured timeout.
        assert_eq!(
            BUDGET.attempt_timeout_before(deadline, now, secs(5)),
            Some(secs(5))
        );
        // 10 s left, 2 s kept back: 8 s.
        assert_eq!(
            BUDGET.attempt_timeout_before(deadline, now, secs(30)),
            Some(secs(8))
        );
        // 2.5 s left: 0.5 s, shorter than the shortest useful attempt.
        assert_eq!(
            BUDGET.attempt_timeout_before(deadline, now + Duration::from_millis(7_500), secs(30)),
            None
        );
        // Exactly the shortest attempt left: started.
        assert_eq!(
            BUDGET.attempt_timeout_before(deadline, now + secs(7), secs(30)),
            Some(secs(1))
        );
        // Past the deadline: nothing.
        assert_eq!(
            BUDGET.attempt_timeout_before(deadline, now + secs(60), secs(30)),
            None
        );
    }

    #[test]
    fn a_configured_timeout_shorter_than_the_shortest_attempt_still_runs() {
        let now = Instant::now();
        let deadline = Some(Deadline::at(now + secs(10)));
        let short = Duration::from_millis(200);
        assert_eq!(
            BUDGET.attempt_timeout_before(deadline, now, short),
            Some(short)
        );
    }

    #[test]
    fn a_wait_is_allowed_only_with_an_attempt_after_it() {
        let now = Instant::now();
        let deadline = Some(Deadline::at(now + secs(10)));
        assert!(BUDGET.can_wait_before(deadline, now, secs(7)));
        assert!(!BUDGET.can_wait_before(deadline, now, Duration::from_millis(7_001)));
        assert!(!BUDGET.can_wait_before(deadline, now + secs(9), Duration::ZERO));
    }

    #[test]
    fn lambda_deadlines_are_read_against_the_system_clock() {
        let now = Instant::now();
        let wall = UNIX_EPOCH + Duration::from_millis(1_767_600_000_000);
        let d = Deadline::from_epoch_millis_at(1_767_600_005_500, wall, now).expect("deadline");
        assert_eq!(d.remaining_at(now), Duration::from_millis(5_500));
        let past = Deadline::from_epoch_millis_at(1_767_599_000_000, wall, now).expect("deadline");
        assert_eq!(past.remaining_at(now), Duration::ZERO);
        assert_eq!(Deadline::from_epoch_millis_at(0, wall, now), None);
    }

    #[tokio::test]
    async fn a_scope_carries_the_deadline_and_the_earlier_one_wins() {
        assert_eq!(Deadline::current(), None);
        let outer = Deadline::after(secs(100));
        let inner = Deadline::after(secs(200));
        let seen = Deadline::scope(Some(outer), async {
            let here = Deadline::current();
            let nested = Deadline::scope(Some(inner), async { Deadline::current() }).await;
            let kept = Deadline::scope(None, async { Deadline::current() }).await;
            (here, nested, kept)
        })
        .await;
        assert_eq!(seen, (Some(outer), Some(outer), Some(outer)));
        assert_eq!(
            Deadline::scope(None, async { Deadline::current() }).await,
            None
        );
    }

    #[test]
    fn local_jobs_get_their_functions_timeout() {
        assert_eq!(
            job_budget(JobKind::Response),
            secs(u64::from(RESPONSE_FUNCTION_TIMEOUT_SECONDS))
        );
        assert_eq!(
            job_budget(JobKind::MemorySweep),
            secs(u64::from(MEMORY_FUNCTION_TIMEOUT_SECONDS))
        );
    }
}
