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
            Anthropic::request_body(&request).unwrap().to_vec(),
            Anthropic::request_body(&request.clone()).unwrap().to_vec(),
        ),
        (
            Responses::request_body(&request).unwrap().to_vec(),
            Responses::request_body(&request.clone()).unwrap().to_vec(),
        ),
        (
            Chat::request_body(&request).unwrap().to_vec(),
            Chat::request_body(&request.clone()).unwrap().to_vec(),
        ),
    ] {
        assert_eq!(a, b);
    }
    // A longer conversation starts with the same tools and system bytes.
    let mut longer = request.clone();
    longer.messages.push(Message::assistant("more"));
    longer.messages.push(Message::user("again"));
    let short = String::from_utf8(Anthropic::request_body(&request).unwrap().to_vec()).unwrap();
    let long = String::from_utf8(Anthropic::request_body(&longer).unwrap().to_vec()).unwrap();
    let prefix = |s: &str| s[..s.find("\"messages\"").unwrap()].to_owned();
    assert_eq!(prefix(&short), prefix(&long));
    let _ = KINDS;
}

/// Every kind of block, including the ones a protocol leaves out (a thinking block without its
/// signature) and a last message that sends nothing to Anthropic.
fn every_block() -> Vec<Message> {
    vec![
        Message::user("start"),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    thinking: "hm".into(),
                    signature: Some("sig".into()),
                },
                ContentBlock::text("Two calls."),
                ContentBlock::tool_use("c1", "ls", json!({"path": "é\"\n"})),
                ContentBlock::tool_use("c2", "raw", json!("not an object")),
            ],
        ),
        Message::new(
            Role::User,
            vec![
                ContentBlock::tool_result("c1", "a\nb", false),
                ContentBlock::tool_result(
                    "c2",
                    subagent_session::ToolResultContent::Blocks(vec![
                        ContentBlock::text("x"),
                        ContentBlock::text("y"),
                    ]),
                    true,
                ),
                ContentBlock::text("and then"),
                ContentBlock::text("more"),
            ],
        ),
        Message::assistant("done"),
        Message::new(
            Role::Assistant,
            vec![ContentBlock::Thinking {
                thinking: "unsigned".into(),
                signature: None,
            }],
        ),
    ]
}

fn body_value(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

#[test]
fn anthropic_body_for_every_block() {
    let request = ModelRequest::new("m", every_block());
    let body = body_value(&Anthropic::request_body(&request).unwrap().to_vec());
    let eph = json!({"type": "ephemeral"});
    // The last message sends nothing (an unsigned thinking block is left out): the marker goes
    // on the last message that sends something.
    assert_eq!(
        body,
        json!({"model": "m", "max_tokens": 4096, "stream": true, "messages": [
            {"role": "user", "content": [{"type": "text", "text": "start"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hm", "signature": "sig"},
                {"type": "text", "text": "Two calls."},
                {"type": "tool_use", "id": "c1", "name": "ls", "input": {"path": "é\"\n"}},
                {"type": "tool_use", "id": "c2", "name": "raw", "input": "not an object"}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "a\nb", "is_error": false},
                {"type": "tool_result", "tool_use_id": "c2", "is_error": true, "content": [
                    {"type": "text", "text": "x"}, {"type": "text", "text": "y"}]},
                {"type": "text", "text": "and then"},
                {"type": "text", "text": "more"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "done", "cache_control": eph}]}
        ]})
    );
}

#[test]
fn responses_and_chat_bodies_for_every_block() {
    let mut request = ModelRequest::new("m", every_block());
    request.system = Some("sys".into());
    let body = body_value(&Responses::request_body(&request).unwrap().to_vec());
    assert_eq!(
        body["input"],
        json!([
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "start"}]},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "Two calls."}]},
            {"type": "function_call", "call_id": "c1", "name": "ls",
             "arguments": "{\"path\":\"é\\\"\\n\"}"},
            {"type": "function_call", "call_id": "c2", "name": "raw", "arguments": "not an object"},
            {"type": "function_call_output", "call_id": "c1", "output": "a\nb"},
            {"type": "function_call_output", "call_id": "c2", "output": "x\ny"},
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "and then"}, {"type": "input_text", "text": "more"}]},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "done"}]}
        ])
    );
    assert_eq!(body["instructions"], json!("sys"));
    let body = body_value(&Chat::request_body(&request).unwrap().to_vec());
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "start"},
            {"role": "assistant", "content": "Two calls.", "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "ls", "arguments": "{\"path\":\"é\\\"\\n\"}"}},
                {"id": "c2", "type": "function",
                 "function": {"name": "raw", "arguments": "not an object"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "a\nb"},
            {"role": "tool", "tool_call_id": "c2", "content": "x\ny"},
            {"role": "user", "content": "and then\nmore"},
            {"role": "assistant", "content": "done"},
            {"role": "assistant", "content": null}
        ])
    );
}

/// A conversation's later requests (and its forks' first ones) reuse the encodings its earlier
/// requests kept: the bytes are those of a conversation encoded from scratch, whichever
/// protocols encoded it before, and whichever view (parent or fork) grows next.
#[test]
fn kept_encodings_change_no_byte() {
    type Encode = fn(&ModelRequest) -> subagent_model::Result<subagent_model::RequestBody>;
    let encoders: [Encode; 3] = [
        Anthropic::request_body,
        Responses::request_body,
        Chat::request_body,
    ];
    let fresh = |request: &ModelRequest, encode: Encode| {
        let mut copy = request.clone();
        copy.messages = request.messages.to_vec().into();
        encode(&copy).unwrap().to_vec()
    };
    let mut parent = conversation();
    for message in every_block() {
        parent.messages.push(message);
        // Each protocol in turn, twice: the second time from what the first kept.
        for encode in encoders.iter().chain(&encoders) {
            assert_eq!(encode(&parent).unwrap().to_vec(), fresh(&parent, *encode));
        }
    }
    let mut fork = parent.clone();
    fork.messages.push(Message::user("fork's task"));
    parent.messages.push(Message::user("parent's next"));
    for encode in encoders {
        assert_eq!(encode(&fork).unwrap().to_vec(), fresh(&fork, encode));
        assert_eq!(encode(&parent).unwrap().to_vec(), fresh(&parent, encode));
    }
}

/// A body sent as pieces (small encodings copied into pieces, large ones shared) reaches the
/// server whole, as a `content-length` request (not chunked), for every protocol.
#[tokio::test]
async fn a_long_conversation_is_sent_in_pieces_with_its_exact_length() {
    let large = "L".repeat(3 * subagent_model::PIECE);
    let mut messages = vec![Message::user("start")];
    for i in 0..2_000 {
        messages.push(Message::assistant(format!("answer {i}")));
        messages.push(Message::user(if i == 1_000 {
            large.clone()
        } else {
            format!("question {i}")
        }));
    }
    for kind in KINDS {
        let mut request = ModelRequest::new("test-model", messages.clone());
        let sent = match kind {
            ModelKind::Anthropic => Anthropic::request_body(&request),
            ModelKind::OpenaiResponses => Responses::request_body(&request),
            _ => Chat::request_body(&request),
        }
        .unwrap();
        assert!(sent.pieces() > 3, "{kind:?}: {} pieces", sent.pieces());
        // The server answers by the last user message: make it match the scenario.
        request.messages.push(Message::user("go"));
        let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
        collect(
            model(&server, kind)
                .stream(request.clone(), CancellationToken::new())
                .await
                .unwrap(),
        )
        .await
        .unwrap();
        let recorded = &server.model_requests()[0];
        let expected = match kind {
            ModelKind::Anthropic => Anthropic::request_body(&request),
            ModelKind::OpenaiResponses => Responses::request_body(&request),
            _ => Chat::request_body(&request),
        }
        .unwrap();
        assert_eq!(
            (
                recorded.header("content-length"),
                recorded.header("transfer-encoding")
            ),
            (Some(expected.len().to_string().as_str()), None),
            "{kind:?}"
        );
        assert_eq!(
            recorded.body,
            Some(serde_json::from_slice::<Value>(&expected.to_vec()).unwrap()),
            "{kind:?}"
        );
    }
}
