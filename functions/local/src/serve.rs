//! `myao serve`: the four functions in one process. Slack's events arrive at
//! `/slack/events` and get exactly the ingest function's answers (signature
//! check included); the job board runs judgment, response and memory jobs
//! in real time; Slack and the LLM are the real services from the settings.
//!
//! [`assemble`] builds what does not depend on how the events arrive (the
//! [`Bot`]); [`bind`] puts the HTTP front door before it, and
//! [`crate::socket`] Socket Mode's.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context as _};
use chrono::Duration;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use myao::adapters::openai::OpenAiLlm;
use myao::adapters::slack::SlackWebApi;
use myao::adapters::system::{FixedSettings, SplitMix, SystemClock};
use myao::adapters::twins::JobBoard;
use myao::app::ingest::{Ingest, IngestRequest, MAX_BODY_BYTES};
use myao::app::{jobs, Services};
use myao::deadline::{job_budget, Deadline};
use myao::domain::job::retry_delay;
use myao::domain::{Job, ScheduleName, Settings};
use myao::ports::SlackApi;
use myao::wire::Twins;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::config::{env_var, LocalConfig, LLM_API_KEY, SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET};

/// The address served when none is given.
pub const DEFAULT_ADDR: &str = "127.0.0.1:3000";
/// The path Slack posts its events to.
pub const EVENTS_PATH: &str = "/slack/events";
/// How long open connections get to finish after a shutdown is asked for.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// A bound server, ready to run.
pub struct Server {
    listener: TcpListener,
    bot: Bot,
}

/// The bot, whatever brings it Slack's events: ingest, and the services
/// and the job board on the in-process twins, with the real Slack and LLM.
pub struct Bot {
    ingest: Arc<Ingest>,
    services: Arc<Services>,
    board: Arc<JobBoard>,
    bot: String,
}

/// Checks the secrets, finds the bot's user id with `auth.test`, and binds
/// `addr` (port 0 picks a free one).
pub async fn bind(config: LocalConfig, addr: SocketAddr) -> anyhow::Result<Server> {
    require(&config, SLACK_SIGNING_SECRET, "Slack signing secret")?;
    let bot = assemble(config).await?;
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    Ok(Server { listener, bot })
}

/// Refuses to go on without the secret `name` (`what` it is, for people).
pub(crate) fn require(config: &LocalConfig, name: &str, what: &str) -> anyhow::Result<()> {
    if !config.has_secret(name) {
        bail!(
            "no {what}: set {} (or {name} in the --config file)",
            env_var(name)
        );
    }
    Ok(())
}

/// Checks the bot token, finds the bot's user id with `auth.test`, and
/// builds the [`Bot`].
pub async fn assemble(config: LocalConfig) -> anyhow::Result<Bot> {
    require(&config, SLACK_BOT_TOKEN, "Slack bot token (xoxb-...)")?;
    if !config.has_secret(LLM_API_KEY) && crate::llm::uses_openai(&config.settings) {
        tracing::warn!(
            "no LLM API key ({}): LLM calls go without Authorization",
            env_var(LLM_API_KEY)
        );
    }
    let secrets = Arc::new(config.secrets.clone());
    let http = myao::adapters::tls::http_client();
    let mut settings = config.settings.clone();
    // One Slack client for auth.test and the jobs. It reads only
    // slack_api_base_url and slack_max_retries from its settings, which
    // the bot's id found below does not change.
    let slack = Arc::new(SlackWebApi::new(
        http.clone(),
        Arc::new(FixedSettings::new(settings.clone())),
        secrets.clone(),
        SLACK_BOT_TOKEN,
    ));
    let bot = slack
        .auth_test()
        .await
        .context("auth.test failed: is the bot token right, and slack_api_base_url reachable?")?;
    match &settings.bot_user_id {
        Some(configured) if *configured != bot => tracing::warn!(
            %configured, %bot,
            "bot_user_id differs from what auth.test says; using the setting"
        ),
        Some(_) => {}
        None => settings.bot_user_id = Some(bot.clone()),
    }
    let twins = Twins::new(Arc::new(SystemClock));
    let ports = twins.ports(SplitMix::from_entropy(), settings);
    let openai = OpenAiLlm::new(http, ports.settings.clone(), secrets.clone(), LLM_API_KEY);
    // Bedrock too, with the caller's AWS configuration, when a role asks.
    let llm = crate::llm::router(ports.settings.clone(), Arc::new(openai)).await?;
    let ingest = Ingest::new(ports.clone(), secrets, SLACK_SIGNING_SECRET);
    let services = Services::new(ports, Arc::new(llm), slack);
    Ok(Bot {
        ingest: Arc::new(ingest),
        services: Arc::new(services),
        board: twins.board,
        bot: bot.to_string(),
    })
}

impl Bot {
    /// The bot's user id, from `auth.test`.
    pub fn bot_user_id(&self) -> &str {
        &self.bot
    }

    /// Ingest, for the events that arrive otherwise than over HTTP.
    pub fn ingest(&self) -> &Arc<Ingest> {
        &self.ingest
    }

    /// Starts the job runner, which runs judgment, response and memory jobs
    /// as they fall due until [`JobRunner::stop`].
    pub async fn start_jobs(&self) -> anyhow::Result<JobRunner> {
        let (stop, mut stopped) = watch::channel(false);
        // Production runs the memory sweep every hour (an EventBridge
        // schedule); here the sweep re-arms itself after each run.
        arm_sweep(&self.services).await?;
        let services = self.services.clone();
        let tries = Arc::new(Tries::default());
        let task = tokio::spawn(self.board.clone().run(
            move |job| {
                let services = services.clone();
                let tries = tries.clone();
                async move {
                    // Each job on its own task, as each Lambda invocation is
                    // its own: a slow LLM call holds up no other job.
                    tokio::spawn(async move { run_job(&services, &tries, job).await });
                }
            },
            async move {
                let _ = stopped.wait_for(|s| *s).await;
            },
        ));
        Ok(JobRunner { stop, task })
    }
}

/// The job board's runner, started by [`Bot::start_jobs`].
pub struct JobRunner {
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl JobRunner {
    /// Stops it: no job starts after this returns.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

impl Server {
    /// The address it listens on.
    pub fn local_addr(&self) -> anyhow::Result<SocketAddr> {
        Ok(self.listener.local_addr()?)
    }

    /// The bot's user id, from `auth.test`.
    pub fn bot_user_id(&self) -> &str {
        self.bot.bot_user_id()
    }

    /// Serves until `shutdown` resolves, then lets open requests finish
    /// (a few seconds at most) and stops the job runner.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
        let jobs = self.bot.start_jobs().await?;
        let (stop_tx, stop_rx) = watch::channel(false);
        let mut connections = tokio::task::JoinSet::new();
        tokio::pin!(shutdown);
        loop {
            let (stream, peer) = tokio::select! {
                _ = &mut shutdown => break,
                accepted = self.listener.accept() => match accepted {
                    Ok(a) => a,
                    Err(error) => {
                        tracing::warn!(%error, "accept failed");
                        continue;
                    }
                },
            };
            let ingest = self.bot.ingest.clone();
            let mut stop = stop_rx.clone();
            connections.spawn(async move {
                let service = service_fn(move |request| {
                    let ingest = ingest.clone();
                    async move { Ok::<_, Infallible>(answer(&ingest, request).await) }
                });
                let connection =
                    http1::Builder::new().serve_connection(TokioIo::new(stream), service);
                tokio::pin!(connection);
                tokio::select! {
                    result = connection.as_mut() => {
                        if let Err(error) = result {
                            tracing::debug!(%error, %peer, "connection ended with an error");
                        }
                    }
                    _ = stop.changed() => {
                        connection.as_mut().graceful_shutdown();
                        let _ = connection.await;
                    }
                }
            });
            // Reap finished connections as we go.
            while connections.try_join_next().is_some() {}
        }
        tracing::info!("shutting down");
        let _ = stop_tx.send(true);
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, async {
            while connections.join_next().await.is_some() {}
        })
        .await;
        connections.abort_all();
        jobs.stop().await;
        Ok(())
    }
}

/// The name of the recurring sweep on the job board.
const SWEEP_SCHEDULE: &str = "memory-sweep-hourly";

/// How many times each job that failed has been tried, by its claim key:
/// what a queue's receive count is on Lambda.
#[derive(Default)]
struct Tries(Mutex<HashMap<String, u32>>);

impl Tries {
    /// Counts a failed try of `job`; returns its tries so far.
    fn failed(&self, job: &Job) -> u32 {
        let mut tries = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let n = tries.entry(job.claim_key()).or_insert(0);
        *n += 1;
        *n
    }

    fn forget(&self, job: &Job) {
        let mut tries = self.0.lock().unwrap_or_else(|p| p.into_inner());
        tries.remove(&job.claim_key());
    }
}

/// Runs one job with the core's runner, [`jobs::run`], as a Lambda would,
/// and logs what it came to. What serve adds besides the log: a memory
/// sweep first arms the next one (standing in for production's hourly
/// EventBridge schedule), so a failing sweep does not stop the next; and a
/// job that failed retryably goes back on the board after
/// `retry_delays_seconds`, one delay per try, as a queue redelivers on
/// Lambda (a mention still goes unanswered past `mention_max_age_seconds`,
/// and its claim still makes it post once).
async fn run_job(services: &Services, tries: &Tries, job: Job) {
    if job == Job::MemorySweep {
        if let Err(error) = arm_sweep(services).await {
            tracing::error!(%error, "could not schedule the next memory sweep");
        }
    }
    let kind = job.kind();
    // Each job gets its function's timeout, as on Lambda: the LLM and Slack
    // calls are sized to it.
    let deadline = Deadline::after(job_budget(kind));
    match Deadline::scope(Some(deadline), jobs::run(services, &job)).await {
        Ok(outcome) => {
            tries.forget(&job);
            // The outcome may hold conversation: its words at DEBUG only.
            tracing::info!(%kind, outcome = %outcome.summary(), "job done");
            tracing::debug!(?outcome, "job outcome");
        }
        Err(error) if error.is_retryable() => {
            let n = tries.failed(&job);
            // The settings may be what failed: the default delays then.
            let delays = match services.settings.current().await {
                Ok(settings) => settings.retry_delays_seconds.clone(),
                Err(_) => Settings::default().retry_delays_seconds,
            };
            let Some(delay) = retry_delay(n, &delays) else {
                tries.forget(&job);
                tracing::error!(%kind, %error, tries = n, "job failed for good");
                return;
            };
            tracing::warn!(%kind, %error, tries = n, delay_seconds = delay, "job failed; it comes back");
            if let Err(error) = services.queue.redeliver(&job, None, delay).await {
                tracing::error!(%kind, %error, "could not put the job back");
            }
        }
        Err(error) => tracing::error!(%kind, %error, "job failed"),
    }
}

/// Puts the next memory sweep on the board, an hour from now.
async fn arm_sweep(services: &Services) -> anyhow::Result<()> {
    let name = ScheduleName::parse(SWEEP_SCHEDULE)?;
    let at = services.clock.now() + Duration::hours(1);
    services
        .scheduler
        .upsert(&name, at, &Job::MemorySweep)
        .await?;
    Ok(())
}

fn header<'a>(request: &'a Request<Incoming>, name: &str) -> Option<&'a str> {
    request.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Reads at most `limit` bytes of a body: enough for ingest to see that a
/// body is too large, without holding more of it.
async fn read_limited(body: &mut Incoming, limit: usize) -> Result<Vec<u8>, hyper::Error> {
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            let room = limit - out.len();
            out.extend_from_slice(&data[..data.len().min(room)]);
            if out.len() >= limit {
                break;
            }
        }
    }
    Ok(out)
}

fn respond(status: u16, content_type: &str, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(v) = content_type.parse() {
        response.headers_mut().insert("content-type", v);
    }
    response
}

/// One request. Like the Function URL, every method reaches ingest; other
/// paths are not found.
async fn answer(ingest: &Ingest, request: Request<Incoming>) -> Response<Full<Bytes>> {
    if request.uri().path() != EVENTS_PATH {
        return respond(404, "text/plain; charset=utf-8", "not found".to_owned());
    }
    let timestamp = header(&request, "x-slack-request-timestamp").map(str::to_owned);
    let signature = header(&request, "x-slack-signature").map(str::to_owned);
    let retry_num = header(&request, "x-slack-retry-num").map(str::to_owned);
    let mut body = request.into_body();
    let body = match read_limited(&mut body, MAX_BODY_BYTES + 1).await {
        Ok(b) => b,
        Err(error) => {
            tracing::warn!(%error, "could not read a request body");
            return respond(400, "text/plain; charset=utf-8", "bad request".to_owned());
        }
    };
    let answer = ingest
        .handle(IngestRequest {
            timestamp: timestamp.as_deref(),
            signature: signature.as_deref(),
            retry_num: retry_num.as_deref(),
            body: &body,
        })
        .await;
    respond(answer.status, answer.content_type, answer.body)
}
