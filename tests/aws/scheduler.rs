//! EventBridge Scheduler (`EventBridgeScheduler`).

use super::*;

#[tokio::test]
async fn scheduler_creates_a_schedule_and_reads_it_back() -> Result<()> {
    let s = fresh_scheduler().await;
    let n = name("judgment-C1-100.000000");
    let due = Utc::now() + Duration::minutes(5);
    s.upsert(&n, due, &judgment("105.0")).await?;

    let got = s.get(&n).await?.context("the schedule")?;
    assert_eq!(got.name, n);
    assert_eq!(got.job, judgment("105.0"));
    assert!(got.at >= due && got.at - due < Duration::seconds(1));
    assert_eq!(got.at.timestamp_subsec_nanos(), 0, "whole seconds");

    // What was sent, as the service holds it.
    let raw = s
        .client
        .get_schedule()
        .name(n.as_str())
        .group_name(&s.group)
        .send()
        .await?;
    assert_eq!(
        raw.schedule_expression(),
        Some(format!("at({})", got.at.format("%Y-%m-%dT%H:%M:%S")).as_str())
    );
    assert_eq!(raw.schedule_expression_timezone(), Some("UTC"));
    assert_eq!(raw.state(), Some(&ScheduleState::Enabled));
    assert_eq!(
        raw.flexible_time_window().map(|w| w.mode()),
        Some(&FlexibleTimeWindowMode::Off)
    );
    assert_eq!(
        raw.action_after_completion(),
        Some(&ActionAfterCompletion::Delete)
    );
    let target = raw.target().context("target")?;
    assert_eq!(target.arn(), function_arn("myao-judgment"));
    assert_eq!(target.role_arn(), s.role_arn);
    let retry = target.retry_policy().context("retry policy")?;
    assert_eq!(retry.maximum_event_age_in_seconds(), Some(3600));
    assert_eq!(retry.maximum_retry_attempts(), Some(3));
    assert_eq!(
        target.dead_letter_config().and_then(|d| d.arn()),
        s.dlq_arn.as_deref()
    );
    Ok(())
}

#[tokio::test]
async fn scheduler_upsert_moves_the_time_and_replaces_the_job() -> Result<()> {
    let s = fresh_scheduler().await;
    let n = name("judgment-C1-top");
    let first = at(1_900_000_000);
    s.upsert(&n, first, &judgment("105.0")).await?;
    let second = first + Duration::minutes(3);
    s.upsert(&n, second, &response("106.0")).await?;

    let got = s.get(&n).await?.context("the schedule")?;
    assert_eq!(got.at, second);
    assert_eq!(got.job, response("106.0"));
    let raw = s
        .client
        .get_schedule()
        .name(n.as_str())
        .group_name(&s.group)
        .send()
        .await?;
    assert_eq!(
        raw.target().map(|t| t.arn()),
        Some(function_arn("myao-response").as_str()),
        "the new job's kind picks the target"
    );
    assert_eq!(raw.state(), Some(&ScheduleState::Enabled));

    let listed = s
        .client
        .list_schedules()
        .group_name(&s.group)
        .send()
        .await?;
    assert_eq!(listed.schedules().len(), 1, "one schedule per name");
    Ok(())
}

#[tokio::test]
async fn scheduler_sends_memory_jobs_to_the_memory_function() -> Result<()> {
    let s = fresh_scheduler().await;
    let n = name("memory-sweep");
    s.upsert(&n, at(1_900_000_000), &Job::MemorySweep).await?;
    let raw = s
        .client
        .get_schedule()
        .name(n.as_str())
        .group_name(&s.group)
        .send()
        .await?;
    assert_eq!(
        raw.target().map(|t| t.arn()),
        Some(function_arn("myao-memory").as_str())
    );

    let without = EventBridgeScheduler {
        memory_target_arn: None,
        team: None,
        ..s.clone()
    };
    let err = without
        .upsert(&name("memory-2"), at(1_900_000_000), &Job::MemorySweep)
        .await
        .expect_err("no memory target");
    assert!(!err.is_retryable());
    assert_eq!(without.get(&name("memory-2")).await?, None);
    Ok(())
}

/// Creates a schedule of the same name through a second client just before
/// the adapter's CreateSchedule goes out: the race of two upserts, where the
/// adapter's update found nothing and its create then conflicts.
#[derive(Debug)]
struct CreateItFirst {
    schedule: String,
    group: String,
    done: Arc<AtomicBool>,
}

impl Intercept for CreateItFirst {
    fn name(&self) -> &'static str {
        "CreateItFirst"
    }

    fn read_before_execution(
        &self,
        context: &BeforeSerializationInterceptorContextRef<'_>,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Some(input) = context.input().downcast_ref::<CreateScheduleInput>() else {
            return Ok(());
        };
        if input.name() != Some(self.schedule.as_str()) || self.done.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let (schedule, group) = (self.schedule.clone(), self.group.clone());
        // Hooks are synchronous: the competitor runs on a runtime of its
        // own, with a client (and connection pool) of its own.
        std::thread::spawn(move || -> Result<()> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let client = aws_sdk_scheduler::Client::new(&aws_config().await);
                raw_create(&client, &schedule, &group, "at(2031-01-01T00:00:00)", "{}").await
            })
        })
        .join()
        .map_err(|_| "the competing create panicked")??;
        Ok(())
    }
}

async fn raw_create(
    client: &aws_sdk_scheduler::Client,
    schedule: &str,
    group: &str,
    expression: &str,
    input: &str,
) -> Result<()> {
    client
        .create_schedule()
        .name(schedule)
        .group_name(group)
        .schedule_expression(expression)
        .flexible_time_window(
            FlexibleTimeWindow::builder()
                .mode(FlexibleTimeWindowMode::Off)
                .build()?,
        )
        .target(
            Target::builder()
                .arn(function_arn("someone-else"))
                .role_arn("arn:aws:iam::123456789012:role/other")
                .input(input)
                .build()?,
        )
        .send()
        .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduler_upsert_wins_a_create_race() -> Result<()> {
    let base = fresh_scheduler().await;
    let n = name("response-C1-top");
    let raced = Arc::new(AtomicBool::new(false));
    let interceptor = CreateItFirst {
        schedule: n.as_str().to_owned(),
        group: base.group.clone(),
        done: raced.clone(),
    };
    let conf = aws_sdk_scheduler::config::Builder::from(&aws_config().await)
        .interceptor(interceptor)
        .build();
    let s = EventBridgeScheduler {
        client: aws_sdk_scheduler::Client::from_conf(conf),
        ..base.clone()
    };
    let due = at(1_900_000_000);
    s.upsert(&n, due, &response("7.0")).await?;
    assert!(
        raced.load(Ordering::SeqCst),
        "the competitor created the schedule"
    );

    let got = base.get(&n).await?.context("the schedule")?;
    assert_eq!(got.at, due, "the later upsert's time wins");
    assert_eq!(got.job, response("7.0"));
    Ok(())
}

#[tokio::test]
async fn scheduler_upsert_replaces_a_schedule_made_elsewhere_and_creates_a_missing_one(
) -> Result<()> {
    let s = fresh_scheduler().await;
    let existing = name("made-elsewhere");
    raw_create(
        &s.client,
        existing.as_str(),
        &s.group,
        "at(2031-01-01T00:00:00)",
        "{\"not\":\"a job\"}",
    )
    .await?;
    let err = s.get(&existing).await.expect_err("its input is not a job");
    assert!(!err.is_retryable());
    assert!(err.to_string().contains("made-elsewhere"), "{err}");

    s.upsert(&existing, at(1_900_000_000), &judgment("9.0"))
        .await?;
    let got = s.get(&existing).await?.context("the schedule")?;
    assert_eq!((got.at, got.job), (at(1_900_000_000), judgment("9.0")));

    let fresh = name("never-seen-before");
    assert_eq!(s.get(&fresh).await?, None);
    s.upsert(&fresh, at(1_900_000_060), &judgment("10.0"))
        .await?;
    assert_eq!(s.get(&fresh).await?.map(|j| j.at), Some(at(1_900_000_060)));
    Ok(())
}

#[tokio::test]
async fn scheduler_cancel_deletes_and_tolerates_a_missing_schedule() -> Result<()> {
    let s = fresh_scheduler().await;
    let n = name("judgment-C1-1.000000");
    s.upsert(&n, at(1_900_000_000), &judgment("2.0")).await?;
    s.cancel(&n).await?;
    assert_eq!(s.get(&n).await?, None);
    s.cancel(&n).await?;
    s.cancel(&name("never-existed")).await?;
    assert_eq!(s.get(&name("never-existed")).await?, None);
    Ok(())
}

#[tokio::test]
async fn scheduler_keeps_its_group_when_ensured_again() -> Result<()> {
    let s = fresh_scheduler().await;
    let n = name("survivor");
    s.upsert(&n, at(1_900_000_000), &judgment("2.0")).await?;
    myao_aws::scheduler::ensure_group(&s.client, &s.group).await?;
    assert!(
        s.get(&n).await?.is_some(),
        "ensure_group must not re-create (and so wipe) a group"
    );
    Ok(())
}

#[tokio::test]
async fn a_teams_schedule_carries_its_team_under_its_own_name() -> Result<()> {
    let s = fresh_scheduler().await;
    let n = name("judgment-C1-100.000000");
    let acme = myao_domain::TeamId::parse("T0ACME")?;
    let beta = myao_domain::TeamId::parse("T0BETA")?;
    let due = Utc::now() + Duration::minutes(5);
    // The same conversation name in two teams and the stack's: three schedules.
    s.for_team(&acme)
        .upsert(&n, due, &judgment("105.0"))
        .await?;
    s.for_team(&beta)
        .upsert(&n, due, &judgment("106.0"))
        .await?;
    s.upsert(&n, due, &judgment("107.0")).await?;

    let got = s.for_team(&acme).get(&n).await?.context("acme's")?;
    assert_eq!(got.job, judgment("105.0"));
    assert_eq!(
        s.get(&n).await?.context("the stack's")?.job,
        judgment("107.0")
    );
    let raw = s
        .client
        .get_schedule()
        .name("T0BETA.judgment-C1-100.000000")
        .group_name(&s.group)
        .send()
        .await?;
    let input = raw.target().and_then(|t| t.input()).context("an input")?;
    let carried: myao_domain::TeamJob = serde_json::from_str(input)?;
    assert_eq!(carried.team, Some(beta.clone()));
    assert_eq!(carried.job, judgment("106.0"));

    s.for_team(&beta).cancel(&n).await?;
    assert!(s.for_team(&beta).get(&n).await?.is_none());
    assert!(
        s.for_team(&acme).get(&n).await?.is_some(),
        "another team's stays"
    );
    Ok(())
}
