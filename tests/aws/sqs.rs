//! SQS (`SqsQueue`).

use super::*;
use myao_domain::ThreadMemoryJob;

async fn receive(
    client: &aws_sdk_sqs::Client,
    url: &str,
    wait_seconds: i32,
) -> Result<Vec<aws_sdk_sqs::types::Message>> {
    Ok(client
        .receive_message()
        .queue_url(url)
        .max_number_of_messages(10)
        .wait_time_seconds(wait_seconds)
        .send()
        .await?
        .messages
        .unwrap_or_default())
}

#[tokio::test]
async fn queue_sends_a_delayed_job_that_arrives_after_its_delay() -> Result<()> {
    let q = fresh_queues().await;
    let job = response("12.5");
    q.send(&job, 2).await?;

    let early = receive(&q.client, &q.response_queue_url, 0).await?;
    assert!(early.is_empty(), "delivered before its delay: {early:?}");

    let mut got = Vec::new();
    for _ in 0..10 {
        got = receive(&q.client, &q.response_queue_url, 1).await?;
        if !got.is_empty() {
            break;
        }
    }
    let [message] = got.as_slice() else {
        bail!("expected one message, got {got:?}");
    };
    let body: Job = serde_json::from_str(message.body().context("a body")?)?;
    assert_eq!(body, job);
    Ok(())
}

#[tokio::test]
async fn queue_routes_jobs_by_kind_and_refuses_what_it_cannot_carry() -> Result<()> {
    let q = fresh_queues().await;
    let thread = Job::ThreadMemory(ThreadMemoryJob {
        channel: channel("C1"),
        thread_ts: ts("1.0"),
    });
    q.send(&thread, 0).await?;
    q.send(&Job::MemorySweep, 0).await?;
    let memory_url = q.memory_queue_url.clone().context("memory queue")?;
    let mut bodies = Vec::new();
    for _ in 0..5 {
        for m in receive(&q.client, &memory_url, 1).await? {
            bodies.push(serde_json::from_str::<Job>(m.body().unwrap_or_default())?);
        }
        if bodies.len() == 2 {
            break;
        }
    }
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    assert!(bodies.contains(&thread) && bodies.contains(&Job::MemorySweep));
    assert!(receive(&q.client, &q.response_queue_url, 0)
        .await?
        .is_empty());

    let over = q.send(&response("1.0"), 901).await.expect_err("over 900 s");
    assert!(!over.is_retryable());
    q.send(&response("1.0"), 900).await?;
    let judgment = q.send(&judgment("1.0"), 0).await.expect_err("no queue");
    assert!(!judgment.is_retryable());
    Ok(())
}

#[tokio::test]
async fn a_teams_queued_job_carries_its_team() -> Result<()> {
    let q = fresh_queues().await;
    let acme = myao_domain::TeamId::parse("T0ACME")?;
    q.for_team(&acme).send(&response("12.5"), 0).await?;
    q.send(&response("13.5"), 0).await?;
    let mut bodies = Vec::new();
    for _ in 0..5 {
        for m in receive(&q.client, &q.response_queue_url, 1).await? {
            bodies.push(serde_json::from_str::<myao_domain::TeamJob>(
                m.body().unwrap_or_default(),
            )?);
        }
        if bodies.len() == 2 {
            break;
        }
    }
    bodies.sort_by_key(|b| b.team.is_none());
    let teams: Vec<_> = bodies.iter().map(|b| b.team.clone()).collect();
    assert_eq!(teams, vec![Some(acme), None]);
    assert_eq!(bodies[0].job, response("12.5"));
    assert_eq!(bodies[1].job, response("13.5"));
    Ok(())
}
