//! `myao redrive`: sends the jobs kept in the failure queues back to the
//! queue their function runs them from, once the cause is fixed.
//!
//! Each message is received (and so hidden from other readers), sent to its
//! job's queue (response or memory), and deleted only once the send
//! succeeded: a failure at any step loses nothing. A dead-letter message is
//! the job itself; an `AsyncFailureQueue` message is Lambda's record of a
//! failed invocation, whose `requestPayload` is the job. A judgment job has
//! no queue (it is always scheduled, and stale by the time it is redriven),
//! and a message that is not a job is not ours to move: both stay where they
//! are. Only message ids and job kinds are reported, never a message's body.

use std::collections::HashSet;
use std::fmt;

use aws_sdk_sqs::types::Message;
use myao_domain::{Job, JobKind};
use serde_json::Value;

use crate::doctor::aws_error;
use crate::stack::{QueueId, Stack};

/// How long a received message stays hidden while the run holds it. Longer
/// than any run: a message seen once is not received again in the same run.
const HOLD_SECONDS: i32 = 600;
/// The longest a receive waits for a message: a short wait, so that an
/// empty queue is found empty on every SQS server.
const WAIT_SECONDS: i32 = 1;

/// What became of one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    /// Sent to this queue and deleted from its failure queue.
    Moved(QueueId),
    /// A dry run: it would be sent to this queue.
    WouldMove(QueueId),
    /// Left where it is, and why.
    Left(Left),
    /// The move failed, and how; the message is still in a queue.
    Failed(MoveError),
}

/// Why a message is not ours to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    /// Not a job.
    NotAJob,
    /// A judgment job, which has no queue.
    Judgment,
}

impl fmt::Display for Left {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Left::NotAJob => "not ours to move: read it in the SQS console",
            Left::Judgment => {
                "a judgment is scheduled, never queued: the next message schedules a new one"
            }
        })
    }
}

/// Why a move failed. `error` is the AWS SDK's error as [`aws_error`]
/// tells it (the SDK's error itself is neither `Clone` nor `Eq`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// The stack names no URL for the queue it is in or is to go to, or
    /// the message came without a receipt handle.
    #[error("its queue is unknown")]
    UnknownQueue,
    #[error("not sent to {}: {error}", to.logical_id())]
    NotSent { to: QueueId, error: String },
    #[error(
        "sent to {}, but not deleted (it may run twice if redriven again): {error}",
        to.logical_id()
    )]
    NotDeleted { to: QueueId, error: String },
}

/// A failure queue that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot read {}: {error}", from.logical_id())]
pub struct ReadError {
    pub from: QueueId,
    /// The AWS SDK's error as [`aws_error`] tells it.
    pub error: String,
}

/// One message of a failure queue: its id, its job's kind, its fate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub message_id: String,
    pub from: QueueId,
    pub kind: Option<JobKind>,
    pub fate: Fate,
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.kind.map(JobKind::as_str).unwrap_or("not a job");
        let from = self.from.logical_id();
        match &self.fate {
            Fate::Moved(to) => write!(
                f,
                "moved       {} {kind}: {from} -> {}",
                self.message_id,
                to.logical_id()
            ),
            Fate::WouldMove(to) => write!(
                f,
                "would move  {} {kind}: {from} -> {}",
                self.message_id,
                to.logical_id()
            ),
            Fate::Left(why) => write!(
                f,
                "left        {} {kind}: in {from} ({why})",
                self.message_id
            ),
            Fate::Failed(why) => write!(
                f,
                "FAILED      {} {kind}: in {from}: {why}",
                self.message_id
            ),
        }
    }
}

/// What a run did: one entry per message, and the queues it could not read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub entries: Vec<Entry>,
    pub errors: Vec<ReadError>,
}

impl Report {
    /// How many entries met a fate like `matches`.
    pub fn count(&self, matches: impl Fn(&Fate) -> bool) -> usize {
        self.entries.iter().filter(|e| matches(&e.fate)).count()
    }

    /// Whether every message was moved or left as it should be.
    pub fn succeeded(&self) -> bool {
        self.errors.is_empty() && self.count(|f| matches!(f, Fate::Failed(_))) == 0
    }

    /// Why the run failed, if it did: in a dry run nothing was to be
    /// moved, so only a queue that could not be read fails it.
    pub fn failure(&self, dry_run: bool) -> Option<&'static str> {
        match (self.succeeded(), dry_run) {
            (true, _) => None,
            (false, true) => {
                Some("some queues could not be read (FAILED above); nothing was changed")
            }
            (false, false) => {
                Some("some jobs were not moved: run it again once the cause is fixed")
            }
        }
    }

    /// The closing line.
    pub fn summary(&self, dry_run: bool) -> String {
        let left = self.count(|f| matches!(f, Fate::Left(_)));
        let failed = self.count(|f| matches!(f, Fate::Failed(_))) + self.errors.len();
        if dry_run {
            let moving = self.count(|f| matches!(f, Fate::WouldMove(_)));
            return format!(
                "dry run: {moving} job(s) would be moved, {left} left; nothing was changed"
            );
        }
        let moved = self.count(|f| matches!(f, Fate::Moved(_)));
        format!("{moved} job(s) moved, {left} left, {failed} failed")
    }
}

/// A redrive that cannot start: it does not know a queue.
#[derive(Debug, thiserror::Error)]
#[error(
    "no {0} in the stack's description: deploy this version for the output, or give --set {0}=URL"
)]
pub struct MissingQueue(&'static str);

/// The job a failure queue's message carries, and the body to send it
/// with: the message's own body, or for a Lambda failure record its
/// `requestPayload`.
pub fn job_of(body: &str) -> Option<(Job, String)> {
    let value: Value = serde_json::from_str(body).ok()?;
    match value.get("requestPayload") {
        Some(payload) => {
            let job = serde_json::from_value(payload.clone()).ok()?;
            Some((job, payload.to_string()))
        }
        None => Some((serde_json::from_value(value).ok()?, body.to_owned())),
    }
}

/// Moves every job of the failure queues to its queue, or with `dry_run`
/// lists what would move and moves nothing.
pub async fn run(
    sqs: &aws_sdk_sqs::Client,
    stack: &Stack,
    dry_run: bool,
) -> Result<Report, MissingQueue> {
    for queue in QueueId::ALL {
        stack.queue_url(queue).ok_or(MissingQueue(queue.output()))?;
    }
    let mut report = Report::default();
    for from in QueueId::FAILURES {
        drain(sqs, stack, from, dry_run, &mut report).await;
    }
    Ok(report)
}

/// Reads `from` until it is empty, handling each message once; what stays
/// is made visible again at the end.
async fn drain(
    sqs: &aws_sdk_sqs::Client,
    stack: &Stack,
    from: QueueId,
    dry_run: bool,
    report: &mut Report,
) {
    let Some(url) = stack.queue_url(from) else {
        return;
    };
    let mut seen = HashSet::new();
    let mut held = Vec::new();
    loop {
        let received = sqs
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(10)
            .visibility_timeout(HOLD_SECONDS)
            .wait_time_seconds(WAIT_SECONDS)
            .send()
            .await;
        let messages = match received {
            Ok(out) => out.messages.unwrap_or_default(),
            Err(e) => {
                report.errors.push(ReadError {
                    from,
                    error: aws_error(&e),
                });
                break;
            }
        };
        let mut new = 0;
        for message in messages {
            let (Some(id), Some(receipt)) =
                (message.message_id.clone(), message.receipt_handle.clone())
            else {
                continue;
            };
            if !seen.insert(id) {
                held.push(receipt);
                continue;
            }
            new += 1;
            let entry = handle(sqs, stack, from, &message, dry_run).await;
            if !matches!(entry.fate, Fate::Moved(_)) {
                held.push(receipt);
            }
            report.entries.push(entry);
        }
        if new == 0 {
            break;
        }
    }
    // Back in view at once, rather than when the hold ends.
    for receipt in held {
        let released = sqs
            .change_message_visibility()
            .queue_url(url)
            .receipt_handle(receipt)
            .visibility_timeout(0)
            .send()
            .await;
        if let Err(e) = released {
            tracing::debug!(error = %aws_error(&e), "a message stays hidden until its hold ends");
        }
    }
}

/// Moves one message (or, in a dry run, says where it would go).
async fn handle(
    sqs: &aws_sdk_sqs::Client,
    stack: &Stack,
    from: QueueId,
    message: &Message,
    dry_run: bool,
) -> Entry {
    let mut entry = Entry {
        message_id: message.message_id.clone().unwrap_or_default(),
        from,
        kind: None,
        fate: Fate::Left(Left::NotAJob),
    };
    let Some((job, body)) = message.body.as_deref().and_then(job_of) else {
        return entry;
    };
    entry.kind = Some(job.kind());
    let Some(to) = QueueId::for_job(job.kind()) else {
        entry.fate = Fate::Left(Left::Judgment);
        return entry;
    };
    let (Some(to_url), Some(from_url), Some(receipt)) = (
        stack.queue_url(to),
        stack.queue_url(from),
        message.receipt_handle.as_deref(),
    ) else {
        entry.fate = Fate::Failed(MoveError::UnknownQueue);
        return entry;
    };
    if dry_run {
        entry.fate = Fate::WouldMove(to);
        return entry;
    }
    if let Err(e) = sqs
        .send_message()
        .queue_url(to_url)
        .message_body(body)
        .send()
        .await
    {
        entry.fate = Fate::Failed(MoveError::NotSent {
            to,
            error: aws_error(&e),
        });
        return entry;
    }
    entry.fate = match sqs
        .delete_message()
        .queue_url(from_url)
        .receipt_handle(receipt)
        .send()
        .await
    {
        Ok(_) => Fate::Moved(to),
        Err(e) => Fate::Failed(MoveError::NotDeleted {
            to,
            error: aws_error(&e),
        }),
    };
    entry
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_is_read_from_a_dead_letter_body_or_a_failure_record() {
        let body = r#"{"kind":"response","channel":"C1","thread_ts":null,"newest_ts":"1.000100","mention":true}"#;
        let (job, sent) = job_of(body).unwrap();
        assert_eq!(job.kind(), JobKind::Response);
        assert_eq!(sent, body, "a dead letter is sent back as it was");

        let record = r#"{"version":"1.0","requestContext":{"condition":"RetriesExhausted"},
            "requestPayload":{"kind":"memory_sweep"},"responsePayload":{"errorMessage":"boom"}}"#;
        let (job, sent) = job_of(record).unwrap();
        assert_eq!(job, Job::MemorySweep);
        assert_eq!(
            serde_json::from_str::<Job>(&sent).unwrap(),
            Job::MemorySweep
        );

        for not_a_job in [
            "",
            "hello",
            "{}",
            r#"{"kind":"dance"}"#,
            r#"{"requestPayload":1}"#,
        ] {
            assert!(job_of(not_a_job).is_none(), "{not_a_job}");
        }
    }

    #[test]
    fn entries_show_ids_and_kinds_and_the_summary_counts() {
        let entry = |fate| Entry {
            message_id: "m-1".into(),
            from: QueueId::ResponseDeadLetter,
            kind: Some(JobKind::Response),
            fate,
        };
        assert_eq!(
            entry(Fate::Moved(QueueId::Response)).to_string(),
            "moved       m-1 response: ResponseDeadLetterQueue -> ResponseQueue"
        );
        let report = Report {
            entries: vec![
                entry(Fate::WouldMove(QueueId::Response)),
                entry(Fate::Left(Left::Judgment)),
            ],
            errors: vec![],
        };
        assert!(report.succeeded());
        assert_eq!(
            report.summary(true),
            "dry run: 1 job(s) would be moved, 1 left; nothing was changed"
        );
        let failed = Report {
            entries: vec![entry(Fate::Failed(MoveError::UnknownQueue))],
            errors: vec![],
        };
        assert!(!failed.succeeded());
        let not_deleted = entry(Fate::Failed(MoveError::NotDeleted {
            to: QueueId::Response,
            error: "DeleteMessage: AccessDenied".into(),
        }));
        assert_eq!(
            not_deleted.to_string(),
            "FAILED      m-1 response: in ResponseDeadLetterQueue: sent to ResponseQueue, \
             but not deleted (it may run twice if redriven again): DeleteMessage: AccessDenied"
        );
        assert_eq!(failed.summary(false), "0 job(s) moved, 0 left, 1 failed");
        assert_eq!(report.failure(true), None);
        // A dry run moves nothing by design: never "not moved".
        let unread = Report {
            entries: vec![],
            errors: vec![ReadError {
                from: QueueId::MemoryDeadLetter,
                error: "ReceiveMessage: AccessDenied".into(),
            }],
        };
        assert_eq!(
            unread.errors[0].to_string(),
            "cannot read MemoryDeadLetterQueue: ReceiveMessage: AccessDenied"
        );
        let dry = unread.failure(true).expect("failed");
        assert!(
            dry.contains("could not be read") && !dry.contains("not moved"),
            "{dry}"
        );
        assert!(unread
            .failure(false)
            .is_some_and(|f| f.contains("not moved")));
    }
}
