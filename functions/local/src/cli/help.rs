//! The help of each command, with its examples, and the version.

/// The start of `myao --help`: what it is and the commands.
const HELP_HEAD: &str = "\
myao on one machine, without AWS; and checks of a deployed stack

USAGE:
    myao replay <slack-export> [OPTIONS]
    myao eval <slack-export> [OPTIONS]
    myao serve [OPTIONS]
    myao serve --socket-mode [OPTIONS]
    myao doctor --stack <file> [OPTIONS]
    myao redrive --stack <file> [--dry-run] [OPTIONS]
    myao settings [list | get NAME | set NAME VALUE | unset NAME] [OPTIONS]
    myao help | --help | <command> --help
    myao --version

";

/// `myao replay --help`.
const HELP_REPLAY: &str = "\
myao replay <slack-export>
    Feeds a Slack workspace export (a folder or its .zip) through the bot's
    ingest, judgment, response and memory code on a virtual clock, and prints
    the timeline and a summary. With no LLM configured it is a dry run: each
    judgment's prompt is shown and no reply is invented.

    --config <file>         settings: a TOML file of `name = value` (the SSM names)
    --json                  one JSON object per line instead of text
    --bot-user-id <id>      the bot's user id (default: bot_user_id, else UMYAO)
    --bot-name <name>       the bot's name (persona_name)
    --channel <name|id>     only this channel; repeat for more
    --from <YYYY-MM-DD>     the first day to replay (in the settings' time zone)
    --to <YYYY-MM-DD>       the last day to replay (inclusive)
    --llm-base-url <url>    an OpenAI-compatible endpoint (else llm_base_url)
    --prompts-dir <dir>     write every prompt there as NNN-<role>.txt
    --memory-interval <d>   virtual time between memory sweeps: 30m, 1h (default),
                            2h, ... from 1m to 30d; off for none
    --seed <n>              the jitter's random seed (default 0)

    Examples:
        myao replay functions/local/examples/export
        myao replay export.zip --channel general --from 2026-01-05 --json
        MYAO_LLM_BASE_URL=http://localhost:11434/v1 myao replay export.zip

";

/// `myao eval --help`.
const HELP_EVAL: &str = "\
myao eval <slack-export>
    Replays the export once per chattiness level (mentions_only, quiet, normal,
    chatty) and reports, per channel and in total, the levels side by side:
    questions people left unanswered that the bot joined, two-person exchanges
    it intruded on, the precision of its unprompted posts, its unprompted posts
    per channel-hour, and its LLM judgment calls against one per quiet period.
    With no LLM configured the rule stage decides alone (offline).

    Options as for replay, but --prompts-dir; --json prints one JSON object.

    --html <file>           also write the report as one page to look at: the
                            figures per level as charts, and per channel a
                            timeline of where the bot would have spoken, each
                            case a click away (self-contained: no network)
    --include-private       on the page, private channels and DMs too (left
                            out by default: the page is a file that gets shared)
    --full-text             on the page, messages in full (cut to 40 characters
                            by default)

    Examples:
        myao eval functions/local/examples/export
        myao eval export.zip --json > eval.json
        myao eval export.zip --html report.html

";

/// `myao serve --help`.
const HELP_SERVE: &str = "\
myao serve
    Runs the bot for a real workspace: Slack's Events API at /slack/events
    (signatures checked), the jobs on an in-process board, the Slack Web API
    and the LLM from the settings. Ctrl-C stops it.

    --config <file>         settings, as for replay
    --addr <host:port>      where to listen (default 127.0.0.1:3000: this machine
                            only, for a tunnel; 0.0.0.0:3000 behind a TLS proxy)
    --socket-mode           take Slack's events over Socket Mode instead: a
                            WebSocket myao opens with the app-level token
                            (MYAO_SLACK_APP_TOKEN: xapp-..., connections:write);
                            no public URL, no signing secret; not with --addr
    --debug-reconnects      with --socket-mode: ask Slack for short-lived
                            connections, to see the reconnects

    Examples:
        MYAO_SLACK_SIGNING_SECRET=... MYAO_SLACK_BOT_TOKEN=xoxb-... myao serve
        MYAO_SLACK_APP_TOKEN=xapp-... MYAO_SLACK_BOT_TOKEN=xoxb-... myao serve --socket-mode

";

/// `myao doctor --help`.
const HELP_DOCTOR: &str = "\
myao doctor
    Checks a deployed stack with your AWS credentials (AWS_REGION, AWS_PROFILE,
    ...): every setting exists and parses; the secret parameters exist; the bot
    token works and has the manifest's scopes; the Function URL answers a
    signed url_verification; each model answers a one-token request; the
    table and schedule group exist; the failure queues are empty. One line per
    check, with the fix of each failure; exit code 1 if any failed.

    --stack <file>          the stack's description: the JSON of
                            `aws cloudformation describe-stacks --stack-name NAME`
                            or `sam list stack-outputs --stack-name NAME --output json`
                            (- reads it from standard input)
    --settings-path <path>  the settings' path, e.g. /myao/prod/ (SettingsPath)
    --set <KEY>=<value>     a stack output or parameter, over the file's, e.g.
                            --set TableName=... or --set SlackBotTokenParameter=...
                            (secrets default to <settings path>secrets/<name>)

    Examples:
        aws cloudformation describe-stacks --stack-name myao > stack.json
        myao doctor --stack stack.json
        sam list stack-outputs --stack-name myao --output json | myao doctor --stack -

";

/// `myao redrive --help`.
const HELP_REDRIVE: &str = "\
myao redrive
    Sends the jobs kept in the failure and dead-letter queues back to the
    queue their function reads (response or memory), deleting each only once
    it is sent; judgment jobs and what is not a job stay. Lists message ids
    and job kinds, never a message's contents.

    --stack <file>, --set <KEY>=<value>   as for doctor
    --dry-run               list what would be moved, and move nothing

    Examples:
        myao redrive --stack stack.json --dry-run
        myao redrive --stack stack.json

";

/// `myao settings --help`.
const HELP_SETTINGS_COMMAND: &str = "\
myao settings
    Every setting, its value and where it comes from; and a deployed stack's
    settings changed or reset. A value is parsed by the parser the functions
    use, and refused with its message before anything is written. The
    functions read a change within a minute; no deploy is needed.

    list                    every setting: name, value, source (default, SSM,
                            file or environment), and why a value is not used
                            (the default for a missing command)
    get NAME                the value in effect
    set NAME VALUE          write VALUE to the stack's parameter (a String,
                            over the old value); needs the stack
    unset NAME              back to the default; needs the stack

    --stack <file>, --set <KEY>=<value>   as for doctor: the stack's settings
    --settings-path <path>  the settings' path, e.g. /myao/prod/
    --stage <name>          the same as --settings-path /myao/<name>/
    --config <file>         without a stack: the local mode's settings file

    Examples:
        myao settings list
        myao settings list --stack stack.json
        myao settings set chattiness quiet --stage prod
        myao settings get chattiness --stage prod
        myao settings unset chattiness --stage prod

";

/// Where settings come from: the end of every help.
const HELP_SETTINGS: &str = "\
SETTINGS
    The names of the SSM parameters (min_wait_seconds, jitter_ratio,
    llm_base_url, persona_name, ...), from --config and from the environment
    as MYAO_<NAME> (MYAO_MIN_WAIT_SECONDS=30), the environment winning.
    Secrets: MYAO_LLM_API_KEY, MYAO_SLACK_SIGNING_SECRET, MYAO_SLACK_BOT_TOKEN,
    MYAO_SLACK_APP_TOKEN (or llm_api_key, slack_signing_secret, slack_bot_token,
    slack_app_token in the file).
    A bad value is reported and its default kept.
";

/// The help of `command` (`None`: of them all): its usage, options and
/// examples, then where settings come from.
pub fn help(command: Option<&str>) -> String {
    let sections: &[&str] = match command {
        Some("replay") => &[HELP_REPLAY],
        Some("eval") => &[HELP_EVAL],
        Some("serve") => &[HELP_SERVE],
        Some("doctor") => &[HELP_DOCTOR],
        Some("redrive") => &[HELP_REDRIVE],
        Some("settings") => &[HELP_SETTINGS_COMMAND],
        _ => &[
            HELP_HEAD,
            HELP_REPLAY,
            HELP_EVAL,
            HELP_SERVE,
            HELP_DOCTOR,
            HELP_REDRIVE,
            HELP_SETTINGS_COMMAND,
        ],
    };
    let mut text: String = sections.concat();
    text.push_str(HELP_SETTINGS);
    text
}

/// What `myao --version` prints.
pub fn version() -> String {
    format!("myao {}\n", env!("CARGO_PKG_VERSION"))
}
