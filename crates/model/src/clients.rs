//! Building a model from its configuration: the one module that knows every client. It sits
//! above them and above [`crate::ModelConfig`] (plain data, which depends on no client), so the
//! crate's modules point one way.

use std::sync::Arc;

use crate::anthropic::AnthropicModel;
use crate::chat::ChatModel;
use crate::config::{ApiKey, ModelConfig, ModelKind};
use crate::error::{Error, Result};
use crate::http::HttpClient;
use crate::responses::ResponsesModel;
use crate::scenario::Scenarios;
use crate::scripted::ScriptedModel;
use crate::types::Model;

/// Builds the model a configuration describes, reading the key from the process environment
/// (`subagent_session::env`, where a key withdrawn from the environment block is kept).
pub fn build(config: &ModelConfig) -> Result<Arc<dyn Model>> {
    build_with_env(config, subagent_session::env::var)
}

/// Builds the model a configuration describes, reading variables through `env` (tests pass a
/// closure instead of mutating the process environment).
pub fn build_with_env(
    config: &ModelConfig,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Model>> {
    if config.max_answer_bytes == 0 {
        return Err(Error::Config {
            message: "max_answer_bytes must be at least 1".into(),
        });
    }
    if config.kind == ModelKind::Scripted {
        let scripted = match &config.scenario {
            Some(path) => ScriptedModel::new(config.model.clone(), Scenarios::load(path)?)
                .with_scenario_file(path),
            None => ScriptedModel::offline_demo(config.model.clone())?,
        };
        return Ok(Arc::new(
            scripted.with_max_answer_bytes(config.max_answer_bytes),
        ));
    }
    let key_env = config.key_env();
    let key = match &key_env {
        Some(name) => env(name).filter(|v| !v.is_empty()).map(ApiKey::new),
        None => None,
    };
    if key.is_none() && config.kind != ModelKind::OpenaiChat {
        return Err(Error::Auth {
            message: format!(
                "environment variable {} is not set",
                key_env.as_deref().unwrap_or("(none configured)")
            ),
        });
    }
    let base = config
        .base_url
        .clone()
        .unwrap_or_else(|| config.kind.default_base_url().to_owned());
    let http = HttpClient::new(&base, key, config.timeouts, config.retry)?
        .with_max_answer_bytes(config.max_answer_bytes);
    Ok(match config.kind {
        ModelKind::Anthropic => Arc::new(AnthropicModel::new(http, config.model.clone())),
        ModelKind::OpenaiResponses => Arc::new(ResponsesModel::new(http, config.model.clone())),
        ModelKind::OpenaiChat | ModelKind::Scripted => Arc::new(
            ChatModel::new(http, config.model.clone()).with_effort(config.reasoning_effort),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_key_names_the_variable_only() {
        let config = ModelConfig::new(ModelKind::Anthropic, "m").with_base_url("http://x");
        let err = build_with_env(&config, |_| None)
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("model authentication failed: environment variable ANTHROPIC_API_KEY is not set")
        );
    }
}
