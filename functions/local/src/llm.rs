//! The LLM of the local commands, as the functions have it: each role's
//! calls go to its provider ([`myao_llm::LlmRouter`]), the OpenAI-compatible endpoint
//! of `llm_base_url` or Amazon Bedrock. Bedrock is reached with the caller's
//! AWS configuration (`AWS_REGION`, `AWS_PROFILE` and the credentials the
//! AWS CLI would use), and only when a role asks for it: a run on OpenAI
//! alone needs no AWS account.

use std::sync::Arc;

use anyhow::bail;
use myao_core::ports::{Llm, LlmRole, Metrics, SettingsProvider};
use myao_domain::settings::LlmProvider;
use myao_domain::Settings;
use myao_llm::bedrock::BedrockLlm;
use myao_llm::bedrock_embeddings::BedrockEmbedder;
use myao_llm::provider;
use myao_wire::Bedrock;

/// The three roles, in the order they are shown.
pub const ROLES: [LlmRole; 3] = [LlmRole::Judgment, LlmRole::Response, LlmRole::Memory];

/// Whether any role's calls go to `wanted`.
pub fn uses(settings: &Settings, wanted: LlmProvider) -> bool {
    ROLES.iter().any(|role| provider(settings, *role) == wanted)
}

/// Whether any role's calls go to the OpenAI-compatible endpoint, which
/// may want the API key.
pub fn uses_openai(settings: &Settings) -> bool {
    uses(settings, LlmProvider::OpenAi)
}

/// A Bedrock client reading `settings`, when `current` (their value now)
/// sends a role to Bedrock; `None` otherwise.
pub async fn bedrock_if_asked(
    current: &Settings,
    settings: Arc<dyn SettingsProvider>,
) -> anyhow::Result<Option<Arc<dyn Llm>>> {
    if !uses(current, LlmProvider::Bedrock) {
        return Ok(None);
    }
    let metrics = Arc::new(myao_core::adapters::metrics::NoMetrics);
    Ok(bedrock(current, settings, metrics).await?.map(|b| b.llm))
}

/// Amazon Bedrock's LLM and embedder, reading `settings`, when `current`
/// sends a role to Bedrock or its `embedder` names a Bedrock model; `None`
/// otherwise. The caller's AWS configuration must name a Region. The LLM
/// reports its calls to `metrics`, as the functions' does.
pub async fn bedrock(
    current: &Settings,
    settings: Arc<dyn SettingsProvider>,
    metrics: Arc<dyn Metrics>,
) -> anyhow::Result<Option<Bedrock>> {
    let embeds = current.embedder.model_of(LlmProvider::Bedrock).is_some();
    if !uses(current, LlmProvider::Bedrock) && !embeds {
        return Ok(None);
    }
    let config = myao_aws::sdk_config().await;
    if config.region().is_none() {
        bail!(
            "llm_provider (or a role's provider) is bedrock, but no AWS region is set: set \
             AWS_REGION (or AWS_DEFAULT_REGION) to the Region of the Bedrock models"
        );
    }
    Ok(Some(Bedrock {
        llm: Arc::new(BedrockLlm::new(&config, settings.clone()).with_metrics(metrics)),
        embedder: Arc::new(BedrockEmbedder::new(&config, settings)),
    }))
}

/// Where the calls go, for a report: `llm_base_url` and or Amazon Bedrock,
/// with each role's model.
pub fn label(settings: &Settings) -> String {
    let place = match (
        uses(settings, LlmProvider::OpenAi),
        uses(settings, LlmProvider::Bedrock),
    ) {
        (true, true) => format!("{} and Amazon Bedrock", settings.llm_base_url),
        (false, true) => "Amazon Bedrock".to_owned(),
        _ => settings.llm_base_url.clone(),
    };
    let mixed = uses(settings, LlmProvider::OpenAi) && uses(settings, LlmProvider::Bedrock);
    let roles: Vec<String> = ROLES
        .iter()
        .map(|role| {
            let model = myao_llm::model_name(settings, *role);
            if mixed {
                format!("{} {model} on {}", role.as_str(), provider(settings, *role))
            } else {
                format!("{} {model}", role.as_str())
            }
        })
        .collect();
    format!("{place} ({})", roles.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> Settings {
        let (settings, issues) = Settings::from_pairs(pairs.iter().copied());
        assert!(issues.is_empty(), "{issues:?}");
        settings
    }

    #[test]
    fn the_label_names_where_each_role_goes() {
        let openai = settings(&[("llm_base_url", "http://127.0.0.1:9/v1")]);
        assert_eq!(
            label(&openai),
            "http://127.0.0.1:9/v1 (judgment gpt-4.1-mini, response gpt-4.1, memory gpt-4.1-mini)"
        );
        assert!(uses(&openai, LlmProvider::OpenAi) && !uses(&openai, LlmProvider::Bedrock));
        let bedrock = settings(&[
            ("llm_provider", "bedrock"),
            ("judgment_model", "us.amazon.nova-lite-v1:0"),
        ]);
        assert!(label(&bedrock).starts_with("Amazon Bedrock (judgment us.amazon.nova-lite-v1:0"));
        let mixed = settings(&[
            ("llm_base_url", "http://127.0.0.1:9/v1"),
            ("memory_provider", "bedrock"),
        ]);
        assert_eq!(
            label(&mixed),
            "http://127.0.0.1:9/v1 and Amazon Bedrock (judgment gpt-4.1-mini on openai, \
             response gpt-4.1 on openai, memory gpt-4.1-mini on bedrock)"
        );
    }

    #[tokio::test]
    async fn no_bedrock_client_unless_a_role_asks_for_one() {
        let openai = settings(&[]);
        let provider: Arc<dyn SettingsProvider> = Arc::new(
            myao_core::adapters::system::FixedSettings::new(openai.clone()),
        );
        let made = bedrock_if_asked(&openai, provider).await.expect("no error");
        assert!(made.is_none());
    }
}
