//! The queue on SQS: response jobs to the response function's queue, memory
//! jobs to the memory function's. Judgment jobs always wait minutes, so
//! they go through the scheduler and have no queue.

use std::sync::Arc;

use async_trait::async_trait;
use aws_sdk_sqs::Client;

use crate::errors::port_error;
use myao_core::ports::{PortError, Queue, MAX_QUEUE_DELAY_SECONDS};
use myao_domain::{Job, JobKind, TeamId, TeamJob};

const SERVICE: &str = "sqs";

/// Creates a standard queue (or finds the one of that name) and returns its URL.
pub async fn create_queue(client: &Client, name: &str) -> Result<String, PortError> {
    let out = client
        .create_queue()
        .queue_name(name)
        .send()
        .await
        .map_err(|e| port_error(SERVICE, "CreateQueue", e))?;
    out.queue_url
        .ok_or_else(|| PortError::refused(SERVICE, format!("CreateQueue {name}: no queue URL")))
}

/// [`Queue`] on SQS standard queues.
#[derive(Debug, Clone)]
pub struct SqsQueue {
    pub client: Client,
    /// Read by the response function.
    pub response_queue_url: String,
    /// Read by the memory function (`None`: memory jobs are refused).
    pub memory_queue_url: Option<String>,
    /// Whose jobs these are: `None`, the stack's own; a team's
    /// ([`Queue::for_team`]) with each message's body naming the team.
    pub team: Option<TeamId>,
}

impl SqsQueue {
    fn queue_url(&self, kind: JobKind) -> Result<&str, PortError> {
        match kind {
            JobKind::Response => Ok(&self.response_queue_url),
            JobKind::ThreadMemory
            | JobKind::MemorySweep
            | JobKind::ChannelMemory
            | JobKind::WorkspaceMemory
            | JobKind::Forget
            | JobKind::Purge => self
                .memory_queue_url
                .as_deref()
                .ok_or_else(|| PortError::refused(SERVICE, format!("no queue for {kind} jobs"))),
            JobKind::Judgment | JobKind::Proactive => Err(PortError::refused(
                SERVICE,
                "no queue for judgment jobs: they are scheduled",
            )),
        }
    }
}

#[async_trait]
impl Queue for SqsQueue {
    fn for_team(&self, team: &TeamId) -> Arc<dyn Queue> {
        Arc::new(SqsQueue {
            team: Some(team.clone()),
            ..self.clone()
        })
    }

    async fn send(&self, job: &Job, delay_seconds: u32) -> Result<(), PortError> {
        if delay_seconds > MAX_QUEUE_DELAY_SECONDS {
            return Err(PortError::refused(
                SERVICE,
                format!("delay {delay_seconds} s is over {MAX_QUEUE_DELAY_SECONDS} s"),
            ));
        }
        let url = self.queue_url(job.kind())?;
        let carried = TeamJob {
            team: self.team.clone(),
            job: job.clone(),
        };
        let body =
            serde_json::to_string(&carried).map_err(|e| PortError::refused_by(SERVICE, e))?;
        let delay = i32::try_from(delay_seconds).map_err(|e| PortError::refused_by(SERVICE, e))?;
        let out = self
            .client
            .send_message()
            .queue_url(url)
            .message_body(body)
            .delay_seconds(delay)
            .send()
            .await
            .map_err(|e| port_error(SERVICE, "SendMessage", e))?;
        tracing::debug!(
            kind = %job.kind(),
            delay_seconds,
            message_id = out.message_id().unwrap_or("?"),
            "job queued"
        );
        Ok(())
    }

    async fn redeliver(
        &self,
        job: &Job,
        receipt: Option<&str>,
        delay_seconds: u32,
    ) -> Result<(), PortError> {
        let Some(receipt) = receipt else {
            return self.send(job, delay_seconds).await;
        };
        let url = self.queue_url(job.kind())?;
        let timeout =
            i32::try_from(delay_seconds).map_err(|e| PortError::refused_by(SERVICE, e))?;
        self.client
            .change_message_visibility()
            .queue_url(url)
            .receipt_handle(receipt)
            .visibility_timeout(timeout)
            .send()
            .await
            .map_err(|e| port_error(SERVICE, "ChangeMessageVisibility", e))?;
        tracing::debug!(kind = %job.kind(), delay_seconds, "job comes back");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(memory: Option<&str>) -> SqsQueue {
        let conf = aws_sdk_sqs::Config::builder()
            .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
            .build();
        SqsQueue {
            client: Client::from_conf(conf),
            response_queue_url: "https://q/response".into(),
            memory_queue_url: memory.map(str::to_owned),
            team: None,
        }
    }

    #[test]
    fn each_kind_goes_to_its_queue() {
        let q = queue(Some("https://q/memory"));
        assert_eq!(q.queue_url(JobKind::Response), Ok("https://q/response"));
        assert_eq!(q.queue_url(JobKind::ThreadMemory), Ok("https://q/memory"));
        assert_eq!(q.queue_url(JobKind::MemorySweep), Ok("https://q/memory"));
        for kind in [
            JobKind::ChannelMemory,
            JobKind::WorkspaceMemory,
            JobKind::Forget,
        ] {
            assert_eq!(q.queue_url(kind), Ok("https://q/memory"), "{kind}");
        }
        assert!(q.queue_url(JobKind::Judgment).is_err());
        assert!(q.queue_url(JobKind::Proactive).is_err());
        assert!(queue(None).queue_url(JobKind::MemorySweep).is_err());
    }

    #[tokio::test]
    async fn a_delay_over_the_limit_is_refused_before_any_call() {
        let err = queue(None)
            .send(&Job::MemorySweep, MAX_QUEUE_DELAY_SECONDS + 1)
            .await
            .expect_err("refused");
        assert!(!err.is_retryable());
        assert!(err.to_string().contains("901"), "{err}");
    }
}
