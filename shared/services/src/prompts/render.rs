//! The templates, embedded in the binary, and how one is rendered: the one
//! place that knows minijinja, for the context prompts and the memory ones.

use std::sync::OnceLock;

use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

/// Every template, by name.
const TEMPLATES: &[(&str, &str)] = &[
    (
        "_context.j2",
        include_str!("../../../../templates/_context.j2"),
    ),
    (
        "_stable.j2",
        include_str!("../../../../templates/_stable.j2"),
    ),
    (
        "_people.j2",
        include_str!("../../../../templates/_people.j2"),
    ),
    (
        "_messages.j2",
        include_str!("../../../../templates/_messages.j2"),
    ),
    (
        "judgment_system.j2",
        include_str!("../../../../templates/judgment_system.j2"),
    ),
    (
        "response_system.j2",
        include_str!("../../../../templates/response_system.j2"),
    ),
    (
        "memory_system.j2",
        include_str!("../../../../templates/memory_system.j2"),
    ),
    (
        "_proactive.j2",
        include_str!("../../../../templates/_proactive.j2"),
    ),
    (
        "proactive_system.j2",
        include_str!("../../../../templates/proactive_system.j2"),
    ),
    (
        "opener_system.j2",
        include_str!("../../../../templates/opener_system.j2"),
    ),
    (
        "memory_digest.j2",
        include_str!("../../../../templates/memory_digest.j2"),
    ),
    (
        "memory_thread_short.j2",
        include_str!("../../../../templates/memory_thread_short.j2"),
    ),
    (
        "memory_channel_short.j2",
        include_str!("../../../../templates/memory_channel_short.j2"),
    ),
    (
        "memory_channel_long.j2",
        include_str!("../../../../templates/memory_channel_long.j2"),
    ),
    (
        "memory_workspace_short.j2",
        include_str!("../../../../templates/memory_workspace_short.j2"),
    ),
    (
        "memory_workspace_long.j2",
        include_str!("../../../../templates/memory_workspace_long.j2"),
    ),
    ("status.j2", include_str!("../../../../templates/status.j2")),
];

/// A template failed to render (a bug in a template, never bad input).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("prompt template {template}: {detail}")]
pub struct PromptError {
    pub template: &'static str,
    pub detail: String,
}

fn environment() -> Result<&'static Environment<'static>, PromptError> {
    static ENV: OnceLock<Result<Environment<'static>, PromptError>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_keep_trailing_newline(false);
        for (name, source) in TEMPLATES {
            env.add_template(name, source).map_err(|e| PromptError {
                template: name,
                detail: format!("{e:#}"),
            })?;
        }
        Ok(env)
    })
    .as_ref()
    .map_err(|e| PromptError {
        template: e.template,
        detail: e.detail.clone(),
    })
}

/// What Slack shows while the bot writes (`templates/status.j2`): the
/// status, then the loading messages, one a line, in `persona_name`'s voice.
pub fn status_lines(persona_name: &str) -> Result<Vec<String>, PromptError> {
    #[derive(Serialize)]
    struct View<'a> {
        name: &'a str,
    }
    let text = render("status.j2", &View { name: persona_name })?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect())
}

/// Renders `template` with `view`, then collapses runs of blank lines to
/// one so that optional sections never leave gaps.
pub fn render(template: &'static str, view: &impl Serialize) -> Result<String, PromptError> {
    let env = environment()?;
    let text = env
        .get_template(template)
        .and_then(|t| t.render(view))
        .map_err(|e| PromptError {
            template,
            detail: format!("{e:#}"),
        })?;
    Ok(collapse_blank_lines(&text))
}

fn collapse_blank_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.trim().lines() {
        if line.trim().is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
            out.push('\n');
        } else {
            blank_run = 0;
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out
}
