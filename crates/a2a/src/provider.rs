//! The `a2a` provider kind: a preset row that delegates to an A2A agent by URL.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use subagent_core::{
    BuildContext, Capabilities, Endpoint, Error as CoreError, ProviderFactory, Requirements, Run,
    StartRequest, SubagentProvider,
};

use crate::card::AgentCard;
use crate::client::{CallError, Peer, Token, fetch_card, fetch_card_blocking};
use crate::config::A2aConfig;
use crate::error::{Error, Result};
use crate::ext::{CardParams, RequestFields};
use crate::rpc::{Kind, RpcError, method};
use crate::run::{Plan, drive};
use crate::types::{Message, Role};

/// The provider kind, as written in a preset.
pub const KIND: &str = "a2a";

/// What our extension carries across the wire: every gated capability but `isolation` (the
/// registry's isolator prepares a place on this machine, where the remote child does not
/// work). A provider in front of a `subagent serve` declares its skill's table cut to this;
/// the kind declares this.
pub const CARRIED: Capabilities = {
    let mut caps = Capabilities::ALL;
    caps.isolation = false;
    // The parent's permission rules do not cross the wire: a request carrying deny or ask
    // rules is refused rather than run without them.
    caps.permission_rules = false;
    // An agent definition's own MCP servers are programs and URLs of this machine: a remote
    // does not start what a caller names.
    caps.mcp_servers = false;
    caps
};

/// What a plain A2A agent (not a `subagent serve`) can honour: nothing optional. A2A has no
/// place for an output schema, a persona, a model or a turn limit, and an agent that ended a
/// task takes no further message for it.
pub const PLAIN: Capabilities = Capabilities::NONE;

/// `ours ∩ CARRIED`.
fn carried(ours: Capabilities) -> Capabilities {
    let mut caps = ours;
    caps.isolation = false;
    caps.inherits_parent_context = false;
    // Not carried across the wire (see `CARRIED`).
    caps.permission_rules = false;
    caps.mcp_servers = false;
    caps
}

/// The agent behind a provider, as its card said when the provider was built.
#[derive(Clone, Debug)]
struct Frozen {
    endpoint: String,
    /// Our extension's skill id (for a `subagent serve`).
    skill: Option<String>,
    ours: bool,
    capabilities: Capabilities,
}

/// Reads what the provider needs from the card: the JSON-RPC 1.x endpoint, streaming, and the
/// capability table (our extension's row for the skill, else [`PLAIN`]).
fn freeze(card: &AgentCard, config: &A2aConfig) -> Result<Frozen> {
    let url = config.card_url();
    let card_error = |message: String| Error::Card {
        url: url.clone(),
        message,
    };
    let Some(interface) = card.jsonrpc_interface() else {
        return Err(card_error(
            "its card lists no JSON-RPC interface of A2A 1.x (supportedInterfaces)".to_owned(),
        ));
    };
    if !config.allow_other_host && !crate::client::same_host(config.url.trim(), &interface.url) {
        return Err(card_error(format!(
            "its card sends requests to {}, not on the host of the row's url {}: refused, the \
             token would go there (if the agent really is there, set `url` to it, or \
             `allow_other_host: true` in the row)",
            interface.url,
            config.url.trim()
        )));
    }
    if card.capabilities.streaming != Some(true) {
        return Err(card_error(
            "it does not stream (capabilities.streaming): the a2a provider follows a task by \
             its stream"
                .to_owned(),
        ));
    }
    let params = card
        .extension(crate::EXTENSION_URI)
        .and_then(|extension| extension.params.clone())
        .and_then(|params| serde_json::from_value::<CardParams>(params).ok());
    let (skill, ours, capabilities) = match params {
        Some(params) => {
            let row = match &config.skill {
                Some(skill) => params.skills.iter().find(|row| &row.skill == skill),
                None => params.skills.first(),
            };
            let Some(row) = row else {
                let skills: Vec<&str> = params.skills.iter().map(|r| r.skill.as_str()).collect();
                return Err(card_error(format!(
                    "no skill {:?} (skills: {})",
                    config.skill.as_deref().unwrap_or("(first)"),
                    skills.join(", ")
                )));
            };
            (Some(row.skill.clone()), true, carried(row.capabilities))
        }
        None => {
            if let Some(skill) = &config.skill
                && !card.skills.iter().any(|s| &s.id == skill)
            {
                let skills: Vec<&str> = card.skills.iter().map(|s| s.id.as_str()).collect();
                return Err(card_error(format!(
                    "no skill {skill:?} (skills: {})",
                    skills.join(", ")
                )));
            }
            let mut capabilities = PLAIN;
            capabilities.resume = config.resume_by_context;
            (None, false, capabilities)
        }
    };
    Ok(Frozen {
        endpoint: interface.url,
        skill,
        ours,
        capabilities,
    })
}

/// The JSON-RPC endpoint a provider built from `card` under `config` would send its requests
/// (and its token) to, or why the card is refused: what building the provider checks of a card.
/// Public only for the fuzz targets (`fuzz/`): not part of the crate's API.
#[doc(hidden)]
pub fn endpoint_of(card: &AgentCard, config: &A2aConfig) -> Result<String> {
    freeze(card, config).map(|frozen| frozen.endpoint)
}

/// Delegates to an A2A agent.
#[derive(Clone, Debug)]
pub struct A2aProvider {
    name: String,
    config: Arc<A2aConfig>,
    frozen: Frozen,
    peer: Peer,
}

impl A2aProvider {
    /// Reads the agent's card and builds the provider, its capability table frozen from it.
    pub async fn connect(
        name: impl Into<String>,
        config: A2aConfig,
        token: Option<Token>,
    ) -> Result<Self> {
        config.validate()?;
        let card = fetch_card(
            &config.card_url(),
            token.as_ref(),
            config.connect(),
            config.limits.card_bytes,
        )
        .await?;
        Self::from_card(name, config, token, &card)
    }

    /// [`A2aProvider::connect`] from synchronous code (a factory's `build`).
    pub fn connect_blocking(
        name: impl Into<String>,
        config: A2aConfig,
        token: Option<Token>,
    ) -> Result<Self> {
        config.validate()?;
        let card = fetch_card_blocking(
            &config.card_url(),
            token.as_ref(),
            config.connect(),
            config.limits.card_bytes,
        )?;
        Self::from_card(name, config, token, &card)
    }

    fn from_card(
        name: impl Into<String>,
        config: A2aConfig,
        token: Option<Token>,
        card: &AgentCard,
    ) -> Result<Self> {
        let frozen = freeze(card, &config)?;
        let peer = Peer::new(
            frozen.endpoint.clone(),
            token,
            config.connect(),
            config.limits,
        )?;
        Ok(Self {
            name: name.into(),
            config: Arc::new(config),
            frozen,
            peer,
        })
    }

    /// Whether the agent is a `subagent serve` (its card carries our extension).
    pub fn is_subagents_peer(&self) -> bool {
        self.frozen.ours
    }

    /// The agent's JSON-RPC endpoint.
    pub fn endpoint(&self) -> &str {
        &self.frozen.endpoint
    }

    /// The message a request sends: its prompt as text; for a `subagent serve` our fields in
    /// its metadata and, to resume, the finished task it continues.
    fn message(&self, request: &StartRequest) -> Message {
        let mut message = Message::text(
            subagent_core::RunId::new().to_string(),
            Role::User,
            request.prompt_text(),
        );
        if self.frozen.ours {
            let fields = RequestFields {
                skill: self.frozen.skill.clone(),
                agent_type: None,
                description: request.description.clone(),
                output_schema: request.output_schema.clone(),
                max_turns: request.max_turns,
                tool_filter: request.tool_filter.clone(),
                persona: request.persona.clone(),
                model: request.model.clone(),
                depth: Some(request.parent.depth),
                max_depth: request.max_depth,
                effort: request.effort,
                permission_ceiling: request.permission_ceiling,
            };
            message.metadata = Some(fields.into_metadata());
            message.extensions = vec![crate::EXTENSION_URI.to_owned()];
            message.task_id = request.resume.as_ref().map(|session| session.id.clone());
        } else if self.config.resume_by_context {
            message.context_id = request.resume.as_ref().map(|session| session.id.clone());
        }
        message
    }
}

/// A refusal the agent answered a message with, as the seam's error: a `subagent serve`'s
/// unchanged (same code, same fields), another agent's by its kind.
fn refusal(provider: &str, url: &str, error: CallError) -> CoreError {
    match error {
        CallError::Rpc(error) => error
            .core_error()
            .unwrap_or_else(|| foreign_refusal(provider, url, &error)),
        CallError::Unauthorized => Error::Unauthorized {
            url: url.to_owned(),
        }
        .into(),
        CallError::Unreachable(message) => Error::Unreachable {
            url: url.to_owned(),
            message,
        }
        .into(),
        CallError::Refused(message) => Error::Refused {
            url: url.to_owned(),
            message,
        }
        .into(),
    }
}

fn foreign_refusal(provider: &str, url: &str, error: &RpcError) -> CoreError {
    let text = format!("the a2a agent at {url} (provider {provider}) refused the message: {error}");
    match error.kind() {
        Some(Kind::InvalidParams | Kind::InvalidRequest | Kind::ContentTypeNotSupported) => {
            CoreError::invalid(text)
        }
        Some(Kind::TaskNotFound) => CoreError::NotResumable { message: text },
        _ => CoreError::protocol(text),
    }
}

#[async_trait]
impl SubagentProvider for A2aProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn capabilities(&self) -> Capabilities {
        self.frozen.capabilities
    }

    fn capability_reason(&self, capability: subagent_core::Capability) -> Option<String> {
        if self.frozen.capabilities.supports(capability) {
            return None;
        }
        if capability == subagent_core::Capability::PermissionRules {
            return Some(
                "the parent's permission rules do not cross the A2A wire: the remote agent \
                 would run without the deny and ask rules"
                    .to_owned(),
            );
        }
        if capability == subagent_core::Capability::McpServers {
            return Some(
                "an agent's own MCP servers are programs of this machine, which the remote \
                 agent does not start; run the agent on a spawn, claude-code, codex or acp row"
                    .to_owned(),
            );
        }
        let card = self.config.card_url();
        Some(if self.frozen.ours {
            format!("the row's capability table on the card at {card} does not declare it")
        } else {
            format!("the agent at {card} is a plain A2A agent: only the prompt reaches it")
        })
    }

    async fn start(&self, request: StartRequest) -> subagent_core::Result<Run> {
        if request.cancel.is_cancelled() {
            return Err(CoreError::Cancelled);
        }
        if request.prompt_text().trim().is_empty() {
            return Err(CoreError::invalid(
                "the prompt has no text (an A2A agent is sent a text message)",
            ));
        }
        let message = self.message(&request);
        let params = json!({"message": message});
        // An agent that takes the connection but never answers is given the idle bound.
        let opened = tokio::time::timeout(
            self.config.idle(),
            self.peer.open(method::SEND_STREAMING_MESSAGE, params),
        );
        let stream = tokio::select! {
            opened = opened => match opened {
                Ok(opened) => opened
                    .map_err(|error| refusal(&self.name, &self.frozen.endpoint, error))?,
                Err(_) => {
                    return Err(Error::Unreachable {
                        url: self.frozen.endpoint.clone(),
                        message: format!(
                            "no answer to SendStreamingMessage within {} ms",
                            self.config.idle().as_millis()
                        ),
                    }
                    .into());
                }
            },
            () = request.cancel.cancelled() => return Err(CoreError::Cancelled),
        };
        let (sender, run) = Run::channel(&self.name, &request);
        let plan = Plan {
            provider: self.name.clone(),
            peer: self.peer.clone(),
            ours: self.frozen.ours,
            context_sessions: !self.frozen.ours && self.config.resume_by_context,
            idle: self.config.idle(),
            total: self.config.total(),
        };
        tokio::spawn(drive(plan, stream, sender));
        Ok(run)
    }
}

/// Builds a2a providers from a preset's `config:` block ([`A2aConfig`]): reads the agent's card
/// once, when the preset is built.
#[derive(Clone, Copy, Debug, Default)]
pub struct A2aFactory;

impl ProviderFactory for A2aFactory {
    fn kind(&self) -> &str {
        KIND
    }

    fn summary(&self) -> &str {
        "delegates to an A2A agent by URL (another subagents instance's `subagent serve`, or any A2A 1.0 agent)"
    }

    fn capabilities(&self) -> Capabilities {
        CARRIED
    }

    fn config_schema(&self) -> schemars::Schema {
        schemars::schema_for!(A2aConfig)
    }

    /// The remote agent: its card's URL.
    fn requirements(
        &self,
        name: &str,
        config: &Value,
        _context: &BuildContext,
    ) -> subagent_core::Result<Requirements> {
        let config: A2aConfig = BuildContext::parse_config(KIND, name, config)?;
        Ok(Requirements {
            program: None,
            endpoints: vec![Endpoint {
                urls: vec![config.card_url()],
                origin: "the row's `url` (is the agent up?)".to_owned(),
            }],
        })
    }

    fn secret_env(&self, config: &Value) -> Vec<String> {
        serde_json::from_value::<A2aConfig>(config.clone())
            .ok()
            .and_then(|config| config.token_env)
            .into_iter()
            .collect()
    }

    fn build(
        &self,
        name: &str,
        config: &Value,
        context: &BuildContext,
    ) -> subagent_core::Result<Arc<dyn SubagentProvider>> {
        let _ = context;
        let config: A2aConfig = BuildContext::parse_config(KIND, name, config)?;
        let token = match &config.token_env {
            None => None,
            Some(variable) => Some(
                subagent_session::env::var(variable)
                    .and_then(Token::new)
                    .ok_or_else(|| {
                        Error::config(format!(
                            "`token_env` names {variable}, which is not set (or empty)"
                        ))
                    })?,
            ),
        };
        Ok(Arc::new(A2aProvider::connect_blocking(
            name, config, token,
        )?))
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn card(extension: Option<Value>, streaming: bool) -> AgentCard {
        let mut card = json!({
            "name": "peer", "description": "d", "version": "1",
            "supportedInterfaces": [
                {"url": "http://127.0.0.1:9/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
                {"url": "http://127.0.0.1:9/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {"streaming": streaming},
            "skills": [{"id": "echo", "name": "Echo", "description": "", "tags": []}],
        });
        if let Some(params) = extension {
            card["capabilities"]["extensions"] =
                json!([{"uri": crate::EXTENSION_URI, "params": params}]);
        }
        serde_json::from_value(card).unwrap()
    }

    #[test]
    fn the_table_is_the_skills_row_cut_to_what_the_wire_carries_or_nothing_for_a_plain_peer() {
        let mut fork = Capabilities::NONE;
        fork.output_schema = true;
        fork.isolation = true;
        fork.inherits_parent_context = true;
        let params = json!({"maxDepth": 3, "skills": [
            {"skill": "subagent", "kind": "row", "provider": "spawn", "capabilities": Capabilities::ALL},
            {"skill": "forked", "kind": "row", "provider": "fork", "capabilities": fork}]});
        let config = |skill: Option<&str>| A2aConfig {
            skill: skill.map(str::to_owned),
            ..A2aConfig::new("http://127.0.0.1:9")
        };
        let ours = card(Some(params), true);
        let first = freeze(&ours, &config(None)).unwrap();
        assert_eq!(
            (
                first.endpoint.as_str(),
                first.skill.as_deref(),
                first.ours,
                first.capabilities
            ),
            ("http://127.0.0.1:9/a2a", Some("subagent"), true, CARRIED)
        );
        let mut expected = Capabilities::NONE;
        expected.output_schema = true;
        assert_eq!(
            freeze(&ours, &config(Some("forked"))).unwrap().capabilities,
            expected
        );
        let missing = freeze(&ours, &config(Some("nope"))).unwrap_err();
        assert!(
            missing.to_string().contains("skills: subagent, forked"),
            "{missing}"
        );

        let plain = freeze(&card(None, true), &config(Some("echo"))).unwrap();
        assert_eq!((plain.ours, plain.capabilities), (false, PLAIN));
        let opted = A2aConfig {
            resume_by_context: true,
            ..config(None)
        };
        let mut resumes = PLAIN;
        resumes.resume = true;
        assert_eq!(
            freeze(&card(None, true), &opted).unwrap().capabilities,
            resumes
        );
        // A subagent serve's table is its own, whatever the option says.
        assert_eq!(freeze(&ours, &opted).unwrap().capabilities, CARRIED);
        assert!(freeze(&card(None, true), &config(Some("nope"))).is_err());
        let silent = freeze(&card(None, false), &config(None)).unwrap_err();
        assert!(silent.to_string().contains("does not stream"), "{silent}");
    }
}
