//! The agent card: the skills (delegation rows, then agent types), the JSON-RPC interface, our
//! extension with each skill's provider and capability table, bearer auth when a token is set.

use std::sync::Arc;

use axum::extract::State as Extract;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use subagent_a2a::EXTENSION_URI;
use subagent_a2a::card::{
    AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentSkill, BINDING_JSONRPC,
};
use subagent_a2a::ext::{CardParams, SkillRow};
use subagent_a2a::rpc::PROTOCOL_VERSION;
use subagent_core::Capabilities;
use subagent_core::registry::Registry;

use crate::{RPC_PATH, ServerConfig, Skill, State};

/// The card's JSON.
pub(crate) fn card(
    registry: &Registry,
    skills: &[Skill],
    config: &ServerConfig,
    base: &str,
) -> Value {
    let rows = skills
        .iter()
        .map(|skill| SkillRow {
            skill: skill.id.clone(),
            kind: if skill.agent.is_some() {
                "agent"
            } else {
                "row"
            }
            .to_owned(),
            provider: skill.provider.clone(),
            capabilities: registry
                .get(&skill.provider)
                .map_or(Capabilities::NONE, |provider| provider.capabilities()),
        })
        .collect();
    let params = CardParams {
        max_depth: config.max_depth,
        skills: rows,
    };
    let modes = vec!["text/plain".to_owned(), "application/json".to_owned()];
    let mut card = AgentCard {
        name: config.name.clone(),
        description: config.description.clone(),
        supported_interfaces: vec![AgentInterface {
            url: format!("{}{RPC_PATH}", base.trim_end_matches('/')),
            protocol_binding: BINDING_JSONRPC.to_owned(),
            protocol_version: PROTOCOL_VERSION.to_owned(),
            tenant: String::new(),
        }],
        version: env!("CARGO_PKG_VERSION").to_owned(),
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(false),
            extensions: vec![AgentExtension {
                uri: EXTENSION_URI.to_owned(),
                description: "subagents: request fields in message metadata, each skill's \
                              provider and capability table, run events and outcomes in \
                              metadata"
                    .to_owned(),
                required: false,
                params: serde_json::to_value(params).ok(),
            }],
            extended_agent_card: None,
        },
        default_input_modes: modes.clone(),
        default_output_modes: modes,
        skills: skills
            .iter()
            .map(|skill| AgentSkill {
                id: skill.id.clone(),
                name: skill.id.clone(),
                description: skill.description.clone(),
                tags: vec![
                    if skill.agent.is_some() {
                        "agent"
                    } else {
                        "delegation"
                    }
                    .to_owned(),
                    format!("provider:{}", skill.provider),
                ],
                ..AgentSkill::default()
            })
            .collect(),
        ..AgentCard::default()
    };
    if config.token.is_some() {
        card = card.with_bearer_auth();
    }
    serde_json::to_value(card).unwrap_or(Value::Null)
}

/// `GET /.well-known/agent-card.json` (public).
pub(crate) async fn serve_card(Extract(state): Extract<Arc<State>>) -> Response {
    let body = serde_json::to_vec(&state.card).unwrap_or_default();
    (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

/// Whether `url` can be the card's base URL ([`ServerConfig::public_url`]): `http://` or
/// `https://` (any case), a host, then at most a path. No user info (it would be published),
/// no query or fragment (the card appends its paths), nothing a URL cannot carry unescaped
/// (whitespace, control characters, non-ASCII: write an IDN host in punycode).
pub fn is_public_url(url: &str) -> bool {
    let after = |scheme: &str| {
        url.get(..scheme.len())
            .filter(|head| head.eq_ignore_ascii_case(scheme))
            .and_then(|_| url.get(scheme.len()..))
    };
    let Some(rest) = after("https://").or_else(|| after("http://")) else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let allowed = |c: char| {
        c.is_ascii_graphic()
            && !matches!(
                c,
                '"' | '<' | '>' | '\\' | '^' | '`' | '{' | '|' | '}' | '?' | '#'
            )
    };
    !authority.is_empty()
        && !authority.starts_with(':')
        && !authority.contains('@')
        && url.chars().all(allowed)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::is_public_url;

    #[test]
    fn a_public_url_is_http_or_https_with_a_host_and_nothing_a_card_cannot_carry() {
        let urls = [
            "https://agents.example.com",
            "HTTP://127.0.0.1:8080/",
            "https://[::1]:8443/base/path",
            "javascript:alert(1)",
            "ftp://agents.example.com",
            "https://",
            "https://:8080",
            "https://user:pw@agents.example.com",
            "https://agents.example.com/a b",
            "https://agents.example.com/?q=1",
            "https://agents.example.com/#x",
            "https://agénts.example.com",
            "http:/agents.example.com",
        ];
        let seen: Vec<bool> = urls.iter().map(|url| is_public_url(url)).collect();
        assert_eq!(
            seen,
            [
                true, true, true, false, false, false, false, false, false, false, false, false,
                false
            ]
        );
    }
}
