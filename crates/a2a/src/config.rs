//! The `config:` block of a preset row of `kind: a2a`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How long the provider waits, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Timeouts {
    /// Connecting to the agent (the card, a message, a re-subscribe). Default 10 s.
    pub connect_ms: u64,
    /// The longest the agent may send nothing at all on a task's stream (neither an event nor
    /// a keep-alive; a `subagent serve` and the official SDKs send one every 15 s), and the
    /// longest a lost stream is tried again: past it the run fails, saying so. Default 60 s.
    pub idle_ms: u64,
    /// The longest one run may take (its remote task is then cancelled and the run fails);
    /// none by default.
    pub total_ms: Option<u64>,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect_ms: 10_000,
            idle_ms: 60_000,
            total_ms: None,
        }
    }
}

/// How much the provider reads of what the agent sends, in bytes: past a bound the agent is
/// refused (`PROTOCOL`) or the run fails, saying which bound; nothing is read whole first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// The agent card. Default 1 MiB (a `subagent serve`'s card with a hundred rows is well
    /// under 100 KiB).
    pub card_bytes: usize,
    /// One event of a task's stream (its `data:` lines together, or one line of any field) and
    /// one JSON-RPC answer. Default 8 MiB (an event with a large tool result fits).
    pub event_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            card_bytes: 1 << 20,
            event_bytes: 8 << 20,
        }
    }
}

/// The `config:` block of an `a2a` row: which agent, which of its skills, how to authenticate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct A2aConfig {
    /// The agent's URL: its base (`https://agents.example.com`, the card is read from
    /// `/.well-known/agent-card.json` under it) or its card's URL itself.
    pub url: String,
    /// The environment variable holding the bearer token sent as `Authorization: Bearer …`
    /// (read once when the provider is built; treated as a secret: no child inherits it).
    #[serde(default)]
    pub token_env: Option<String>,
    /// The skill to run (a `subagent serve`'s delegation row or agent type); default: the
    /// card's first. A plain A2A agent has no way to be sent to a skill: there it only has to
    /// exist in the card.
    #[serde(default)]
    pub skill: Option<String>,
    /// Timeouts.
    #[serde(default)]
    pub timeouts: Timeouts,
    /// For an agent that is not a `subagent serve`: it keeps a conversation per context, so
    /// `resume` may continue a finished run's context (a new task with the same `contextId`).
    /// A2A cannot say whether an agent does; off by default (the row then declares no
    /// `resume`). A `subagent serve` resumes by continuing the task, whatever this says.
    #[serde(default)]
    pub resume_by_context: bool,
    /// Bounds on what the agent sends.
    #[serde(default)]
    pub limits: Limits,
    /// Let the card send requests (and the token) to a JSON-RPC interface on another host than
    /// `url`'s (a card that names its public address behind a proxy, say). Off by default: a
    /// card naming another host is refused. Redirects to another host are refused whatever
    /// this says.
    #[serde(default)]
    pub allow_other_host: bool,
}

impl A2aConfig {
    /// A config for the agent at `url` with the defaults.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            token_env: None,
            skill: None,
            timeouts: Timeouts::default(),
            resume_by_context: false,
            limits: Limits::default(),
            allow_other_host: false,
        }
    }

    /// Checks what serde cannot: an `http` or `https` URL, timeouts above zero.
    pub fn validate(&self) -> Result<()> {
        let url = self.url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(Error::config(format!(
                "`url` {url:?} is not an http:// or https:// URL"
            )));
        }
        if self.timeouts.connect_ms == 0 || self.timeouts.idle_ms == 0 {
            return Err(Error::config(
                "`timeouts.connect_ms` and `timeouts.idle_ms` must be above zero",
            ));
        }
        if self.token_env.as_deref().is_some_and(str::is_empty) {
            return Err(Error::config("`token_env` is empty"));
        }
        Ok(())
    }

    /// Where the card is read: `url` itself when it names a `.json` file, else the well-known
    /// path under it.
    pub fn card_url(&self) -> String {
        let url = self.url.trim();
        if url.ends_with(".json") {
            url.to_owned()
        } else {
            format!(
                "{}{}",
                url.trim_end_matches('/'),
                crate::card::AGENT_CARD_PATH
            )
        }
    }

    /// The connect timeout.
    pub fn connect(&self) -> Duration {
        Duration::from_millis(self.timeouts.connect_ms)
    }

    /// The idle timeout.
    pub fn idle(&self) -> Duration {
        Duration::from_millis(self.timeouts.idle_ms)
    }

    /// The overall limit of one run.
    pub fn total(&self) -> Option<Duration> {
        self.timeouts.total_ms.map(Duration::from_millis)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn reads_a_row_and_finds_the_card() {
        let config: A2aConfig = serde_json::from_value(serde_json::json!({
            "url": "https://agents.example.com/",
            "token_env": "AGENTS_TOKEN",
            "skill": "explore",
            "timeouts": {"idle_ms": 5000},
        }))
        .unwrap();
        config.validate().unwrap();
        assert_eq!(
            (config.card_url(), config.idle(), config.connect()),
            (
                "https://agents.example.com/.well-known/agent-card.json".to_owned(),
                Duration::from_secs(5),
                Duration::from_secs(10)
            )
        );
        let direct = A2aConfig::new("http://127.0.0.1:9/card.json");
        assert_eq!(direct.card_url(), "http://127.0.0.1:9/card.json");
    }

    #[test]
    fn refuses_what_cannot_work() {
        assert!(
            serde_json::from_value::<A2aConfig>(serde_json::json!({"url": "http://a", "nope": 1}))
                .is_err()
        );
        assert!(A2aConfig::new("ftp://a").validate().is_err());
        let mut zero = A2aConfig::new("http://a");
        zero.timeouts.idle_ms = 0;
        assert!(zero.validate().is_err());
    }
}
