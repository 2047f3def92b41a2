//! The agent card: the 1.0 card as the Python SDK writes it, the JS style with every default,
//! and a 0.3 card.

use std::collections::BTreeMap;

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_a2a::card::{
    AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentSkill,
};

fn interface(url: &str, binding: &str, version: &str) -> AgentInterface {
    AgentInterface {
        url: url.to_owned(),
        protocol_binding: binding.to_owned(),
        protocol_version: version.to_owned(),
        tenant: String::new(),
    }
}

#[test]
fn the_python_sdk_card_reads_and_writes_back_the_same_json() {
    let wire = json!({"name":"research-agent","description":"Echo agent for A2A wire research",
     "supportedInterfaces":[
       {"url":"http://127.0.0.1:5/a2a/jsonrpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
       {"url":"http://127.0.0.1:5/a2a/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],
     "version":"0.1.0",
     "capabilities":{"streaming":true,"pushNotifications":false,
       "extensions":[{"uri":"https://example.invalid/ext/demo/v1","description":"demo"}]},
     "securitySchemes":{"bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"opaque"}}},
     "securityRequirements":[{"schemes":{"bearer":{}}}],
     "defaultInputModes":["text/plain","application/json"],
     "defaultOutputModes":["text/plain","application/json"],
     "skills":[{"id":"echo","name":"Echo","description":"Echoes input","tags":["echo"],"examples":["hello"]}]});
    let card: AgentCard = serde_json::from_value(wire.clone()).unwrap();
    let expected = AgentCard {
        name: "research-agent".to_owned(),
        description: "Echo agent for A2A wire research".to_owned(),
        supported_interfaces: vec![
            interface("http://127.0.0.1:5/a2a/jsonrpc", "JSONRPC", "1.0"),
            interface("http://127.0.0.1:5/a2a/rest", "HTTP+JSON", "1.0"),
        ],
        version: "0.1.0".to_owned(),
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(false),
            extensions: vec![AgentExtension {
                uri: "https://example.invalid/ext/demo/v1".to_owned(),
                description: "demo".to_owned(),
                required: false,
                params: None,
            }],
            extended_agent_card: None,
        },
        security_schemes: BTreeMap::new(),
        security_requirements: Vec::new(),
        default_input_modes: vec!["text/plain".to_owned(), "application/json".to_owned()],
        default_output_modes: vec!["text/plain".to_owned(), "application/json".to_owned()],
        skills: vec![AgentSkill {
            id: "echo".to_owned(),
            name: "Echo".to_owned(),
            description: "Echoes input".to_owned(),
            tags: vec!["echo".to_owned()],
            examples: vec!["hello".to_owned()],
            ..AgentSkill::default()
        }],
        url: None,
        protocol_version: None,
        preferred_transport: None,
    }
    .with_bearer_auth();
    assert_eq!(card, expected);
    assert_eq!(serde_json::to_value(&card).unwrap(), wire);
    assert_eq!(
        card.jsonrpc_interface(),
        Some(interface(
            "http://127.0.0.1:5/a2a/jsonrpc",
            "JSONRPC",
            "1.0"
        ))
    );
}

#[test]
fn a_js_style_card_with_every_default_printed_reads_the_same() {
    let card: AgentCard = serde_json::from_value(json!({"name":"a","description":"d",
        "supportedInterfaces":[{"url":"http://h/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":""}],
        "version":"1","capabilities":{"streaming":true,"pushNotifications":false,"extensions":[],"extendedAgentCard":false},
        "securitySchemes":{},"securityRequirements":[],"defaultInputModes":["text/plain"],
        "defaultOutputModes":["text/plain"],"skills":[],"provider":null,"iconUrl":"","signatures":[]}))
    .unwrap();
    assert_eq!(
        card.interfaces(),
        [interface("http://h/rpc", "JSONRPC", "1.0")]
    );
    assert_eq!(card.capabilities.streaming, Some(true));
}

#[test]
fn a_0_3_card_is_read_as_one_interface_of_its_version() {
    let card: AgentCard = serde_json::from_value(json!({"name":"old","description":"d",
        "url":"http://h/","protocolVersion":"0.3.0","preferredTransport":"JSONRPC","version":"1",
        "capabilities":{"streaming":true},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}))
    .unwrap();
    assert_eq!(
        card.interfaces(),
        [interface("http://h/", "JSONRPC", "0.3.0")]
    );
    assert_eq!(card.jsonrpc_interface(), None);
}
