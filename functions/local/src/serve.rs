//! `myao serve`: the four functions in one process. Slack's events arrive at
//! `/slack/events`, and its interactions (the feedback buttons' clicks) at
//! `/slack/interactivity`, and get exactly the ingest function's answers
//! (signature check included); the job board runs judgment, response and memory jobs
//! in real time; Slack and the LLM are the real services from the settings.
//!
//! [`assemble`] builds what does not depend on how the events arrive (the
//! [`Bot`]); [`bind`] puts the HTTP front door before it, and
//! [`crate::socket`] Socket Mode's.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context as _};
use chrono::Duration;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use myao_core::adapters::system::{FixedSettings, OsUnguessable, SplitMix, SystemClock};
use myao_core::adapters::twins::JobBoard;
use myao_core::app::ingest::{Ingest, IngestRequest, MAX_BODY_BYTES};
use myao_core::app::install::{InstallFlow, INSTALL_PATH, REDIRECT_PATH};
use myao_core::deadline::{job_budget, Deadline};
use myao_core::ports::SlackApi;
use myao_core::schedule::ScheduleName;
use myao_core::wire::Twins;
use myao_domain::install::Token;
use myao_domain::job::retry_delay;
use myao_domain::{Job, Settings, TeamJob};
use myao_services::{jobs, Services};
use myao_slack_api::oauth::SlackOAuthApi;
use myao_slack_api::SlackWebApi;
use myao_wire::http_services_with;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};

use crate::config::{
    env_var, LocalConfig, LLM_API_KEY, SLACK_BOT_TOKEN, SLACK_CLIENT_SECRET, SLACK_SIGNING_SECRET,
};

/// The address served when none is given.
pub const DEFAULT_ADDR: &str = "127.0.0.1:3000";
/// The path Slack posts its events to.
pub const EVENTS_PATH: &str = "/slack/events";
/// The path Slack posts its interactions to (the app's interactivity
/// Request URL). Ingest tells them from events by their body, as the
/// Function URL does: either path takes either.
pub const INTERACTIVITY_PATH: &str = "/slack/interactivity";
/// The most a connection's read buffer holds: a request's headers (Slack's
/// are a few hundred bytes) and a chunk of its body on the way.
const READ_BUFFER_BYTES: usize = 64 * 1024;
/// How long open connections get to finish after a shutdown is asked for.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

mod waiting;
use waiting::{Place, Waiting};

/// How `serve` keeps slow, idle or too many clients from tying it up (it
/// is often reachable from the internet, behind a tunnel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A request's whole head (its request line and headers) must have
    /// arrived this long after the connection is ready for it, however it
    /// trickles in; else the connection is closed.
    pub headers: std::time::Duration,
    /// Its body this long after its headers, else 408.
    pub body: std::time::Duration,
    /// A connection is closed this long after it opened, idle or not (an
    /// answer under way gets [`SHUTDOWN_GRACE`] more to finish).
    pub connection: std::time::Duration,
    /// At most this many connections open at once. When all are taken, a
    /// new one closes the one that has waited longest for a request (its
    /// head still on the way, or idle between requests); when each has a
    /// request under way, new ones wait to be accepted.
    pub connections: usize,
    /// At most this many requests read and answered at once (each holds at
    /// most one body of `MAX_BODY_BYTES`); the next waits, its body unread.
    pub requests: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            headers: std::time::Duration::from_secs(10),
            body: std::time::Duration::from_secs(10),
            connection: std::time::Duration::from_secs(30),
            connections: 512,
            requests: 64,
        }
    }
}

/// A bound server, ready to run.
pub struct Server {
    listener: TcpListener,
    bot: Bot,
    limits: Limits,
    open: Arc<AtomicUsize>,
}

/// The bot, whatever brings it Slack's events: ingest, and the services
/// and the job board on the in-process twins, with the real Slack and LLM.
pub struct Bot {
    ingest: Arc<Ingest>,
    /// "Add to Slack", with `slack_client_id` and the Client Secret.
    install: Option<Arc<InstallFlow>>,
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
    Ok(Server {
        listener,
        bot,
        limits: Limits::default(),
        open: Arc::new(AtomicUsize::new(0)),
    })
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

/// Checks the bot token, finds the bot's user id and its workspace (the
/// stack's own) with `auth.test`, and builds the [`Bot`]. A bot with no
/// token of its own, only `slack_client_id` and the Client Secret, serves
/// the workspaces installed through "Add to Slack" alone.
pub async fn assemble(config: LocalConfig) -> anyhow::Result<Bot> {
    let own_token = config.has_secret(SLACK_BOT_TOKEN);
    if !own_token && config.settings.slack_client_id.is_none() {
        require(&config, SLACK_BOT_TOKEN, "Slack bot token (xoxb-...)")?;
    }
    if !config.has_secret(LLM_API_KEY) && crate::llm::uses_openai(&config.settings) {
        tracing::warn!(
            "no LLM API key ({}): LLM calls go without Authorization",
            env_var(LLM_API_KEY)
        );
    }
    let secrets = Arc::new(config.secrets.clone());
    let http = myao_http::http_client();
    let mut settings = config.settings.clone();
    // A Slack client for auth.test, before the settings hold the bot's id
    // it finds (the services get their own, over the bot's settings). It
    // reads only slack_api_base_url and slack_max_retries.
    let slack = Arc::new(SlackWebApi::new(
        http.clone(),
        Arc::new(FixedSettings::new(settings.clone())),
        secrets.clone(),
        SLACK_BOT_TOKEN,
    ));
    let home = match own_token {
        true => Some(slack.own_workspace().await.context(
            "auth.test failed: is the bot token right, and slack_api_base_url reachable?",
        )?),
        false => None,
    };
    let bot = match &home {
        Some(home) => own_bot(&mut settings, home.bot_user_id.clone()),
        None => "the installed workspaces' bots (no token of its own)".to_owned(),
    };
    let twins = Twins::new(Arc::new(SystemClock));
    let ports = twins.ports(SplitMix::from_entropy(), settings);
    if let Some(home) = &home {
        // Its own workspace's events are its own; any other's need an
        // installation.
        ports.store.put_home(home).await?;
    }
    // Bedrock too, with the caller's AWS configuration, when a role asks.
    let current = ports.settings.current().await?;
    let bedrock =
        crate::llm::bedrock(&current, ports.settings.clone(), ports.metrics.clone()).await?;
    let install = install_flow(&config, &ports, http).await?;
    let ingest = Ingest::new(ports.clone(), secrets.clone(), SLACK_SIGNING_SECRET);
    // The services as the job functions assemble them, over the twins.
    let mut services = http_services_with(ports, secrets, LLM_API_KEY, SLACK_BOT_TOKEN, bedrock);
    if let Some(flow) = &install {
        // The workspaces it installs renew their rotating tokens in the
        // recurring run, as on a deployed stack.
        services.renew_tokens_with(flow.oauth.clone());
    }
    Ok(Bot {
        ingest: Arc::new(ingest),
        install,
        services: Arc::new(services),
        board: twins.board,
        bot,
    })
}

/// The bot's user id `found` by `auth.test`, unless the setting names it
/// (then the setting's, with a warning when they differ).
fn own_bot(settings: &mut Settings, found: myao_domain::UserId) -> String {
    match &settings.bot_user_id {
        Some(configured) if *configured != found => tracing::warn!(
            %configured, %found,
            "bot_user_id differs from what auth.test says; using the setting"
        ),
        Some(_) => {}
        None => settings.bot_user_id = Some(found.clone()),
    }
    found.to_string()
}

/// "Add to Slack" at [`INSTALL_PATH`], when `slack_client_id` and the
/// Client Secret are set: the installations kept in the bot's store,
/// asking for the manifest's bot scopes.
async fn install_flow(
    config: &LocalConfig,
    ports: &myao_core::app::Ports,
    http: reqwest::Client,
) -> anyhow::Result<Option<Arc<InstallFlow>>> {
    let Some(client_id) = config.settings.slack_client_id.clone() else {
        return Ok(None);
    };
    require(
        config,
        SLACK_CLIENT_SECRET,
        "Slack Client Secret, with slack_client_id",
    )?;
    let secret = myao_core::ports::Secrets::get(&config.secrets, SLACK_CLIENT_SECRET).await?;
    let oauth = SlackOAuthApi::new(
        http,
        config.settings.slack_api_base_url.clone(),
        client_id.clone(),
        Token::new(secret.trim()),
    );
    Ok(Some(Arc::new(InstallFlow {
        store: ports.store.clone(),
        oauth: Arc::new(oauth),
        clock: ports.clock.clone(),
        unguessable: Arc::new(OsUnguessable::default()),
        client_id,
        scopes: crate::doctor::required_scopes()?,
        redirect_uri: None,
    })))
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
                    tokio::spawn(async move { run_carried(&services, &tries, job).await });
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

    /// The server with other [`Limits`] than the defaults.
    pub fn with_limits(self, limits: Limits) -> Server {
        Server { limits, ..self }
    }

    /// Its ingest, whose ports hold what it stored.
    pub fn ingest(&self) -> Arc<Ingest> {
        self.bot.ingest().clone()
    }

    /// The number of connections open now, kept up to date while it runs.
    pub fn open_connections(&self) -> Arc<AtomicUsize> {
        self.open.clone()
    }

    /// Serves until `shutdown` resolves, then lets open requests finish
    /// (a few seconds at most) and stops the job runner.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
        let jobs = self.bot.start_jobs().await?;
        let (stop_tx, stop_rx) = watch::channel(false);
        let mut connections = tokio::task::JoinSet::new();
        let places = Arc::new(Semaphore::new(self.limits.connections.max(1)));
        let waiting = Arc::new(Waiting::default());
        let mut pushed = PushedOut::default();
        let mut backoff = AcceptBackoff::default();
        let limits = self.limits;
        let front = Front {
            ingest: self.bot.ingest.clone(),
            install: self.bot.install.clone(),
            turns: Arc::new(Semaphore::new(limits.requests.max(1))),
        };
        tokio::pin!(shutdown);
        loop {
            let (stream, peer) = tokio::select! {
                _ = &mut shutdown => break,
                accepted = self.listener.accept() => match accepted {
                    Ok(a) => {
                        backoff.succeeded();
                        a
                    }
                    Err(error) => {
                        // Out of descriptors, say: pause before trying
                        // again rather than spin, and say so now and then.
                        let (pause, log) = backoff.failed(std::time::Instant::now());
                        if let Some(failures) = log {
                            tracing::warn!(%error, failures, pause_ms = pause.as_millis() as u64, "accept failed; pausing");
                        }
                        tokio::select! {
                            _ = &mut shutdown => break,
                            _ = tokio::time::sleep(pause) => continue,
                        }
                    }
                },
            };
            // A place for it: every place taken, the connection that has
            // waited longest for a request makes room; when each has one
            // under way, the rest wait in the listen backlog.
            let place = match places.clone().try_acquire_owned() {
                Ok(place) => place,
                Err(_) => {
                    if waiting.push_out_oldest() {
                        pushed.one(std::time::Instant::now(), limits.connections);
                    }
                    tokio::select! {
                        _ = &mut shutdown => break,
                        place = places.clone().acquire_owned() => match place {
                            Ok(p) => p,
                            Err(_) => break,
                        },
                    }
                }
            };
            let (front, stop, open) = (front.clone(), stop_rx.clone(), self.open.clone());
            let waits = waiting.enter();
            connections.spawn(async move {
                let _place = place;
                open.fetch_add(1, Ordering::SeqCst);
                front.serve(stream, peer, waits, limits, stop).await;
                open.fetch_sub(1, Ordering::SeqCst);
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

/// The connections closed to make room, logged at most once a minute with
/// how many since: a flood of slow clients says so without a line each.
#[derive(Debug, Default)]
struct PushedOut {
    since: u64,
    logged: Option<std::time::Instant>,
}

impl PushedOut {
    fn one(&mut self, now: std::time::Instant, cap: usize) {
        self.since += 1;
        let due = self
            .logged
            .is_none_or(|at| now.duration_since(at) >= std::time::Duration::from_secs(60));
        if due {
            tracing::warn!(
                closed = std::mem::take(&mut self.since),
                connections = cap,
                "every connection taken: closed the ones waiting longest for a request"
            );
            self.logged = Some(now);
        }
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
/// Runs a job from the board: a team's with its team's services.
async fn run_carried(services: &Services, tries: &Tries, carried: TeamJob) {
    let Some(team) = &carried.team else {
        return run_job(services, tries, carried.job).await;
    };
    match jobs::team_services(services, team, &carried.job).await {
        Ok(Some(team_services)) => run_job(&team_services, tries, carried.job).await,
        Ok(None) => {}
        Err(error) => {
            tracing::error!(%error, "could not read the team's installation; job dropped")
        }
    }
}

async fn run_job(services: &Services, tries: &Tries, job: Job) {
    // The stack's sweep re-arms itself; a team's comes from the stack's.
    if job == Job::MemorySweep && services.team().is_none() {
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
            let delays = match services.ports.settings.current().await {
                Ok(settings) => settings.retry_delays_seconds.clone(),
                Err(_) => Settings::default().retry_delays_seconds,
            };
            let Some(delay) = retry_delay(n, &delays) else {
                tries.forget(&job);
                tracing::error!(%kind, %error, tries = n, "job failed for good");
                return;
            };
            tracing::warn!(%kind, %error, tries = n, delay_seconds = delay, "job failed; it comes back");
            if let Err(error) = services.ports.queue.redeliver(&job, None, delay).await {
                tracing::error!(%kind, %error, "could not put the job back");
            }
        }
        Err(error) => tracing::error!(%kind, %error, "job failed"),
    }
}

/// Puts the next memory sweep on the board, an hour from now.
async fn arm_sweep(services: &Services) -> anyhow::Result<()> {
    let name = ScheduleName::parse(SWEEP_SCHEDULE)?;
    let at = services.ports.clock.now() + Duration::hours(1);
    services
        .ports
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
    // Its announced length at once, not doubling towards it: one buffer a
    // request, however slowly the body comes.
    let announced = usize::try_from(hyper::body::Body::size_hint(body).lower()).unwrap_or(limit);
    let mut out = Vec::with_capacity(announced.min(limit));
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

/// The pause after `accept` fails, doubling from [`ACCEPT_PAUSE_MIN`] to
/// [`ACCEPT_PAUSE_MAX`] while it keeps failing, and the rate of its log
/// line: at most one every [`ACCEPT_LOG_EVERY`], with the failures since.
#[derive(Debug, Default)]
struct AcceptBackoff {
    pause: Option<std::time::Duration>,
    failures: u64,
    logged: Option<std::time::Instant>,
}

const ACCEPT_PAUSE_MIN: std::time::Duration = std::time::Duration::from_millis(10);
const ACCEPT_PAUSE_MAX: std::time::Duration = std::time::Duration::from_secs(1);
const ACCEPT_LOG_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

impl AcceptBackoff {
    /// A failure at `now`: how long to pause, and the failures to log (when
    /// a line is due).
    fn failed(&mut self, now: std::time::Instant) -> (std::time::Duration, Option<u64>) {
        let pause = self
            .pause
            .map_or(ACCEPT_PAUSE_MIN, |p| (p * 2).min(ACCEPT_PAUSE_MAX));
        self.pause = Some(pause);
        self.failures += 1;
        let due = self
            .logged
            .is_none_or(|at| now.duration_since(at) >= ACCEPT_LOG_EVERY);
        let log = due.then(|| {
            self.logged = Some(now);
            std::mem::take(&mut self.failures)
        });
        (pause, log)
    }

    fn succeeded(&mut self) {
        self.pause = None;
    }
}

/// What answers a connection's requests: ingest, and "Add to Slack" when
/// it is on.
#[derive(Clone)]
struct Front {
    ingest: Arc<Ingest>,
    install: Option<Arc<InstallFlow>>,
    /// The requests read and answered at once ([`Limits::requests`]).
    turns: Arc<Semaphore>,
}

impl Front {
    /// Serves one connection until it ends, the server stops (`stop`), it
    /// has been open `limits.connection`, or it is pushed out of its
    /// place while it waits for a request (`place`).
    async fn serve(
        self,
        stream: tokio::net::TcpStream,
        peer: SocketAddr,
        place: Place,
        limits: Limits,
        mut stop: watch::Receiver<bool>,
    ) {
        let place = Arc::new(place);
        let pushed_out = place.pushed_out.clone();
        let service = service_fn(move |request| {
            let (front, place) = (self.clone(), place.clone());
            async move {
                // Its head is in: it keeps its place until answered.
                place.busy();
                let answer = front.answer(limits.body, request).await;
                place.idle();
                Ok::<_, Infallible>(answer)
            }
        });
        let connection = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.headers)
            .max_buf_size(READ_BUFFER_BYTES)
            .serve_connection(TokioIo::new(stream), service);
        tokio::pin!(connection);
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%error, %peer, "connection ended with an error");
                }
            }
            _ = stop.changed() => {
                connection.as_mut().graceful_shutdown();
                let _ = tokio::time::timeout(SHUTDOWN_GRACE, connection).await;
            }
            _ = tokio::time::sleep(limits.connection) => {
                connection.as_mut().graceful_shutdown();
                let _ = tokio::time::timeout(SHUTDOWN_GRACE, connection).await;
            }
            // No request under way: closed at once, nothing to answer.
            _ = pushed_out.notified() => {
                tracing::debug!(%peer, "closed to make room");
            }
        }
    }

    /// One request, in its turn ([`Limits::requests`]): its body is read
    /// only then.
    async fn answer(
        &self,
        body_time: std::time::Duration,
        request: Request<Incoming>,
    ) -> Response<Full<Bytes>> {
        let Ok(_turn) = self.turns.acquire().await else {
            return respond(503, "text/plain; charset=utf-8", "shutting down".to_owned());
        };
        answer(&self.ingest, self.install.as_deref(), body_time, request).await
    }
}

/// One request. Like the Function URL, every method reaches ingest; paths
/// other than the events' and the interactions' are not found. A body that does not arrive within `body_time`
/// gets 408.
async fn answer(
    ingest: &Ingest,
    install: Option<&InstallFlow>,
    body_time: std::time::Duration,
    request: Request<Incoming>,
) -> Response<Full<Bytes>> {
    if let (Some(flow), path @ (INSTALL_PATH | REDIRECT_PATH)) = (install, request.uri().path()) {
        let page = match path {
            INSTALL_PATH => flow.start().await,
            _ => {
                let query = request.uri().query().unwrap_or_default();
                flow.finish(query, header(&request, "cookie")).await
            }
        };
        let mut response = respond(page.status, "text/html; charset=utf-8", page.body);
        if let Some(to) = page.location.and_then(|l| l.parse().ok()) {
            response.headers_mut().insert("location", to);
        }
        if let Some(cookie) = page.cookie.and_then(|c| c.parse().ok()) {
            response.headers_mut().insert("set-cookie", cookie);
        }
        return response;
    }
    if ![EVENTS_PATH, INTERACTIVITY_PATH].contains(&request.uri().path()) {
        return respond(404, "text/plain; charset=utf-8", "not found".to_owned());
    }
    let timestamp = header(&request, "x-slack-request-timestamp").map(str::to_owned);
    let signature = header(&request, "x-slack-signature").map(str::to_owned);
    let retry_num = header(&request, "x-slack-retry-num").map(str::to_owned);
    let mut body = request.into_body();
    let body =
        match tokio::time::timeout(body_time, read_limited(&mut body, MAX_BODY_BYTES + 1)).await {
            Ok(Ok(b)) => b,
            Ok(Err(error)) => {
                tracing::warn!(%error, "could not read a request body");
                return respond(400, "text/plain; charset=utf-8", "bad request".to_owned());
            }
            Err(_) => {
                tracing::warn!("a request body did not arrive in time");
                let mut response = respond(
                    408,
                    "text/plain; charset=utf-8",
                    "request timeout".to_owned(),
                );
                if let Ok(v) = "close".parse() {
                    response.headers_mut().insert("connection", v);
                }
                return response;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration as StdDuration, Instant};

    #[test]
    fn accept_failures_pause_longer_each_time_and_log_now_and_then() {
        let mut backoff = AcceptBackoff::default();
        let start = Instant::now();
        let pauses: Vec<(u64, Option<u64>)> = (0..9)
            .map(|i| {
                let (pause, log) = backoff.failed(start + StdDuration::from_millis(i));
                (pause.as_millis() as u64, log)
            })
            .collect();
        assert_eq!(
            pauses.iter().map(|(p, _)| *p).collect::<Vec<_>>(),
            [10, 20, 40, 80, 160, 320, 640, 1000, 1000]
        );
        // The first failure is logged, the next ones not within 10 s...
        assert_eq!(pauses[0].1, Some(1));
        assert!(pauses[1..].iter().all(|(_, log)| log.is_none()));
        // ...then one line counts the failures since.
        let (_, log) = backoff.failed(start + StdDuration::from_secs(11));
        assert_eq!(log, Some(9));
        // An accepted connection starts the pauses over.
        backoff.succeeded();
        let (pause, _) = backoff.failed(start + StdDuration::from_secs(12));
        assert_eq!(pause, ACCEPT_PAUSE_MIN);
    }
}
