//! Running the commands once parsed: each reads its settings, builds what
//! it needs and reports on standard output.

use std::io::Write;
use std::sync::Arc;

use anyhow::Context as _;
use chrono::Utc;
use clap::CommandFactory as _;
use myao_aws::dynamodb::DynamoStore;
use myao_core::adapters::system::{FixedSettings, SystemClock};
use myao_core::ports::Llm;
use myao_domain::rules::Chattiness;
use myao_domain::{IdError, UserId};
use myao_llm::openai::OpenAiLlm;
use myao_wire::embedder::ChosenEmbedder;

use crate::config::{self, ConfigError, LocalConfig, LLM_API_KEY};
use crate::export::{self, Export, Filter};
use crate::replay::{self, Options, DEFAULT_BOT_USER_ID};
use crate::serve::{self};
use crate::stack::{Stack, SETTINGS_PATH, TABLE};
use crate::timeline::{JsonSink, Sink, TextSink};
use crate::{doctor, eval, redrive, socket};

use super::parsed::{
    FeedbackArgs, RedriveArgs, ReplayArgs, ServeArgs, SettingsAction, SettingsArgs, StackArgs,
};

/// What `myao --version` prints.
pub fn version() -> String {
    super::args::Cli::command().render_version()
}

/// Writes the completion script of `shell` for every command to `out`.
/// (clap_complete panics on a failed write: the script is made in memory.)
pub fn completions(shell: clap_complete::Shell, out: &mut impl Write) -> std::io::Result<()> {
    let mut script = Vec::new();
    let mut cli = super::args::Cli::command();
    clap_complete::generate(shell, &mut cli, "myao", &mut script);
    out.write_all(&script)?;
    out.flush()
}

/// The process environment, as `(name, value)` pairs.
pub fn environment() -> Vec<(String, String)> {
    std::env::vars().collect()
}

/// Prints the issues of a configuration to stderr.
fn warn_issues(config: &LocalConfig) {
    for issue in &config.issues {
        eprintln!("warning: {issue}");
    }
}

/// The configuration of a replay: `--config`, the environment, and the
/// options that stand for settings (`--bot-name`, `--llm-base-url`,
/// `--bot-user-id`).
pub fn replay_config(
    args: &ReplayArgs,
    env: &[(String, String)],
) -> Result<LocalConfig, ConfigError> {
    let mut overrides = Vec::new();
    if let Some(name) = &args.bot_name {
        overrides.push(("persona_name", "--bot-name", name.clone()));
    }
    if let Some(url) = &args.llm_base_url {
        overrides.push(("llm_base_url", "--llm-base-url", url.clone()));
    }
    if let Some(id) = &args.bot_user_id {
        overrides.push(("bot_user_id", "--bot-user-id", id.to_string()));
    }
    config::load(args.config.as_deref(), env, &overrides)
}

/// What to read of the export and how to replay it. The LLM is the
/// configured endpoint when `llm_base_url` was given, else none (a dry run).
pub fn replay_plan(args: &ReplayArgs, config: &LocalConfig) -> Result<(Filter, Options), IdError> {
    replay_plan_with(args, config, None)
}

/// The same, with `bedrock` answering the roles whose provider is Amazon
/// Bedrock ([`crate::llm::bedrock_if_asked`]): an LLM is then configured
/// even without `llm_base_url` (the roles left on OpenAI stay dry).
pub fn replay_plan_with(
    args: &ReplayArgs,
    config: &LocalConfig,
    bedrock: Option<Arc<dyn Llm>>,
) -> Result<(Filter, Options), IdError> {
    let settings = config.settings.clone();
    let bot_user_id = match &settings.bot_user_id {
        Some(id) => id.clone(),
        None => UserId::parse(DEFAULT_BOT_USER_ID)?,
    };
    let filter = Filter {
        tz: Some(settings.timezone),
        ..args.filter.clone()
    };
    let (llm, llm_label) = if config.llm_base_url_set || bedrock.is_some() {
        let provider = Arc::new(FixedSettings::new(settings.clone()));
        let openai: Arc<dyn Llm> = if config.llm_base_url_set {
            Arc::new(OpenAiLlm::new(
                myao_http::http_client(),
                provider.clone(),
                Arc::new(config.secrets.clone()),
                LLM_API_KEY,
            ))
        } else {
            Arc::new(crate::twins::DryRunLlm)
        };
        let mut llm = myao_llm::LlmRouter::new(provider, openai);
        if let Some(bedrock) = bedrock {
            llm = llm.with_bedrock(bedrock);
        }
        let label = crate::llm::label(&settings);
        (Some(Arc::new(llm) as Arc<dyn Llm>), Some(label))
    } else {
        (None, None)
    };
    let options = Options {
        settings,
        bot_user_id,
        llm,
        llm_label,
        prompts_dir: args.prompts_dir.clone(),
        memory_interval: args.memory_interval,
        seed: args.seed,
        react: args.react.clone(),
        // The bundled model (offline), or the provider's the settings name.
        embedder: Some(Arc::new(ChosenEmbedder::new(
            myao_http::http_client(),
            Arc::new(FixedSettings::new(config.settings.clone())),
            Arc::new(config.secrets.clone()),
            LLM_API_KEY,
        ))),
    };
    Ok((filter, options))
}

/// [`replay_plan_with`] Bedrock when the settings send a role there.
async fn planned(args: &ReplayArgs, config: &LocalConfig) -> anyhow::Result<(Filter, Options)> {
    let provider = Arc::new(FixedSettings::new(config.settings.clone()));
    let bedrock = crate::llm::bedrock_if_asked(&config.settings, provider).await?;
    Ok(replay_plan_with(args, config, bedrock)?)
}

/// Runs `myao replay`, writing to stdout.
pub async fn replay(args: ReplayArgs, env: &[(String, String)]) -> anyhow::Result<()> {
    let config = replay_config(&args, env)?;
    warn_issues(&config);
    let (filter, options) = planned(&args, &config).await?;
    let mut export = export::read(&args.export, &filter)?;
    if !args.also.is_empty() {
        // Each export a workspace of its own, in one stack installed in each.
        let mut parts = vec![(team_number(1)?, export)];
        for (i, path) in args.also.iter().enumerate() {
            parts.push((team_number(i + 2)?, export::read(path, &filter)?));
        }
        export = Export::of_teams(parts);
    }
    let out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut sink: Box<dyn Sink> = if args.json {
        Box::new(JsonSink::new(out))
    } else {
        Box::new(TextSink::new(out))
    };
    match replay::run(&export, options, sink.as_mut()).await {
        Ok(_) => Ok(()),
        // The reader went away (`myao replay ... | head`): not an error.
        Err(e) if is_broken_pipe(&e) => Ok(()),
        Err(e) => Err(e),
    }
}

/// The `n`th workspace of a replay of several: `T00000001`, ...
fn team_number(n: usize) -> Result<myao_domain::TeamId, myao_domain::IdError> {
    myao_domain::TeamId::parse(&format!("T{n:08}"))
}

/// Runs `myao eval`, writing the table (or one JSON object) to stdout.
pub async fn eval(args: ReplayArgs, env: &[(String, String)]) -> anyhow::Result<()> {
    let config = replay_config(&args, env)?;
    warn_issues(&config);
    let (filter, options) = planned(&args, &config).await?;
    for name in eval::set_aside(&options.settings) {
        eprintln!(
            "warning: setting {name} is set aside: eval sets each chattiness level everywhere"
        );
    }
    let export = export::read(&args.export, &filter)?;
    let report = eval::run(&export, &options, &Chattiness::ALL).await?;
    if let Some(path) = &args.html {
        let page = eval::html::render(&report, args.html_options)
            .context("cannot render the report page")?;
        std::fs::write(path, page).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("the report page is in {}", path.display());
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written = if args.json {
        serde_json::to_writer(&mut out, &report.to_json())
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(out))
            .and_then(|()| out.flush())
    } else {
        report.write_text(&mut out)
    };
    match written {
        // The reader went away (`myao eval ... | head`): not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}

/// The stack's names: the description given by `--stack` (a file, or `-`
/// for standard input), then the flags.
pub fn stack(args: &StackArgs) -> anyhow::Result<Stack> {
    let mut stack = match &args.description {
        None => Stack::default(),
        Some(path) => {
            let text = if path.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin()).context("cannot read standard input")?
            } else {
                std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read {}", path.display()))?
            };
            Stack::from_json(&text)
                .with_context(|| format!("{} is not a stack's description", path.display()))?
        }
    };
    for (key, value) in &args.names {
        stack.set(key.as_str(), value.as_str());
    }
    Ok(stack)
}

/// The AWS configuration of doctor and redrive: the caller's, which must
/// name a region.
async fn aws_config() -> anyhow::Result<aws_config::SdkConfig> {
    let config = myao_aws::sdk_config().await;
    if config.region().is_none() {
        anyhow::bail!(
            "no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION) to the stack's region"
        );
    }
    Ok(config)
}

/// Runs `myao doctor`: one line per check on stdout; an error when any failed.
pub async fn doctor(args: StackArgs) -> anyhow::Result<()> {
    let stack = stack(&args)?;
    let aws = doctor::Clients::new(&aws_config().await?);
    let http = myao_http::http_client_builder()
        .timeout(std::time::Duration::from_secs(40))
        .build()
        .context("cannot make an HTTP client")?;
    let checks = doctor::run(&aws, &http, &stack).await;
    let mut out = std::io::stdout().lock();
    for check in &checks {
        writeln!(out, "{check}")?;
    }
    let failed = checks.iter().filter(|c| !c.passed()).count();
    if failed > 0 {
        anyhow::bail!("{failed} of {} checks failed", checks.len());
    }
    writeln!(out, "all {} checks passed", checks.len())?;
    Ok(())
}

/// Runs `myao redrive`: one line per message and a count on stdout; an
/// error when a move failed.
pub async fn redrive(args: RedriveArgs) -> anyhow::Result<()> {
    let stack = stack(&args.stack)?;
    let sqs = aws_sdk_sqs::Client::new(&aws_config().await?);
    let report = redrive::run(&sqs, &stack, args.dry_run).await?;
    let mut out = std::io::stdout().lock();
    for entry in &report.entries {
        writeln!(out, "{entry}")?;
    }
    for error in &report.errors {
        writeln!(out, "FAILED      {error}")?;
    }
    writeln!(out, "{}", report.summary(args.dry_run))?;
    if let Some(failure) = report.failure(args.dry_run) {
        anyhow::bail!(failure);
    }
    Ok(())
}

/// Runs `myao feedback`: the stack's hints per channel on stdout (text or
/// JSON), or `reset`: one channel's taken back.
pub async fn feedback(args: FeedbackArgs) -> anyhow::Result<()> {
    let stack = stack(&args.stack)?;
    let Some(table) = stack.get(TABLE) else {
        anyhow::bail!("the table is unknown: no {TABLE} output in --stack (or --set {TABLE}=...)");
    };
    let store = DynamoStore::new(
        aws_sdk_dynamodb::Client::new(&aws_config().await?),
        table,
        Arc::new(SystemClock),
    );
    let mut out = std::io::stdout().lock();
    if args.reset {
        for channel in &args.channels {
            let taken = crate::feedback::reset(&store, channel).await?;
            writeln!(
                out,
                "#{channel}: {taken} hints taken back; it speaks at its set level again"
            )?;
        }
        return Ok(());
    }
    let report = crate::feedback::report(&store, &args.channels, Utc::now()).await?;
    let written = match args.json {
        true => serde_json::to_writer_pretty(&mut out, &report)
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(out)),
        false => crate::feedback::write_text(&mut out, &report),
    };
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Runs `myao settings`: the local mode's settings without a stack, the
/// stack's SSM parameters with one.
pub async fn settings(args: SettingsArgs, env: &[(String, String)]) -> anyhow::Result<()> {
    use crate::settings::{self as s, Unset};
    let has_stack = args.stack.description.is_some() || !args.stack.names.is_empty();
    let mut out = std::io::stdout().lock();
    if !has_stack {
        let (given, issues) = s::local(args.config.as_deref(), env)?;
        for issue in issues {
            eprintln!("warning: {issue}");
        }
        return match print_settings(&mut out, &args.action, &given, "locally") {
            // The reader went away (`myao settings | head`): not an error.
            Err(e) if is_broken_pipe(&e) => Ok(()),
            other => other,
        };
    }
    let stack = stack(&args.stack)?;
    let Some(path) = stack.get(SETTINGS_PATH).map(str::to_owned) else {
        anyhow::bail!(
            "the settings' path is unknown (no {SETTINGS_PATH} output in --stack, no --stage, \
             no --settings-path): give --stage <name> or --settings-path <path>"
        );
    };
    let ssm = aws_sdk_ssm::Client::new(&aws_config().await?);
    if let Some(team) = &args.team {
        return team_settings(&mut out, &ssm, &path, team, &args.action).await;
    }
    let given = s::in_ssm(&ssm, &path).await?;
    let prefix = s::prefix(&path);
    match &args.action {
        SettingsAction::Set(name, value) => {
            let text = s::set_checked(&ssm, &path, &given, name, value).await?;
            writeln!(out, "{prefix}{name} = {text}")?;
            writeln!(
                out,
                "the functions read it within a minute; no deploy is needed"
            )?;
            warn_of_common_names(&given, name, &text);
            Ok(())
        }
        SettingsAction::Unset(name) => {
            match s::unset(&ssm, &path, name).await? {
                Unset::Default(text) => writeln!(out, "{prefix}{name} = {text} (the default)")?,
                Unset::Deleted => writeln!(out, "{prefix}{name} deleted: {name} has no value")?,
                Unset::Already => writeln!(out, "{prefix}{name} has no value already")?,
            }
            Ok(())
        }
        SettingsAction::List => {
            print_settings(
                &mut out,
                &SettingsAction::List,
                &given,
                &format!("under {prefix}"),
            )?;
            print_tuning(&mut out, &stack).await
        }
        action => print_settings(&mut out, action, &given, &format!("under {prefix}")),
    }
}

/// After `name` was set to `text`: a warning on stderr if one of the
/// bot's names is now a common word, with what `name_aliases` does.
fn warn_of_common_names(given: &crate::settings::Given, name: &str, text: &str) {
    if let Some(common) = crate::settings::caution(given, name, text) {
        eprintln!("warning: {}; {}", common.problem(), common.advice());
    }
}

/// `myao settings ... --team T...`: one installed workspace's settings, its
/// own over the stack's; `set` and `unset` change its own alone.
async fn team_settings(
    out: &mut impl Write,
    ssm: &aws_sdk_ssm::Client,
    path: &str,
    team: &myao_domain::TeamId,
    action: &SettingsAction,
) -> anyhow::Result<()> {
    use crate::settings::{self as s, Unset};
    let given = s::in_ssm_for_team(ssm, path, team).await?;
    let prefix = s::team_path(path, team);
    match action {
        SettingsAction::Set(name, value) => {
            let text = s::set_checked(ssm, &prefix, &given, name, value).await?;
            writeln!(out, "{prefix}{name} = {text}")?;
            writeln!(
                out,
                "{team}'s work reads it within a minute, over the stack's value; no deploy is needed"
            )?;
            warn_of_common_names(&given, name, &text);
        }
        SettingsAction::Unset(name) => match s::unset_for_team(ssm, path, team, name).await? {
            Unset::Already => writeln!(out, "{prefix}{name}: {team} has no value of its own")?,
            _ => writeln!(
                out,
                "{prefix}{name} deleted: {team} has the stack's value again"
            )?,
        },
        action => print_settings(out, action, &given, &format!("under {prefix}"))?,
    }
    Ok(())
}

/// After a stack's settings, the channels its people's hints tune away from
/// them: read from the table, when the stack names one.
async fn print_tuning(out: &mut impl Write, stack: &Stack) -> anyhow::Result<()> {
    let Some(table) = stack.get(TABLE) else {
        return Ok(());
    };
    let store = DynamoStore::new(
        aws_sdk_dynamodb::Client::new(&aws_config().await?),
        table,
        Arc::new(SystemClock),
    );
    match crate::feedback::report(&store, &[], Utc::now()).await {
        Ok(report) => {
            let lines = crate::feedback::tuning_lines(&report);
            if lines.is_empty() {
                writeln!(
                    out,
                    "\nno channel is tuned by hints: each speaks at its level"
                )?;
                return Ok(());
            }
            writeln!(
                out,
                "\ntuned by hints, within quiet and chatty (myao feedback shows the posts, \
                 myao feedback reset --channel ID undoes one):"
            )?;
            for line in lines {
                writeln!(out, "  {line}")?;
            }
        }
        Err(error) => writeln!(out, "\nthe hints' tuning could not be read: {error}")?,
    }
    Ok(())
}

/// `myao settings list` or `get` of the values `given` (`place`: where
/// they were read, for the unknown names).
fn print_settings(
    out: &mut impl Write,
    action: &SettingsAction,
    given: &crate::settings::Given,
    place: &str,
) -> anyhow::Result<()> {
    use crate::settings as s;
    let entries = s::entries(given);
    if let SettingsAction::Get(name) = action {
        s::find(name)?;
        let entry = entries
            .iter()
            .find(|e| e.name == name.as_str())
            .context("every setting has an entry")?;
        if let Some(problem) = &entry.problem {
            eprintln!("warning: {name}'s value is not valid ({problem}); the default is used");
        }
        writeln!(out, "{}", entry.value)?;
        return Ok(());
    }
    const WIDTH: usize = 40;
    writeln!(out, "{:<34} {:<WIDTH$} SOURCE", "NAME", "VALUE")?;
    for entry in &entries {
        writeln!(out, "{}", entry.line(WIDTH))?;
    }
    for name in s::unknown(given) {
        writeln!(
            out,
            "{name}: no setting has this name ({place}); it is not used"
        )?;
    }
    Ok(())
}

/// Runs `myao serve` until Ctrl-C.
pub async fn serve(args: ServeArgs, env: &[(String, String)]) -> anyhow::Result<()> {
    let config = config::load(args.config.as_deref(), env, &[])?;
    warn_issues(&config);
    if args.socket_mode {
        return serve_socket_mode(config, args.debug_reconnects).await;
    }
    let server = serve::bind(config, args.addr).await?;
    let addr = server.local_addr()?;
    let mut err = std::io::stderr();
    let _ = writeln!(
        err,
        "myao serving as {} on http://{addr}{}, interactivity at {} (Ctrl-C stops)",
        server.bot_user_id(),
        serve::EVENTS_PATH,
        serve::INTERACTIVITY_PATH
    );
    let ingest = server.ingest();
    server
        .run(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .context("the server stopped")?;
    hints_at_stop(&mut err, &ingest).await;
    Ok(())
}

/// The local mode's own `myao feedback`: when `myao serve` stops, the hints
/// people gave on its posts while it ran (its store goes with it), with
/// what decided each post, if any were given.
async fn hints_at_stop(out: &mut impl Write, ingest: &myao_core::app::ingest::Ingest) {
    let store = &*ingest.ports.store;
    let _ = crate::feedback::write_given(out, store, Utc::now()).await;
}

/// Runs `myao serve --socket-mode` until Ctrl-C, or until Slack refuses it.
async fn serve_socket_mode(config: LocalConfig, debug_reconnects: bool) -> anyhow::Result<()> {
    let socket = socket::prepare(config, debug_reconnects).await?;
    let mut err = std::io::stderr();
    let _ = writeln!(
        err,
        "myao serving as {} over Slack's Socket Mode (Ctrl-C stops)",
        socket.bot_user_id()
    );
    socket
        .run(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .context("Socket Mode stopped")
}
