//! The agent card (`GET /.well-known/agent-card.json`): who the agent is, where and how to reach
//! it, what it can do.
//!
//! Written in the 1.0 style (endpoints per interface in `supportedInterfaces`); read in both
//! styles: a 0.3 card's top-level `url`, `protocolVersion` and `preferredTransport` are kept and
//! [`AgentCard::interfaces`] turns them into an interface.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Where the card is served.
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";

/// The JSON-RPC binding's name in `protocolBinding`.
pub const BINDING_JSONRPC: &str = "JSONRPC";
/// The HTTP+JSON binding's name.
pub const BINDING_HTTP_JSON: &str = "HTTP+JSON";

fn null_as_default<'de, D, T>(de: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(de)?.unwrap_or_default())
}

/// One way to reach the agent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// The endpoint.
    pub url: String,
    /// `JSONRPC`, `HTTP+JSON` or `GRPC` (case-sensitive).
    #[serde(default)]
    pub protocol_binding: String,
    /// `1.0`.
    #[serde(default)]
    pub protocol_version: String,
    /// A tenant to send in requests.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tenant: String,
}

/// An extension the agent supports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentExtension {
    /// Its URI.
    pub uri: String,
    /// What it is.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Whether a client must support it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
    /// Its parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// What the agent supports of the protocol.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// `SendStreamingMessage` and `SubscribeToTask` (a client does not stream without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Push notification configs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    /// Extensions.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub extensions: Vec<AgentExtension>,
    /// `GetExtendedAgentCard`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_agent_card: Option<bool>,
}

/// Something the agent does.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// Its id.
    pub id: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// Keywords (required by the schema, may be empty).
    #[serde(default, deserialize_with = "null_as_default")]
    pub tags: Vec<String>,
    /// Example prompts.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub examples: Vec<String>,
    /// Input media types, when not the card's default.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub input_modes: Vec<String>,
    /// Output media types, when not the card's default.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub output_modes: Vec<String>,
}

/// The agent card.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// The agent's name.
    pub name: String,
    /// What it is.
    #[serde(default)]
    pub description: String,
    /// How to reach it (1.0).
    #[serde(default, deserialize_with = "null_as_default")]
    pub supported_interfaces: Vec<AgentInterface>,
    /// Its version.
    #[serde(default)]
    pub version: String,
    /// What it supports.
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// Security schemes by name (`httpAuthSecurityScheme`, `apiKeySecurityScheme`, …), as
    /// written.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub security_schemes: BTreeMap<String, Value>,
    /// Which schemes a request must satisfy.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub security_requirements: Vec<Value>,
    /// Input media types.
    #[serde(default, deserialize_with = "null_as_default")]
    pub default_input_modes: Vec<String>,
    /// Output media types.
    #[serde(default, deserialize_with = "null_as_default")]
    pub default_output_modes: Vec<String>,
    /// What it does.
    #[serde(default, deserialize_with = "null_as_default")]
    pub skills: Vec<AgentSkill>,
    /// 0.3 style: the one endpoint (read, never written by us).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// 0.3 style: the protocol version of `url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// 0.3 style: the binding of `url` (`JSONRPC` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_transport: Option<String>,
}

/// A card from its body as served (`content_type` only names what came in an error).
pub fn read_card(body: &[u8], content_type: &str) -> Result<AgentCard, String> {
    serde_json::from_slice(body)
        .map_err(|error| format!("its card ({content_type}) is not an A2A agent card: {error}"))
}

impl AgentCard {
    /// The interfaces: `supportedInterfaces`, then a 0.3 card's top-level `url` (version
    /// `protocolVersion`, default `0.3`; binding `preferredTransport`, default `JSONRPC`) unless
    /// an interface already names that url.
    pub fn interfaces(&self) -> Vec<AgentInterface> {
        let mut interfaces = self.supported_interfaces.clone();
        if let Some(url) = &self.url
            && !interfaces.iter().any(|interface| &interface.url == url)
        {
            interfaces.push(AgentInterface {
                url: url.clone(),
                protocol_binding: self
                    .preferred_transport
                    .clone()
                    .unwrap_or_else(|| BINDING_JSONRPC.to_owned()),
                protocol_version: self
                    .protocol_version
                    .clone()
                    .unwrap_or_else(|| "0.3".to_owned()),
                tenant: String::new(),
            });
        }
        interfaces
    }

    /// The first JSON-RPC interface speaking 1.x.
    pub fn jsonrpc_interface(&self) -> Option<AgentInterface> {
        self.interfaces().into_iter().find(|interface| {
            interface.protocol_binding == BINDING_JSONRPC
                && interface.protocol_version.starts_with("1.")
        })
    }

    /// The extension of that URI, if the card declares it.
    pub fn extension(&self, uri: &str) -> Option<&AgentExtension> {
        self.capabilities
            .extensions
            .iter()
            .find(|extension| extension.uri == uri)
    }

    /// Declares bearer-token auth under the scheme name `bearer`.
    pub fn with_bearer_auth(mut self) -> Self {
        self.security_schemes.insert(
            "bearer".to_owned(),
            json!({"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "opaque"}}),
        );
        self.security_requirements
            .push(json!({"schemes": {"bearer": {}}}));
        self
    }
}
