//! The job board: EventBridge Scheduler's and SQS's twin in one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::ports::{Clock, PortError, Queue, ScheduledJob, Scheduler, MAX_QUEUE_DELAY_SECONDS};
use crate::schedule::ScheduleName;
use myao_domain::{Job, TeamId, TeamJob};

use super::lock::lock;

#[derive(Debug, Default)]
struct Board {
    named: HashMap<ScheduleName, (DateTime<Utc>, u64, TeamJob)>,
    queued: Vec<(DateTime<Utc>, u64, TeamJob)>,
    seq: u64,
    scheduler_calls: u64,
    queue_calls: u64,
    fail_scheduler: bool,
}

/// Pending jobs in process: the twin of both EventBridge Scheduler (named,
/// upsert replaces) and SQS (anonymous, with a delay). Whoever drives it —
/// a test, the replay's virtual clock, or [`JobBoard::run`] in real time —
/// takes the due jobs and runs them. A team's view of it
/// ([`Scheduler::for_team`]) puts that team's jobs on the same board, with
/// their team and under their team's names.
pub struct JobBoard {
    clock: Arc<dyn Clock>,
    board: Arc<Mutex<Board>>,
    wake: Arc<tokio::sync::Notify>,
    /// Whose jobs it makes: a team's, or (`None`) the stack's own.
    team: Option<TeamId>,
}

impl JobBoard {
    pub fn new(clock: Arc<dyn Clock>) -> JobBoard {
        JobBoard {
            clock,
            board: Arc::default(),
            wake: Arc::default(),
            team: None,
        }
    }

    /// The same board, making `team`'s jobs.
    pub fn for_team(&self, team: &TeamId) -> JobBoard {
        JobBoard {
            clock: self.clock.clone(),
            board: self.board.clone(),
            wake: self.wake.clone(),
            team: Some(team.clone()),
        }
    }

    /// `job` as this board carries it: with its team.
    fn carried(&self, job: &Job) -> TeamJob {
        TeamJob {
            team: self.team.clone(),
            job: job.clone(),
        }
    }

    /// `name` in this board's team's part of the names.
    fn named(&self, name: &ScheduleName) -> ScheduleName {
        match &self.team {
            Some(team) => name.for_team(team),
            None => name.clone(),
        }
    }

    /// Makes every later scheduler call fail as unavailable (to test failure paths).
    pub fn fail_scheduler(&self, fail: bool) {
        lock(&self.board).fail_scheduler = fail;
    }

    /// Calls received by the scheduler side and by the queue side.
    pub fn call_counts(&self) -> (u64, u64) {
        let b = lock(&self.board);
        (b.scheduler_calls, b.queue_calls)
    }

    /// The jobs sent to the queue and still pending, in send order.
    pub fn queued(&self) -> Vec<(DateTime<Utc>, Job)> {
        let b = lock(&self.board);
        let mut v: Vec<_> = b
            .queued
            .iter()
            .map(|(at, seq, j)| (*at, *seq, j.job.clone()))
            .collect();
        v.sort_by_key(|(_, seq, _)| *seq);
        v.into_iter().map(|(at, _, j)| (at, j)).collect()
    }

    /// The named jobs still pending.
    pub fn scheduled(&self) -> Vec<ScheduledJob> {
        let b = lock(&self.board);
        let mut v: Vec<_> = b
            .named
            .iter()
            .map(|(name, (at, _, carried))| ScheduledJob {
                name: name.clone(),
                at: *at,
                job: carried.job.clone(),
            })
            .collect();
        v.sort_by(|a, b| (a.at, &a.name).cmp(&(b.at, &b.name)));
        v
    }

    /// When the next job falls due.
    pub fn next_due(&self) -> Option<DateTime<Utc>> {
        let b = lock(&self.board);
        b.named
            .values()
            .map(|(at, _, _)| *at)
            .chain(b.queued.iter().map(|(at, _, _)| *at))
            .min()
    }

    /// Removes and returns the queued jobs (not the named ones) that
    /// `wanted` picks, however late they are due, in due order.
    pub fn take_queued(&self, wanted: impl Fn(&Job) -> bool) -> Vec<Job> {
        let mut b = lock(&self.board);
        let (mut taken, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut b.queued)
            .into_iter()
            .partition(|(_, _, carried)| wanted(&carried.job));
        b.queued = kept;
        taken.sort_by_key(|(at, seq, _)| (*at, *seq));
        taken.into_iter().map(|(_, _, j)| j.job).collect()
    }

    /// Removes and returns the jobs due at or before `now`, each with its
    /// team, in due order (ties in the order they were made).
    pub fn take_due(&self, now: DateTime<Utc>) -> Vec<TeamJob> {
        let mut b = lock(&self.board);
        let mut due: Vec<(DateTime<Utc>, u64, TeamJob)> = Vec::new();
        let names: Vec<ScheduleName> = b
            .named
            .iter()
            .filter(|(_, (at, _, _))| *at <= now)
            .map(|(n, _)| n.clone())
            .collect();
        for n in names {
            if let Some(entry) = b.named.remove(&n) {
                due.push(entry);
            }
        }
        let (now_due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut b.queued)
            .into_iter()
            .partition(|(at, _, _)| *at <= now);
        b.queued = later;
        due.extend(now_due);
        due.sort_by_key(|(at, seq, _)| (*at, *seq));
        due.into_iter().map(|(_, _, j)| j).collect()
    }

    /// Runs due jobs in real time until `shutdown` resolves: sleeps until
    /// the next due job, or until a new job is added.
    pub async fn run<F, Fut>(
        self: Arc<Self>,
        dispatch: F,
        shutdown: impl std::future::Future<Output = ()>,
    ) where
        F: Fn(TeamJob) -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        tokio::pin!(shutdown);
        loop {
            for job in self.take_due(self.clock.now()) {
                dispatch(job).await;
            }
            let wait = match self.next_due() {
                Some(at) => (at - self.clock.now()).to_std().unwrap_or_default(),
                None => std::time::Duration::from_secs(3600),
            };
            tokio::select! {
                _ = &mut shutdown => return,
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }
}

#[async_trait]
impl Scheduler for JobBoard {
    async fn upsert(
        &self,
        name: &ScheduleName,
        at: DateTime<Utc>,
        job: &Job,
    ) -> Result<(), PortError> {
        {
            let mut b = lock(&self.board);
            b.scheduler_calls += 1;
            if b.fail_scheduler {
                return Err(PortError::unavailable("scheduler", "injected failure"));
            }
            b.seq += 1;
            let seq = b.seq;
            b.named
                .insert(self.named(name), (at, seq, self.carried(job)));
        }
        self.wake.notify_one();
        Ok(())
    }

    fn for_team(&self, team: &TeamId) -> Arc<dyn Scheduler> {
        Arc::new(JobBoard::for_team(self, team))
    }

    async fn cancel(&self, name: &ScheduleName) -> Result<(), PortError> {
        let mut b = lock(&self.board);
        b.scheduler_calls += 1;
        b.named.remove(&self.named(name));
        Ok(())
    }

    async fn get(&self, name: &ScheduleName) -> Result<Option<ScheduledJob>, PortError> {
        let b = lock(&self.board);
        Ok(b.named
            .get(&self.named(name))
            .map(|(at, _, carried)| ScheduledJob {
                name: name.clone(),
                at: *at,
                job: carried.job.clone(),
            }))
    }
}

impl JobBoard {
    /// Puts `job` on the board's queue, due in `delay_seconds`.
    fn put(&self, job: &Job, delay_seconds: u32) {
        {
            let mut b = lock(&self.board);
            b.queue_calls += 1;
            b.seq += 1;
            let seq = b.seq;
            let at = self.clock.now() + chrono::Duration::seconds(i64::from(delay_seconds));
            b.queued.push((at, seq, self.carried(job)));
        }
        self.wake.notify_one();
    }
}

#[async_trait]
impl Queue for JobBoard {
    fn for_team(&self, team: &TeamId) -> Arc<dyn Queue> {
        Arc::new(JobBoard::for_team(self, team))
    }

    async fn send(&self, job: &Job, delay_seconds: u32) -> Result<(), PortError> {
        if delay_seconds > MAX_QUEUE_DELAY_SECONDS {
            return Err(PortError::refused(
                "queue",
                format!("delay {delay_seconds} s is over {MAX_QUEUE_DELAY_SECONDS} s"),
            ));
        }
        self.put(job, delay_seconds);
        Ok(())
    }

    /// The board has no deliveries to make visible again: the job is put
    /// back on it, due in `delay_seconds` (any delay: nothing caps it here).
    async fn redeliver(
        &self,
        job: &Job,
        _receipt: Option<&str>,
        delay_seconds: u32,
    ) -> Result<(), PortError> {
        self.put(job, delay_seconds);
        Ok(())
    }
}
