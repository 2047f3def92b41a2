//! What each client puts on the wire: cache markers, byte-stable bodies, tool round trips,
//! output schemas.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_model::anthropic::Anthropic;
use subagent_model::chat::Chat;
use subagent_model::responses::Responses;
use subagent_model::{ModelKind, ModelRequest, Protocol, ToolSpec, collect};
use subagent_session::{ContentBlock, Message, Role};
use subagent_test_support::FakeServer;
use tokio_util::sync::CancellationToken;

use super::support::{KINDS, model};

fn conversation() -> ModelRequest {
    let mut request = ModelRequest::new(
        "test-model",
        vec![
            Message::user("look around"),
            Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::text("Looking."),
                    ContentBlock::tool_use("call_1", "ls", json!({"path": "."})),
                ],
            ),
            Message::new(
                Role::User,
                vec![ContentBlock::tool_result("call_1", "a.txt\nb.txt", false)],
            ),
        ],
    );
    request.system = Some("You are terse.".into());
    request.tools = ["ls", "read_file", "grep"]
        .iter()
        .map(|name| ToolSpec {
            name: (*name).into(),
            description: format!("The {name} tool."),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        })
        .collect();
    request
}

const SCENARIOS: &str = "- match: \".*\"\n  steps: [{text: a}, {text: b}, {text: c}]\n";

async fn recorded_body(kind: ModelKind, request: ModelRequest) -> Value {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let response = collect(
        model(&server, kind)
            .stream(request, CancellationToken::new())
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(response.message.text(), "b");
    assert_eq!(server.violations(), Vec::<String>::new());
    server.model_requests()[0].body.clone().unwrap()
}

#[tokio::test]
async fn anthropic_marks_the_stable_prefix_for_caching() {
    let body = recorded_body(ModelKind::Anthropic, conversation()).await;
    let eph = json!({"type": "ephemeral"});
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are terse.", "cache_control": eph}])
    );
    let tools = body["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["ls", "read_file", "grep"]);
    assert_eq!(tools[2]["cache_control"], eph);
    assert!(tools[0].get("cache_control").is_none());
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "call_1", "content": "a.txt\nb.txt",
               "is_error": false, "cache_control": eph})
    );
    assert!(messages[1]["content"][1].get("cache_control").is_none());
    assert_eq!(body["stream"], json!(true));
}

#[tokio::test]
async fn responses_sends_function_call_items() {
    let mut request = conversation();
    request.output_schema =
        Some(json!({"type": "object", "properties": {"n": {"type": "integer"}}}));
    let body = recorded_body(ModelKind::OpenaiResponses, request).await;
    assert_eq!(body["instructions"], json!("You are terse."));
    let input = body["input"].as_array().unwrap();
    let types: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "message",
            "message",
            "function_call",
            "function_call_output"
        ]
    );
    assert_eq!(input[2]["arguments"], json!("{\"path\":\".\"}"));
    assert_eq!(
        input[3],
        json!({"type": "function_call_output", "call_id": "call_1", "output": "a.txt\nb.txt"})
    );
    assert_eq!(body["text"]["format"]["type"], json!("json_schema"));
    assert_eq!(body["tools"][0]["type"], json!("function"));
}

#[tokio::test]
async fn chat_sends_tool_messages() {
    let body = recorded_body(ModelKind::OpenaiChat, conversation()).await;
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"]);
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["name"],
        json!("ls")
    );
    assert_eq!(messages[3]["tool_call_id"], json!("call_1"));
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
}

#[test]
fn bodies_are_byte_stable() {
    let request = conversation();
    for (a, b) in [
        (
            Anthropic::request_body(&request).unwrap(),
            Anthropic::request_body(&request.clone()).unwrap(),
        ),
        (
            Responses::request_body(&request).unwrap(),
            Responses::request_body(&request.clone()).unwrap(),
        ),
        (
            Chat::request_body(&request).unwrap(),
            Chat::request_body(&request.clone()).unwrap(),
        ),
    ] {
        assert_eq!(a, b);
    }
    // A longer conversation starts with the same tools and system bytes.
    let mut longer = request.clone();
    longer.messages.push(Message::assistant("more"));
    longer.messages.push(Message::user("again"));
    let short = String::from_utf8(Anthropic::request_body(&request).unwrap()).unwrap();
    let long = String::from_utf8(Anthropic::request_body(&longer).unwrap()).unwrap();
    let prefix = |s: &str| s[..s.find("\"messages\"").unwrap()].to_owned();
    assert_eq!(prefix(&short), prefix(&long));
    let _ = KINDS;
}
