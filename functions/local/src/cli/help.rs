//! What the help shows after the options: each command's examples, and
//! where settings come from. The rest of the help is generated from the
//! definitions in [`super::args`].

/// The end of `myao --help`: the commonest commands, and the settings.
pub const MYAO: &str = "\
Examples:
  myao replay functions/local/examples/export
  myao eval functions/local/examples/export --html report.html
  MYAO_SLACK_APP_TOKEN=xapp-... MYAO_SLACK_BOT_TOKEN=xoxb-... myao serve --socket-mode
  myao doctor --stack stack.json
  myao help replay

Settings:
  The names of the SSM parameters (min_wait_seconds, jitter_ratio, llm_base_url,
  persona_name, ...), from --config and from the environment as MYAO_<NAME>
  (MYAO_MIN_WAIT_SECONDS=30), the environment winning.
  Secrets: MYAO_LLM_API_KEY, MYAO_SLACK_SIGNING_SECRET, MYAO_SLACK_BOT_TOKEN,
  MYAO_SLACK_APP_TOKEN (or llm_api_key, slack_signing_secret, slack_bot_token,
  slack_app_token in the file).
  A bad value is reported and its default kept.";

/// The end of `myao replay --help`.
pub const REPLAY: &str = "\
Examples:
  myao replay functions/local/examples/export
  myao replay export.zip --channel general --from 2026-01-05 --json
  MYAO_LLM_BASE_URL=http://localhost:11434/v1 myao replay export.zip";

/// The end of `myao eval --help`.
pub const EVAL: &str = "\
Examples:
  myao eval functions/local/examples/export
  myao eval export.zip --json > eval.json
  myao eval export.zip --html report.html";

/// The end of `myao serve --help`.
pub const SERVE: &str = "\
Examples:
  MYAO_SLACK_SIGNING_SECRET=... MYAO_SLACK_BOT_TOKEN=xoxb-... myao serve
  MYAO_SLACK_APP_TOKEN=xapp-... MYAO_SLACK_BOT_TOKEN=xoxb-... myao serve --socket-mode";

/// The end of `myao doctor --help`.
pub const DOCTOR: &str = "\
Examples:
  aws cloudformation describe-stacks --stack-name myao > stack.json
  myao doctor --stack stack.json
  sam list stack-outputs --stack-name myao --output json | myao doctor --stack -";

/// The end of `myao redrive --help`.
pub const REDRIVE: &str = "\
Examples:
  myao redrive --stack stack.json --dry-run
  myao redrive --stack stack.json";

/// The end of `myao feedback --help`.
pub const FEEDBACK: &str = "\
Examples:
  myao feedback --stack stack.json
  myao feedback --stack stack.json --channel C0123456789 --json
  myao feedback reset --stack stack.json --channel C0123456789";

/// The end of `myao settings --help`.
pub const SETTINGS: &str = "\
Examples:
  myao settings list
  myao settings list --stack stack.json
  myao settings set chattiness quiet --stage prod
  myao settings get chattiness --stage prod
  myao settings unset chattiness --stage prod";

/// The end of `myao completions --help`.
pub const COMPLETIONS: &str = "\
Examples:
  myao completions bash > ~/.local/share/bash-completion/completions/myao
  myao completions zsh > ~/.zfunc/_myao    # a folder on $fpath
  myao completions fish > ~/.config/fish/completions/myao.fish";
