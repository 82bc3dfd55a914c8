//! `myao settings`: every setting's value and where it comes from, and a
//! deployed stack's settings read, changed and reset, each value parsed by
//! the parser the functions use before anything is written.
//!
//! Without a stack it shows the local mode's settings (the defaults, the
//! `--config` file, the `MYAO_*` environment); with one, the SSM parameters
//! under the stack's settings path.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use aws_sdk_ssm::error::ProvideErrorMetadata as _;
use aws_sdk_ssm::types::ParameterType;
use myao_domain::address::common_word;
use myao_domain::settings::{SettingDoc, SETTING_NAMES};
use myao_domain::{Settings, TeamId};

use crate::config::{self, Origin, SECRET_NAMES};

/// Where a setting's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    /// A parameter under the settings path.
    Ssm,
    /// The local mode's file or environment.
    Local(Origin),
    /// An installed workspace's own parameter (`{path}teams/{team}/`).
    Team(TeamId),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::Ssm => f.write_str("SSM"),
            Source::Local(Origin::File(path)) => write!(f, "file {path}"),
            Source::Local(Origin::Env(var)) => write!(f, "environment {var}"),
            Source::Local(Origin::Option(flag)) => write!(f, "option {flag}"),
            Source::Team(team) => write!(f, "SSM, team {team}"),
        }
    }
}

/// Settings' values by name, each with where it comes from.
pub type Given = BTreeMap<String, (String, Source)>;

/// One setting as `myao settings list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: &'static str,
    /// The value in effect, as text (empty: none).
    pub value: String,
    pub source: Source,
    /// Why the value given could not be used (the default is in effect).
    pub problem: Option<String>,
}

impl Entry {
    /// The entry's line: name, value (cut to `width` characters, on one
    /// line), source, and the problem if any.
    pub fn line(&self, width: usize) -> String {
        let value = if self.value.is_empty() {
            "(none)".to_owned()
        } else {
            one_line(&self.value, width)
        };
        let mut line = format!("{:<34} {:<width$} {}", self.name, value, self.source);
        if let Some(problem) = &self.problem {
            line.push_str(&format!(" (invalid: {problem}; the default is used)"));
        }
        line.trim_end().to_owned()
    }
}

/// `text` on one line, cut to `width` characters with an ellipsis.
fn one_line(text: &str, width: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= width {
        return flat;
    }
    let mut cut: String = flat.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Every setting, in the list's order, from the values `given` (name to
/// text and source): the value in effect, where it comes from, and why a
/// value given was not used. Names that are no setting are left out (see
/// [`unknown`]).
pub fn entries(given: &Given) -> Vec<Entry> {
    let pairs = given.iter().map(|(n, (v, _))| (n.as_str(), v.as_str()));
    let (settings, issues) = Settings::from_pairs(pairs);
    SETTING_NAMES
        .iter()
        .map(|&name| {
            // A value the combination checks reset (with the others of its
            // combination) parses alone but is not the one in effect.
            let reset = || {
                let (text, _) = given.get(name)?;
                let mut alone = Settings::default();
                alone.apply(name, text).ok()?;
                let effective = settings.text_of(name)?;
                // The combination's issue is filed under one of its
                // settings and names the others in its problem.
                (alone.text_of(name)? != effective).then(|| {
                    issues
                        .iter()
                        .find(|i| i.problem.contains(name))
                        .map(|i| format!("reset with {}: {}", i.name, i.problem))
                        .unwrap_or_else(|| "reset with the settings it conflicts with".to_owned())
                })
            };
            let problem = issues
                .iter()
                .find(|i| i.name == name)
                .map(|i| i.problem.clone())
                .or_else(reset);
            Entry {
                name,
                value: settings.text_of(name).unwrap_or_default(),
                source: given
                    .get(name)
                    .map(|(_, s)| s.clone())
                    .unwrap_or(Source::Default),
                problem,
            }
        })
        .collect()
}

/// The names given that are no setting and no secret: a typo, or a
/// parameter left over. Their values are never shown (one may be a secret
/// stored in the wrong place).
pub fn unknown(given: &Given) -> Vec<&str> {
    given
        .keys()
        .map(String::as_str)
        .filter(|n| !SETTING_NAMES.contains(n) && !SECRET_NAMES.contains(n))
        .collect()
}

/// The local mode's values: the `--config` file, then the environment;
/// and the file's values that are not plain (a TOML array), which count as
/// not given.
pub fn local(
    file: Option<&Path>,
    env: &[(String, String)],
) -> Result<(Given, Vec<config::Issue>), config::ConfigError> {
    let (values, issues) = config::given(file, env)?;
    let values = values
        .into_iter()
        .filter(|(name, _)| !SECRET_NAMES.contains(&name.as_str()))
        .map(|(name, (value, origin))| (name, (value, Source::Local(origin))))
        .collect();
    Ok((values, issues))
}

/// Why `myao settings` will not do what was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("{name} is no setting{}", suggestion(.name))]
    Unknown { name: String },
    #[error("{name}: {problem}; nothing was written")]
    Invalid { name: String, problem: String },
    /// A setting the stack's own parameter holds: a deploy changes it.
    #[error(
        "{name} is set by the stack's {parameter} parameter, with the permissions it needs: \
         change it with `sam deploy --parameter-overrides {parameter}=...`"
    )]
    StackOwned {
        name: String,
        parameter: &'static str,
    },
    #[error(
        "{name}: an SSM parameter cannot be empty; `myao settings unset {name}` leaves it \
         without a value"
    )]
    Empty { name: String },
}

/// ", did you mean X?" for the setting closest to `name`, if any is close.
fn suggestion(name: &str) -> String {
    let wanted = name.trim().to_ascii_lowercase();
    SETTING_NAMES
        .iter()
        .map(|n| (distance(n, &wanted), *n))
        .filter(|(d, n)| *d <= 3.max(n.len() / 5))
        .min()
        .map(|(_, n)| format!(", did you mean {n}?"))
        .unwrap_or_default()
}

/// The edit distance of `a` and `b` (insertions, deletions, substitutions).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(above + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The settings the template writes from one of its parameters, which also
/// grants what the value needs (Bedrock's IAM permissions): changed by a
/// deploy, never by `set` or `unset`.
pub const STACK_OWNED: &[(&str, &str)] = &[("llm_provider", "LlmProvider")];

/// Refuses a setting the stack's parameters own ([`STACK_OWNED`]).
fn stack_owned(name: &str) -> Result<(), Refusal> {
    match STACK_OWNED.iter().find(|(n, _)| *n == name) {
        Some((_, parameter)) => Err(Refusal::StackOwned {
            name: name.to_owned(),
            parameter,
        }),
        None => Ok(()),
    }
}

/// The catalogue's entry of `name`.
pub fn find(name: &str) -> Result<SettingDoc, Refusal> {
    Settings::catalogue()
        .into_iter()
        .find(|s| s.name == name)
        .ok_or_else(|| Refusal::Unknown {
            name: name.to_owned(),
        })
}

/// The text `value` is stored as, once parsed as the functions would, with
/// the settings `current` (name to text) around it: refused if it does not
/// parse, or if with the others it makes a combination the functions would
/// refuse (a wait longer than the age limit, calls longer than the
/// functions' timeouts).
pub fn checked(
    name: &str,
    value: &str,
    current: &BTreeMap<String, String>,
) -> Result<String, Refusal> {
    find(name)?;
    stack_owned(name)?;
    let mut alone = Settings::default();
    alone.apply(name, value).map_err(|e| Refusal::Invalid {
        name: name.to_owned(),
        problem: e.to_string(),
    })?;
    let text = alone.text_of(name).unwrap_or_default();
    if text.is_empty() {
        return Err(Refusal::Empty {
            name: name.to_owned(),
        });
    }
    let pairs = |extra: Option<(&str, &str)>| {
        let mut all: BTreeMap<&str, &str> = current
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        if let Some((n, v)) = extra {
            all.insert(n, v);
        }
        Settings::from_pairs(all).1
    };
    let before: Vec<(String, String)> = pairs(None)
        .into_iter()
        .map(|i| (i.name, i.problem))
        .collect();
    let after = pairs(Some((name, &text)));
    if let Some(new) = after
        .into_iter()
        .find(|i| !before.contains(&(i.name.clone(), i.problem.clone())))
    {
        return Err(Refusal::Invalid {
            name: name.to_owned(),
            problem: new.problem,
        });
    }
    Ok(text)
}

/// The prefix of the parameters under the settings path `path`:
/// `/myao/prod/` for `/myao/prod` or `myao/prod/`.
pub fn prefix(path: &str) -> String {
    let trimmed = path.trim_matches('/');
    if trimmed.is_empty() {
        "/".to_owned()
    } else {
        format!("/{trimmed}/")
    }
}

/// The settings under `path` in SSM, by name (plain parameters directly
/// under it; secrets and sub-paths left out).
pub async fn in_ssm(ssm: &aws_sdk_ssm::Client, path: &str) -> anyhow::Result<Given> {
    let prefix = prefix(path);
    let found = under(ssm, &prefix, &Source::Ssm).await?;
    // The stack creates every setting with a default: none at all is a
    // wrong path (or region), as the functions would say too.
    if found.is_empty() {
        anyhow::bail!(
            "no settings under {prefix} in this region: is the stage (or --settings-path) \
             the stack's SettingsPath output, and AWS_REGION its region?"
        );
    }
    Ok(found)
}

/// Where `team`'s own settings are under the settings path `path`.
pub fn team_path(path: &str, team: &TeamId) -> String {
    format!("{}teams/{team}/", prefix(path))
}

/// The settings in effect for `team`: the stack's under `path`, each
/// replaced by the team's own where it has one.
pub async fn in_ssm_for_team(
    ssm: &aws_sdk_ssm::Client,
    path: &str,
    team: &TeamId,
) -> anyhow::Result<Given> {
    let mut given = in_ssm(ssm, path).await?;
    let own = under(ssm, &team_path(path, team), &Source::Team(team.clone())).await?;
    given.extend(own);
    Ok(given)
}

/// The plain parameters directly under `prefix`, each from `source`.
async fn under(ssm: &aws_sdk_ssm::Client, prefix: &str, source: &Source) -> anyhow::Result<Given> {
    let mut found = BTreeMap::new();
    let mut pages = ssm
        .get_parameters_by_path()
        .path(prefix.trim_end_matches('/'))
        .recursive(false)
        .with_decryption(false)
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| aws_error("read the settings under", prefix, &e))?;
        for p in page.parameters() {
            let Some(name) = p.name().and_then(|n| n.strip_prefix(prefix)) else {
                continue;
            };
            if name.contains('/') || p.r#type() == Some(&ParameterType::SecureString) {
                continue;
            }
            let value = p.value().unwrap_or_default().to_owned();
            found.insert(name.to_owned(), (value, source.clone()));
        }
    }
    Ok(found)
}

/// An AWS error as one line: its code and message, and what was being done.
fn aws_error<E: aws_sdk_ssm::error::ProvideErrorMetadata + fmt::Debug>(
    doing: &str,
    name: &str,
    error: &E,
) -> anyhow::Error {
    let what = match (error.code(), error.message()) {
        (Some(code), Some(message)) => format!("{code}: {message}"),
        (Some(code), None) => code.to_owned(),
        _ => format!("{error:?}"),
    };
    anyhow::anyhow!("cannot {doing} {name}: {what}")
}

/// Writes `value` (already [`checked`]) to the parameter `name` under
/// `path`, as a String, over any value it had.
pub async fn put(
    ssm: &aws_sdk_ssm::Client,
    path: &str,
    name: &str,
    value: &str,
) -> anyhow::Result<()> {
    let parameter = format!("{}{name}", prefix(path));
    ssm.put_parameter()
        .name(&parameter)
        .value(value)
        .r#type(ParameterType::String)
        .overwrite(true)
        .send()
        .await
        .map_err(|e| aws_error("write", &parameter, &e))?;
    Ok(())
}

/// Writes `value` to setting `name` under `path` (a stack's settings
/// path, or a team's), checked first against `given`, the values in effect
/// there; answers the text written.
pub async fn set_checked(
    ssm: &aws_sdk_ssm::Client,
    path: &str,
    given: &Given,
    name: &str,
    value: &str,
) -> anyhow::Result<String> {
    let current = given
        .iter()
        .map(|(n, (v, _))| (n.clone(), v.clone()))
        .collect();
    let text = checked(name, value, &current)?;
    put(ssm, path, name, &text).await?;
    Ok(text)
}

/// The bot's names that are also common words (`max`): the address rules
/// read them strictly, so most uses of them go to the judge rather than
/// being answered at once. `myao settings set` and `myao doctor` say so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommonNames {
    /// Each common name, with the setting that gives it.
    pub common: Vec<(String, &'static str)>,
    /// The names it answers to that are no common word.
    pub others: Vec<String>,
}

impl CommonNames {
    /// The names of `settings` that are common words; `None` if none is.
    pub fn of(settings: &Settings) -> Option<CommonNames> {
        let mut common = Vec::new();
        let mut others = Vec::new();
        let persona = settings.persona_name.trim().to_lowercase();
        for name in settings.names() {
            let name = name.trim();
            if name.is_empty() {
                continue;
            }
            if common_word(name) {
                let from = if name.to_lowercase() == persona {
                    "persona_name"
                } else {
                    "name_aliases"
                };
                common.push((name.to_owned(), from));
            } else {
                others.push(name.to_owned());
            }
        }
        (!common.is_empty()).then_some(CommonNames { common, others })
    }

    /// What the common names do to the bot's hearing.
    pub fn problem(&self) -> String {
        let (name, _) = &self.common[0];
        let names: Vec<String> = self
            .common
            .iter()
            .map(|(n, from)| format!("{n} ({from})"))
            .collect();
        format!(
            "{} {} also a common word: only the clearest calls by it are answered at once \
             (\"{name}, ...\", \"hey {name}\", \"@{name} ...\", \"..., {name}?\", \"{name} can you \
             ...?\"); \"{name} batch size?\" and its other uses go to the judge like any message",
            names.join(", "),
            if names.len() == 1 { "is" } else { "are" },
        )
    }

    /// How `name_aliases` helps.
    pub fn advice(&self) -> String {
        if self.others.is_empty() {
            let (name, _) = &self.common[0];
            format!(
                "give it a name that is no common word in name_aliases (`myao settings set \
                 name_aliases {name}bot`): every way of calling it by that name is read \
                 (\"{name}bot what's up\", \"thoughts {name}bot?\")"
            )
        } else {
            format!(
                "people can call it by {} (name_aliases), which every way of calling it reads",
                self.others.join(", ")
            )
        }
    }
}

/// What to warn of after setting `name` to `text` among the values
/// `given`: the bot's names, if that leaves one of them a common word.
pub fn caution(given: &Given, name: &str, text: &str) -> Option<CommonNames> {
    if !matches!(name, "persona_name" | "name_aliases") {
        return None;
    }
    let mut pairs: BTreeMap<&str, &str> = given
        .iter()
        .map(|(n, (v, _))| (n.as_str(), v.as_str()))
        .collect();
    pairs.insert(name, text);
    CommonNames::of(&Settings::from_pairs(pairs).0)
}

/// What `unset` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unset {
    /// The stack's parameter holds the default again.
    Default(String),
    /// The parameter (of a setting with no default) was deleted.
    Deleted,
    /// It had none.
    Already,
}

/// Puts setting `name` under `path` back to its default: the parameter
/// holds the default again where the stack creates it, and is deleted
/// where the setting has none (an SSM parameter cannot be empty).
pub async fn unset(ssm: &aws_sdk_ssm::Client, path: &str, name: &str) -> anyhow::Result<Unset> {
    let setting = find(name)?;
    stack_owned(name)?;
    if !setting.default.is_empty() {
        put(ssm, path, name, &setting.default).await?;
        return Ok(Unset::Default(setting.default));
    }
    let parameter = format!("{}{name}", prefix(path));
    match ssm.delete_parameter().name(&parameter).send().await {
        Ok(_) => Ok(Unset::Deleted),
        Err(e) if e.code() == Some("ParameterNotFound") => Ok(Unset::Already),
        Err(e) => Err(aws_error("delete", &parameter, &e)),
    }
}

/// Takes `team`'s own value of `name` back: the stack's is in effect for
/// it again.
pub async fn unset_for_team(
    ssm: &aws_sdk_ssm::Client,
    path: &str,
    team: &TeamId,
    name: &str,
) -> anyhow::Result<Unset> {
    find(name)?;
    let parameter = format!("{}{name}", team_path(path, team));
    match ssm.delete_parameter().name(&parameter).send().await {
        Ok(_) => Ok(Unset::Deleted),
        Err(e) if e.code() == Some("ParameterNotFound") => Ok(Unset::Already),
        Err(e) => Err(aws_error("delete", &parameter, &e)),
    }
}

/// The settings page's table (docs/settings.md, between its markers):
/// every setting's name, default, kind of value and doc, from the one list.
pub fn markdown_table() -> String {
    let cell = |text: &str| text.replace('|', "\\|");
    let mut table =
        String::from("| Setting | Default | Value | What it does |\n|---|---|---|---|\n");
    for setting in Settings::catalogue() {
        let default = if setting.default.is_empty() {
            "(none)".to_owned()
        } else {
            format!("`{}`", cell(&one_line(&setting.default, 40)))
        };
        table.push_str(&format!(
            "| `{}` | {default} | {} | {} |\n",
            setting.name,
            cell(&setting.kind),
            cell(&setting.doc)
        ));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(pairs: &[(&str, &str)]) -> Given {
        pairs
            .iter()
            .map(|(n, v)| ((*n).to_owned(), ((*v).to_owned(), Source::Ssm)))
            .collect()
    }

    #[test]
    fn entries_say_where_each_value_comes_from_and_what_is_wrong() {
        let list = entries(&given(&[
            ("chattiness", "quiet"),
            ("min_wait_seconds", "-5"),
            ("cooldown_secs", "1"),
        ]));
        assert_eq!(list.len(), SETTING_NAMES.len());
        let entry = |name| list.iter().find(|e| e.name == name).unwrap();
        assert_eq!(entry("chattiness").value, "quiet");
        assert_eq!(entry("chattiness").source, Source::Ssm);
        assert_eq!(entry("jitter_ratio").source, Source::Default);
        assert_eq!(entry("min_wait_seconds").value, "300");
        assert_eq!(
            entry("min_wait_seconds").problem.as_deref(),
            Some("out of range 0..=86400")
        );
        assert!(entry("channel_chattiness").line(20).contains("(none)"));
        assert_eq!(
            unknown(&given(&[("cooldown_secs", "1"), ("llm_api_key", "x")])),
            ["cooldown_secs"]
        );
    }

    #[test]
    fn a_name_that_is_a_common_word_is_warned_of_with_what_name_aliases_does() {
        // Another setting, or a name that is no common word: nothing to say.
        assert_eq!(caution(&given(&[]), "chattiness", "quiet"), None);
        assert_eq!(caution(&given(&[]), "persona_name", "tama"), None);
        let max = caution(&given(&[]), "persona_name", "max").unwrap();
        assert_eq!(
            max,
            CommonNames {
                common: vec![("max".to_owned(), "persona_name")],
                others: Vec::new(),
            }
        );
        assert!(
            max.problem().contains("\"max batch size?\""),
            "{}",
            max.problem()
        );
        assert!(
            max.advice()
                .contains("myao settings set name_aliases maxbot"),
            "{}",
            max.advice()
        );
        // An alias that is no common word already: the advice says so.
        let with_alias = caution(&given(&[("name_aliases", "maxbot")]), "persona_name", "Max");
        let with_alias = with_alias.unwrap();
        assert_eq!(with_alias.others, ["maxbot"]);
        assert!(with_alias.advice().contains("maxbot (name_aliases)"));
        // A common alias of a name that is none.
        let alias = caution(
            &given(&[("persona_name", "tama")]),
            "name_aliases",
            "echo,たま",
        );
        assert_eq!(alias.unwrap().common, [("echo".to_owned(), "name_aliases")]);
    }

    #[test]
    fn a_value_is_stored_as_the_parser_reads_it_or_refused_with_its_message() {
        let none = BTreeMap::new();
        assert_eq!(checked("proactive", "yes", &none).unwrap(), "true");
        assert_eq!(
            checked("llm_base_url", " http://x/v1/ ", &none).unwrap(),
            "http://x/v1"
        );
        assert_eq!(
            checked("chattiness", "loud", &none)
                .unwrap_err()
                .to_string(),
            "chattiness: not one of mentions_only, quiet, normal, chatty; nothing was written"
        );
        assert!(matches!(
            checked("channel_chattiness", " ", &none),
            Err(Refusal::Empty { .. })
        ));
        assert_eq!(
            checked("cooldown_secs", "1", &none)
                .unwrap_err()
                .to_string(),
            "cooldown_secs is no setting, did you mean cooldown_seconds?"
        );
        assert_eq!(
            checked("zzz", "1", &none).unwrap_err().to_string(),
            "zzz is no setting"
        );
    }

    #[test]
    fn a_value_that_breaks_a_combination_with_the_others_is_refused() {
        let current: BTreeMap<String, String> =
            [("max_message_age_seconds".to_owned(), "600".to_owned())].into();
        let refused = checked("min_wait_seconds", "500", &current).unwrap_err();
        assert!(
            refused.to_string().contains("max_message_age_seconds"),
            "{refused}"
        );
        assert_eq!(checked("min_wait_seconds", "300", &current).unwrap(), "300");
        assert!(checked("llm_timeout_seconds", "120", &BTreeMap::new()).is_err());
    }

    #[test]
    fn a_setting_the_stack_owns_is_changed_by_a_deploy() {
        let refused = checked("llm_provider", "bedrock", &BTreeMap::new()).unwrap_err();
        assert!(refused.to_string().contains("LlmProvider"), "{refused}");
    }

    #[test]
    fn values_a_combination_check_reset_say_so() {
        let list = entries(&given(&[
            ("min_wait_seconds", "500"),
            ("max_message_age_seconds", "600"),
        ]));
        for name in ["min_wait_seconds", "max_message_age_seconds"] {
            let entry = list.iter().find(|e| e.name == name).unwrap();
            let problem = entry.problem.as_deref().unwrap_or_default();
            assert!(problem.contains("reset"), "{name}: {problem:?}");
        }
        let age = list
            .iter()
            .find(|e| e.name == "max_message_age_seconds")
            .unwrap();
        assert!(
            age.problem
                .as_deref()
                .is_some_and(|p| p.starts_with("reset with min_wait_seconds")),
            "{age:?}"
        );
        // A conflict hidden behind an old problem of the same setting is
        // still refused.
        let current: BTreeMap<String, String> = [
            ("max_message_age_seconds".to_owned(), "600".to_owned()),
            ("min_wait_seconds".to_owned(), "-5".to_owned()),
        ]
        .into();
        assert!(checked("min_wait_seconds", "500", &current).is_err());
    }

    #[test]
    fn long_values_are_cut_to_one_line() {
        assert_eq!(one_line("a\nb", 10), "a b");
        assert_eq!(one_line("abcdef", 4), "abc…");
        assert_eq!(prefix("myao/prod"), "/myao/prod/");
        assert_eq!(prefix("/myao/prod/"), "/myao/prod/");
    }

    /// The settings page shows the one list: a setting added, renamed or
    /// given another default fails here until the page is regenerated
    /// (`MYAO_WRITE_DOCS=1 cargo test -p myao-local --lib settings_page`).
    #[test]
    fn the_settings_page_holds_the_one_list() {
        const BEGIN: &str = "<!-- settings:begin -->\n";
        const END: &str = "<!-- settings:end -->";
        let page = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/settings.md");
        let text = std::fs::read_to_string(&page).unwrap();
        let start = text.find(BEGIN).expect("the page's begin marker") + BEGIN.len();
        let end = text.find(END).expect("the page's end marker");
        let table = markdown_table();
        if std::env::var_os("MYAO_WRITE_DOCS").is_some() {
            let written = format!("{}{table}{}", &text[..start], &text[end..]);
            std::fs::write(&page, written).unwrap();
            return;
        }
        assert_eq!(
            &text[start..end],
            table,
            "docs/settings.md is not the list: MYAO_WRITE_DOCS=1 cargo test -p myao-local --lib \
             settings_page"
        );
    }
}
