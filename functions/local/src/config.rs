//! Settings and secrets in local mode: the SSM parameter names, read from a
//! flat TOML table (`--config`) and from `MYAO_<NAME>` environment variables,
//! the environment overriding the file and command-line options overriding
//! both. A bad value is reported and its default kept, as on AWS.

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::Path;

use myao_core::adapters::system::StaticSecrets;
use myao_domain::settings::{SettingIssue, SETTING_NAMES};
use myao_domain::Settings;

/// The secret holding the LLM API key (`MYAO_LLM_API_KEY`).
pub const LLM_API_KEY: &str = "llm_api_key";
/// The secret holding Slack's signing secret (`MYAO_SLACK_SIGNING_SECRET`).
pub const SLACK_SIGNING_SECRET: &str = "slack_signing_secret";
/// The secret holding the Slack bot token (`MYAO_SLACK_BOT_TOKEN`).
pub const SLACK_BOT_TOKEN: &str = "slack_bot_token";
/// The secret holding the Slack app-level token of Socket Mode
/// (`MYAO_SLACK_APP_TOKEN`, `xapp-...`).
pub const SLACK_APP_TOKEN: &str = "slack_app_token";
/// The secret holding the app's Client Secret, for installing it through
/// "Add to Slack" (`MYAO_SLACK_CLIENT_SECRET`).
pub const SLACK_CLIENT_SECRET: &str = "slack_client_secret";
/// Every secret name, lower-case as in the TOML file.
pub const SECRET_NAMES: &[&str] = &[
    LLM_API_KEY,
    SLACK_SIGNING_SECRET,
    SLACK_BOT_TOKEN,
    SLACK_APP_TOKEN,
    SLACK_CLIENT_SECRET,
];

/// Where a value came from, for the warnings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    File(String),
    Env(String),
    Option(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File(path) => write!(f, "in {path}"),
            Origin::Env(var) => write!(f, "from {var}"),
            Origin::Option(flag) => write!(f, "from {flag}"),
        }
    }
}

/// A setting that could not be used, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    pub issue: SettingIssue,
    pub origin: Origin,
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.issue, self.origin)
    }
}

/// A settings file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read the settings file {path}")]
    Read {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error("{path} is not a valid TOML file: {error}")]
    NotToml {
        path: String,
        error: toml::de::Error,
    },
}

/// The settings and secrets of a local run.
#[derive(Debug, Clone)]
pub struct LocalConfig {
    pub settings: Settings,
    /// Bad values, each of which kept its default.
    pub issues: Vec<Issue>,
    pub secrets: StaticSecrets,
    /// Which secrets are set (and not empty). Values are never kept here.
    pub secrets_present: Vec<&'static str>,
    /// Whether `llm_base_url` was given (rather than left at its default):
    /// the replay makes a dry run otherwise.
    pub llm_base_url_set: bool,
}

impl LocalConfig {
    /// Whether the secret `name` is set and not blank.
    pub fn has_secret(&self, name: &str) -> bool {
        self.secrets_present.contains(&name)
    }
}

/// The environment variable of a setting or secret: `MYAO_` and its name in capitals.
pub fn env_var(name: &str) -> String {
    format!("MYAO_{}", name.to_ascii_uppercase())
}

/// Loads the configuration: the TOML file at `file` (if any), then the
/// `MYAO_*` variables of `env`, then `overrides` (a command-line flag and
/// its value per setting). A file that cannot be read or is not TOML is a
/// [`ConfigError`]; a bad value is an [`Issue`].
pub fn load(
    file: Option<&Path>,
    env: &[(String, String)],
    overrides: &[(&'static str, &str, String)],
) -> Result<LocalConfig, ConfigError> {
    let (mut values, mut issues) = given(file, env)?;
    for (name, flag, value) in overrides {
        values.insert(
            (*name).to_owned(),
            (value.clone(), Origin::Option((*flag).to_owned())),
        );
    }

    let mut secrets = StaticSecrets::new();
    let mut secrets_present = Vec::new();
    for name in SECRET_NAMES {
        if let Some((value, _)) = values.remove(*name) {
            if !value.trim().is_empty() {
                secrets_present.push(*name);
            }
            secrets = secrets.with(name, &value);
        }
    }
    let (settings, found) =
        Settings::from_pairs(values.iter().map(|(n, (v, _))| (n.as_str(), v.as_str())));
    for issue in found {
        let origin = values
            .get(&issue.name)
            .map(|(_, o)| o.clone())
            .unwrap_or(Origin::Option(String::new()));
        issues.push(Issue { issue, origin });
    }
    let llm_base_url_set = values.contains_key("llm_base_url")
        && !issues.iter().any(|i| i.issue.name == "llm_base_url");
    Ok(LocalConfig {
        settings,
        issues,
        secrets,
        secrets_present,
        llm_base_url_set,
    })
}

/// A setting's or secret's text and where it came from, by name.
pub type Given = BTreeMap<String, (String, Origin)>;

/// What the TOML file at `file` (if any) and then the `MYAO_*` variables of
/// `env` give, the later replacing the earlier; and the file's values that
/// are not plain text, numbers or booleans.
pub fn given(
    file: Option<&Path>,
    env: &[(String, String)],
) -> Result<(Given, Vec<Issue>), ConfigError> {
    let mut values = Given::new();
    let mut issues = Vec::new();
    if let Some(path) = file {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: shown.clone(),
            source,
        })?;
        let table: toml::Table = text.parse().map_err(|error| ConfigError::NotToml {
            path: shown.clone(),
            error,
        })?;
        for (name, value) in table {
            let origin = Origin::File(shown.clone());
            match plain(&value) {
                Some(text) => {
                    values.insert(name, (text, origin));
                }
                None => issues.push(Issue {
                    issue: SettingIssue {
                        name,
                        value: value.to_string().chars().take(80).collect(),
                        problem: "not a plain value (text, number or boolean)".to_owned(),
                    },
                    origin,
                }),
            }
        }
    }
    for name in SETTING_NAMES.iter().chain(SECRET_NAMES) {
        let var = env_var(name);
        if let Some((_, value)) = env.iter().find(|(k, _)| *k == var) {
            values.insert((*name).to_owned(), (value.clone(), Origin::Env(var)));
        }
    }
    Ok((values, issues))
}

/// A TOML value as the text SSM would hold; `None` for arrays and tables.
fn plain(value: &toml::Value) -> Option<String> {
    match value {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(x) => Some(x.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        toml::Value::Datetime(d) => Some(d.to_string()),
        toml::Value::Array(_) | toml::Value::Table(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use myao_core::ports::Secrets;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[tokio::test]
    async fn env_overrides_the_file_and_secrets_are_kept_apart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("myao.toml");
        std::fs::write(
            &path,
            "min_wait_seconds = 60\njitter_ratio = 0.1\nautonomous_replies = false\n\
             persona_name = \"tama\"\nslack_bot_token = \"xoxb-file\"\n\
             slack_app_token = \"xapp-file\"\n",
        )
        .unwrap();
        let c = load(
            Some(&path),
            &env(&[
                ("MYAO_MIN_WAIT_SECONDS", "30"),
                ("MYAO_SLACK_BOT_TOKEN", "xoxb-env"),
                ("MYAO_TABLE", "ignored: not a local setting"),
            ]),
            &[],
        )
        .unwrap();
        assert!(c.issues.is_empty(), "{:?}", c.issues);
        assert_eq!(c.settings.min_wait_seconds, 30);
        assert_eq!(c.settings.jitter_ratio, 0.1);
        assert!(!c.settings.autonomous_replies);
        assert_eq!(c.settings.persona_name, "tama");
        assert_eq!(c.secrets.get(SLACK_BOT_TOKEN).await.unwrap(), "xoxb-env");
        assert!(c.has_secret(SLACK_BOT_TOKEN));
        // Socket Mode's token is a secret like the others, not a setting.
        assert_eq!(c.secrets.get(SLACK_APP_TOKEN).await.unwrap(), "xapp-file");
        assert!(c.has_secret(SLACK_APP_TOKEN));
        assert!(!c.has_secret(LLM_API_KEY));
        assert!(!c.llm_base_url_set);
    }

    #[test]
    fn bad_values_are_reported_with_their_origin_and_keep_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("myao.toml");
        std::fs::write(
            &path,
            "min_wait_seconds = \"soon\"\nmodels = [1, 2]\nmessage_limit = 5\n",
        )
        .unwrap();
        let c = load(
            Some(&path),
            &env(&[("MYAO_JITTER_RATIO", "2"), ("MYAO_LLM_BASE_URL", "ftp://x")]),
            &[],
        )
        .unwrap();
        assert_eq!(c.settings.min_wait_seconds, 300);
        assert_eq!(c.settings.jitter_ratio, 0.3);
        assert_eq!(c.settings.message_limit, 5);
        let mut names: Vec<_> = c.issues.iter().map(|i| i.issue.name.as_str()).collect();
        names.sort();
        assert_eq!(
            names,
            ["jitter_ratio", "llm_base_url", "min_wait_seconds", "models"]
        );
        let jitter = c
            .issues
            .iter()
            .find(|i| i.issue.name == "jitter_ratio")
            .unwrap();
        assert!(
            jitter.to_string().contains("from MYAO_JITTER_RATIO"),
            "{jitter}"
        );
        assert!(!c.llm_base_url_set, "a bad URL is no endpoint");
    }

    #[test]
    fn options_override_everything_and_a_base_url_counts_as_configured() {
        let c = load(
            None,
            &env(&[("MYAO_PERSONA_NAME", "tama")]),
            &[
                ("persona_name", "--bot-name", "mike".to_owned()),
                (
                    "llm_base_url",
                    "--llm-base-url",
                    "http://127.0.0.1:9/v1".to_owned(),
                ),
            ],
        )
        .unwrap();
        assert_eq!(c.settings.persona_name, "mike");
        assert!(c.llm_base_url_set);
    }

    #[test]
    fn an_unreadable_or_invalid_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, "min_wait_seconds = = 3").unwrap();
        let e = load(Some(&path), &[], &[]).unwrap_err().to_string();
        assert!(
            e.contains("bad.toml") && e.contains("not a valid TOML"),
            "{e}"
        );
        let e = load(Some(&dir.path().join("missing.toml")), &[], &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing.toml"), "{e}");
    }
}
