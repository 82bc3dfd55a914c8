//! Which model and provider each role's calls use, read from the settings:
//! the adapters and the router ask alike, so it is a module of its own
//! beside them rather than in the crate's root.

use myao_core::ports::LlmRole;
use myao_domain::settings::{LlmProvider, ModelSettings};
use myao_domain::Settings;

/// The model settings of `role`.
pub fn model_settings(settings: &Settings, role: LlmRole) -> ModelSettings {
    match role {
        LlmRole::Judgment => settings.judgment(),
        LlmRole::Response => settings.response(),
        LlmRole::Memory => settings.memory(),
    }
}

/// The name of `role`'s model.
pub fn model_name(settings: &Settings, role: LlmRole) -> &str {
    match role {
        LlmRole::Judgment => &settings.judgment_model,
        LlmRole::Response => &settings.response_model,
        LlmRole::Memory => &settings.memory_model,
    }
}

/// Where `role`'s calls go: its own provider, else `llm_provider`.
pub fn provider(settings: &Settings, role: LlmRole) -> LlmProvider {
    model_settings(settings, role)
        .provider
        .unwrap_or(settings.llm_provider)
}
