//! Requests shaped like the real `claude` and `codex` ones, sent with a plain HTTP client.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_test_support::FakeServer;

const SCENARIOS: &str = r#"
- name: bash
  match: "please run the bash tool"
  steps:
    - text: "I'll run a command."
      tool_calls: [{name: Bash, input: {command: "echo hi", description: "say hi"}}]
    - text: "Done."
- name: codex
  match: "please run a command"
  steps:
    - text: "Running it."
      tool_calls: [{name: exec_command, input: {cmd: "echo hi"}}]
    - tool_calls:
        - {name: apply_patch, custom: true, input: "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"}
        - {name: spawn_agent, namespace: multi_agent_v1, input: {message: "SUBTASK"}}
    - text: "patched"
- name: fallback
  match: ".*"
  steps: [{text: "fallback"}]
"#;

fn claude_body(extra: Vec<Value>) -> Value {
    let mut messages = vec![
        json!({"role": "user", "content": [
            {"type": "text", "text": "<system-reminder>\nplease run a command (not the prompt)\n</system-reminder>"},
            {"type": "text", "text": "please run the bash tool", "cache_control": {"type": "ephemeral"}}]}),
        json!({"role": "system", "content": "Available agent types: please run a command"}),
    ];
    messages.extend(extra);
    json!({"model": "claude-opus-4-8", "max_tokens": 64000, "stream": true,
           "system": [{"type": "text", "text": "You are Claude Code. please run a command"}],
           "tools": [{"name": "Bash", "description": "Runs bash", "input_schema": {"type": "object"}}],
           "messages": messages})
}

fn codex_body(extra: Vec<Value>) -> Value {
    let mut input = vec![
        json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex. If asked, please run the bash tool"}]}),
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/tmp</cwd>\n</environment_context>"}]}),
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "please run a command"}]}),
    ];
    input.extend(extra);
    json!({"model": "gpt-5.5", "stream": true, "input": input, "tools": [], "tool_choice": "auto",
           "parallel_tool_calls": true, "store": false})
}

async fn post(url: &str, body: &Value) -> (u16, String) {
    let response = reqwest::Client::new()
        .post(url)
        .header("x-api-key", "dummy-secret")
        .header("authorization", "Bearer dummy-secret")
        .json(body)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

/// The `data:` payloads of an SSE body.
fn sse_data(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

#[tokio::test]
async fn claude_round_trip_matches_the_prompt_not_system_text() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let client = reqwest::Client::new();
    let head = client.head(server.url()).send().await.unwrap();
    assert!(head.status().is_success());
    let url = format!("{}/v1/messages?beta=true", server.url());
    let (status, text) = post(&url, &claude_body(vec![])).await;
    assert_eq!(status, 200, "{text}");
    let events = sse_data(&text);
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"message_start"));
    assert_eq!(kinds.last(), Some(&"message_stop"));
    let tool = events
        .iter()
        .find(|e| e["content_block"]["type"] == "tool_use")
        .unwrap();
    let id = tool["content_block"]["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("toolu_"));
    let stop = events
        .iter()
        .find(|e| e["type"] == "message_delta")
        .unwrap();
    assert_eq!(stop["delta"]["stop_reason"], json!("tool_use"));

    let second = claude_body(vec![
        json!({"role": "assistant", "content": [{"type": "text", "text": "I'll run a command."},
               {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": "echo hi"}}]}),
        json!({"role": "user", "content": [{"tool_use_id": id, "type": "tool_result", "content": "hi", "is_error": false}]}),
        json!({"role": "system", "content": "more injected system text"}),
    ]);
    let (status, text) = post(&url, &second).await;
    assert_eq!(status, 200);
    assert!(text.contains("Done."));
    assert_eq!(server.violations(), Vec::<String>::new());
    let requests = server.model_requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/messages?beta=true");
    assert_eq!(requests[0].scenario, Some(("bash".to_owned(), 0)));
    assert_eq!(requests[1].scenario, Some(("bash".to_owned(), 1)));
    assert_eq!(requests[0].header("x-api-key"), Some("<redacted>"));
    assert_eq!(requests[0].header("authorization"), Some("<redacted>"));
    assert_eq!(server.requests()[0].method, "HEAD");
}

#[tokio::test]
async fn codex_round_trip_with_custom_and_namespaced_calls() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let url = format!("{}/v1/responses", server.url());
    let (status, text) = post(&url, &codex_body(vec![])).await;
    assert_eq!(status, 200, "{text}");
    let events = sse_data(&text);
    let done: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "response.output_item.done")
        .map(|e| &e["item"])
        .collect();
    assert_eq!(done[0]["type"], json!("message"));
    assert_eq!(done[1]["type"], json!("function_call"));
    let call_id = done[1]["call_id"].as_str().unwrap().to_owned();
    assert_eq!(events.last().unwrap()["type"], json!("response.completed"));

    let step1 = codex_body(vec![
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Running it."}]}),
        json!({"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"echo hi\"}", "call_id": call_id}),
        json!({"type": "function_call_output", "call_id": call_id, "output": "hi\n"}),
    ]);
    let (_, text) = post(&url, &step1).await;
    let events = sse_data(&text);
    let items: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "response.output_item.done")
        .map(|e| &e["item"])
        .collect();
    assert_eq!(items[0]["type"], json!("custom_tool_call"));
    assert_eq!(items[0]["name"], json!("apply_patch"));
    assert!(
        items[0]["input"]
            .as_str()
            .unwrap()
            .starts_with("*** Begin Patch")
    );
    assert_eq!(items[1]["type"], json!("function_call"));
    assert_eq!(items[1]["namespace"], json!("multi_agent_v1"));
    let (patch_id, spawn_id) = (
        items[0]["call_id"].as_str().unwrap().to_owned(),
        items[1]["call_id"].as_str().unwrap().to_owned(),
    );
    let mut step2_items = vec![
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Running it."}]}),
        json!({"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"echo hi\"}", "call_id": call_id}),
        json!({"type": "function_call_output", "call_id": call_id, "output": "hi\n"}),
    ];
    step2_items.extend([
        json!({"type": "reasoning", "summary": [], "encrypted_content": null}),
        json!({"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch", "call_id": patch_id}),
        json!({"type": "function_call", "name": "spawn_agent", "namespace": "multi_agent_v1", "arguments": "{}", "call_id": spawn_id}),
        json!({"type": "custom_tool_call_output", "call_id": patch_id, "output": "Success"}),
        json!({"type": "function_call_output", "call_id": spawn_id, "output": "{\"agent_id\":\"a\"}"}),
    ]);
    let (_, text) = post(&url, &codex_body(step2_items)).await;
    assert!(text.contains("patched"), "{text}");
    assert_eq!(server.violations(), Vec::<String>::new());
    let steps: Vec<usize> = server
        .model_requests()
        .iter()
        .map(|r| r.scenario.as_ref().unwrap().1)
        .collect();
    assert_eq!(steps, [0, 1, 2]);
}

#[tokio::test]
async fn invariant_violations_are_reported() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let url = format!("{}/v1/chat/completions", server.url());
    let body = json!({"model": "m", "stream": true, "messages": [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c2", "content": "orphan"},
        {"role": "assistant", "content": ""}
    ]});
    // The fallback has no step 2 (a 400 answer); the violations are recorded all the same.
    let (status, text) = post(&url, &body).await;
    assert_eq!(status, 400);
    assert!(
        text.contains("has 1 step(s) but the conversation asks for step 2"),
        "{text}"
    );
    let violations = server.violations();
    assert_eq!(violations.len(), 3, "{violations:#?}");
    assert!(
        violations[0].contains("is empty") || violations.iter().any(|v| v.contains("is empty"))
    );
    assert!(
        violations
            .iter()
            .any(|v| v.contains("tool result c2 answers no tool call"))
    );
    assert!(
        violations
            .iter()
            .any(|v| v.contains("tool call x (c1) is not answered"))
    );
}

#[tokio::test]
async fn models_list_and_unknown_routes() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let client = reqwest::Client::new();
    let models: Value = client
        .get(format!("{}/v1/models", server.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models["data"][0]["id"], json!("fake-model"));
    let missing = client
        .post(format!("{}/v2/nothing", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    let no_step = post(
        &format!("{}/v1/chat/completions", server.url()),
        &json!({"model": "m", "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}, {"role": "user", "content": "z"}]}),
    )
    .await;
    assert_eq!(no_step.0, 200, "a new genuine prompt restarts at step 0");
}

#[tokio::test]
async fn generated_call_ids_are_unique_across_conversations_of_one_server() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let url = format!("{}/v1/messages?beta=true", server.url());
    // Two conversations of the same length (a parent and a nested agent, say).
    let (_, first) = post(&url, &claude_body(vec![])).await;
    let (_, second) = post(&url, &claude_body(vec![])).await;
    let id = |sse: &str| {
        let start = sse.find("\"id\":\"toolu_").unwrap() + 6;
        sse[start..start + sse[start..].find('"').unwrap()].to_owned()
    };
    assert_ne!(id(&first), id(&second), "{first}\n{second}");
}
