//! Model configuration, embedded in presets: plain data. Building a model from it is
//! [`crate::build`]'s (the `build` module), so this module depends on no client.

use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Error;

/// The cap on one answer when none is configured: 8 MiB of text, thinking and tool calls, some
/// ten times the longest answer today's models give (128k output tokens at about 4 bytes each
/// is 512 KiB).
pub const DEFAULT_MAX_ANSWER_BYTES: u64 = 8 * 1024 * 1024;

/// Which protocol a model speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ModelKind {
    /// Anthropic Messages API (`POST {base}/v1/messages`).
    Anthropic,
    /// OpenAI Responses API (`POST {base}/v1/responses`).
    OpenaiResponses,
    /// OpenAI Chat Completions (`POST {base}/v1/chat/completions`): also Ollama, vLLM,
    /// llama.cpp's server, LM Studio.
    OpenaiChat,
    /// The offline scripted model, driven by a scenario file.
    Scripted,
}

impl ModelKind {
    /// The name used in configuration files.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenaiResponses => "openai-responses",
            Self::OpenaiChat => "openai-chat",
            Self::Scripted => "scripted",
        }
    }

    /// The base URL used when none is configured.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::Anthropic => "https://api.anthropic.com",
            Self::OpenaiResponses | Self::OpenaiChat => "https://api.openai.com",
            Self::Scripted => "",
        }
    }

    /// The API key variable used when none is configured.
    pub fn default_api_key_env(self) -> Option<&'static str> {
        match self {
            Self::Anthropic => Some("ANTHROPIC_API_KEY"),
            Self::OpenaiResponses | Self::OpenaiChat => Some("OPENAI_API_KEY"),
            Self::Scripted => None,
        }
    }
}

/// Timeouts in milliseconds. Keep-alives (Anthropic's `ping` event, SSE comment lines, events
/// with empty data) are not part of the answer: they hold neither the first-byte nor the idle
/// timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Timeouts {
    /// Connecting (TCP + TLS).
    pub connect_ms: u64,
    /// From sending the request to the first event of the streamed answer.
    pub first_byte_ms: u64,
    /// The longest wait for the next event of an answer that has started.
    pub idle_ms: u64,
    /// The longest a whole request may take, retries included: from sending it to the end of
    /// the streamed answer, however steadily the answer streams.
    pub total_ms: u64,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect_ms: 10_000,
            first_byte_ms: 300_000,
            idle_ms: 120_000,
            total_ms: 600_000,
        }
    }
}

/// Retries of failed requests; they happen only before the first streamed byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RetryConfig {
    /// Retries after the first attempt (0 = none).
    pub max_retries: u32,
    /// The first backoff; it doubles on each retry. A server's `retry-after` wins when given.
    pub backoff_base_ms: u64,
    /// The longest wait between two attempts (also caps `retry-after`).
    pub max_backoff_ms: u64,
}

impl Default for RetryConfig {
    fn default() -> Self {
        Self {
            max_retries: 2,
            backoff_base_ms: 500,
            max_backoff_ms: 30_000,
        }
    }
}

impl RetryConfig {
    /// The wait before retry number `attempt` (1-based) after `error`.
    pub fn delay(&self, attempt: u32, error: &Error) -> Duration {
        let cap = Duration::from_millis(self.max_backoff_ms);
        if let Error::RateLimited {
            retry_after: Some(after),
            ..
        } = error
        {
            return (*after).min(cap);
        }
        let factor = 1u64 << attempt.saturating_sub(1).min(20);
        Duration::from_millis(self.backoff_base_ms.saturating_mul(factor)).min(cap)
    }
}

/// How to reach a model. Secrets are never in it: only the name of the variable holding the
/// key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// The protocol.
    pub kind: ModelKind,
    /// The model id sent to the server (for `scripted`, a name echoed back).
    pub model: String,
    /// The server's base URL, without `/v1` (default: the provider's public API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The environment variable holding the API key (default: `ANTHROPIC_API_KEY` or
    /// `OPENAI_API_KEY`). The key is read once when the model is built. It is required for
    /// `anthropic` and `openai-responses`; `openai-chat` works without it (local servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Timeouts.
    #[serde(default)]
    pub timeouts: Timeouts,
    /// Retries before the first streamed byte.
    #[serde(default)]
    pub retry: RetryConfig,
    /// The most bytes one answer may have: its text, thinking and tool calls (ids, names,
    /// arguments) together; at least 1 (default 8388608, 8 MiB). Past it the stream is stopped
    /// (the response dropped, nothing more read) and the call fails with `ANSWER_TOO_LARGE`.
    #[serde(default = "default_max_answer_bytes")]
    #[schemars(range(min = 1))]
    pub max_answer_bytes: u64,
    /// `scripted` only: the scenario file (default: the built-in offline demo).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<PathBuf>,
    /// `openai-chat` only: the server takes `reasoning_effort` (OpenAI's does, and vLLM's and
    /// Ollama's for reasoning models), so an agent's `effort` is sent to it. Default `false`:
    /// an effort is not sent and providers on this model do not offer `effort`. (`anthropic` and
    /// `openai-responses` always take an effort.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reasoning_effort: bool,
}

impl ModelConfig {
    /// A configuration with defaults for everything but kind and model.
    pub fn new(kind: ModelKind, model: impl Into<String>) -> Self {
        Self {
            kind,
            model: model.into(),
            base_url: None,
            api_key_env: None,
            timeouts: Timeouts::default(),
            retry: RetryConfig::default(),
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
            scenario: None,
            reasoning_effort: false,
        }
    }

    /// The variable the API key is read from: `api_key_env`, else the protocol's default
    /// (none for the scripted model).
    pub fn key_env(&self) -> Option<String> {
        self.api_key_env
            .clone()
            .or_else(|| self.kind.default_api_key_env().map(str::to_owned))
    }

    /// Sets the base URL.
    pub fn with_base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }
}

fn default_max_answer_bytes() -> u64 {
    DEFAULT_MAX_ANSWER_BYTES
}

/// An API key. Its `Debug` never shows it.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_delay_doubles_and_honours_retry_after() {
        let retry = RetryConfig {
            max_retries: 5,
            backoff_base_ms: 100,
            max_backoff_ms: 1000,
        };
        let net = Error::network("x");
        assert_eq!(retry.delay(1, &net), Duration::from_millis(100));
        assert_eq!(retry.delay(2, &net), Duration::from_millis(200));
        assert_eq!(retry.delay(5, &net), Duration::from_millis(1000));
        let limited = Error::RateLimited {
            message: String::new(),
            retry_after: Some(Duration::from_millis(700)),
        };
        assert_eq!(retry.delay(1, &limited), Duration::from_millis(700));
        let long = Error::RateLimited {
            message: String::new(),
            retry_after: Some(Duration::from_secs(100)),
        };
        assert_eq!(retry.delay(1, &long), Duration::from_millis(1000));
    }

    #[test]
    fn key_never_in_debug() {
        let key = ApiKey::new("sk-secret");
        assert!(!format!("{key:?}").contains("secret"));
    }
}
