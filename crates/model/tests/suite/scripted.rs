//! The offline scripted model replays scenarios deterministically, in-process.

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_model::{
    Error, ErrorCode, Model, ModelConfig, ModelEvent, ModelKind, ModelRequest, Scenarios,
    ScriptedModel, build_with_env,
};
use subagent_session::{ContentBlock, Message, Role, StopReason};
use tokio_util::sync::CancellationToken;

use super::support::{answer, drain, request, text_of};

const SCENARIOS: &str = r#"
- name: tools
  match: "(?i)use the tool"
  steps:
    - text: "Calling."
      tool_calls: [{name: subagent, input: {prompt: "sub task"}, fragments: 4}]
    - text: "All done."
- name: slow
  match: "slow"
  steps: [{delay_ms: 60000, text: "after a minute", event_delay_ms: 1000}]
- name: gated
  match: "gated"
  steps: [{text: "one", wait_gate_mid: g}]
- name: fallback
  match: ".*"
  steps: [{text: "fallback answer"}]
"#;

fn scripted() -> ScriptedModel {
    ScriptedModel::new("demo", Scenarios::from_yaml(SCENARIOS).unwrap())
}

#[tokio::test]
async fn replays_a_scenario_deterministically() {
    let model = scripted();
    let mut runs = Vec::new();
    for _ in 0..2 {
        let mut messages = vec![Message::user("please use the tool")];
        let first = answer(&model, ModelRequest::new("demo", messages.clone())).await;
        let (id, _, input) = first.message.tool_uses().next().unwrap();
        assert_eq!(input, &json!({"prompt": "sub task"}));
        let id = id.to_owned();
        messages.push(first.message.clone());
        messages.push(Message::new(
            Role::User,
            vec![ContentBlock::tool_result(id, "sub result", false)],
        ));
        let second = answer(&model, ModelRequest::new("demo", messages)).await;
        assert_eq!(second.message.text(), "All done.");
        assert_eq!(second.stop, StopReason::Completed);
        runs.push((first, second));
    }
    assert_eq!(runs[0], runs[1]);
}

/// `text_from_tool_result`: the answer repeats what the newest tool result said.
#[tokio::test]
async fn a_step_can_repeat_the_newest_tool_result() {
    let scenarios = Scenarios::from_yaml(
        r#"
- match: "ask"
  steps:
    - tool_calls: [{id: call_1, name: other_agent, input: {}}]
    - {text: "It said: ", text_from_tool_result: true}
"#,
    )
    .unwrap();
    let model = ScriptedModel::new("demo", scenarios);
    let mut messages = vec![Message::user("ask the other agent")];
    let first = answer(&model, ModelRequest::new("demo", messages.clone())).await;
    messages.push(first.message);
    messages.push(Message::new(
        Role::User,
        vec![ContentBlock::tool_result(
            "call_1",
            "the other answer",
            false,
        )],
    ));
    let second = answer(&model, ModelRequest::new("demo", messages)).await;
    assert_eq!(second.message.text(), "It said: the other answer");
}

#[tokio::test(start_paused = true)]
async fn delays_follow_tokio_time() {
    let model = scripted();
    let start = tokio::time::Instant::now();
    let response = answer(&model, request("slow please")).await;
    assert_eq!(response.message.text(), "after a minute");
    // 60 s before the answer plus 1 s between each of the three words.
    assert_eq!(start.elapsed(), Duration::from_secs(62));
}

#[tokio::test]
async fn gates_and_cancel() {
    let model = scripted();
    let cancel = CancellationToken::new();
    let mut stream = model
        .stream(request("gated"), cancel.clone())
        .await
        .unwrap();
    use futures::StreamExt;
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        ModelEvent::TextDelta { text: "one".into() }
    );
    cancel.cancel();
    assert!(matches!(
        stream.next().await.unwrap(),
        Err(Error::Cancelled)
    ));
    assert!(stream.next().await.is_none());

    let stream = model
        .stream(request("gated"), CancellationToken::new())
        .await
        .unwrap();
    model.gates().gate("g").open();
    let (events, error) = drain(stream).await;
    assert!(error.is_none());
    assert_eq!(text_of(&events), "one");
}

#[tokio::test]
async fn offline_demo_is_the_default_scripted_config() {
    let model =
        build_with_env(&ModelConfig::new(ModelKind::Scripted, "offline"), |_| None).unwrap();
    assert!(model.describe().contains("offline"));
    let response = answer(&*model, request("please delegate this")).await;
    let (_, name, input) = response.message.tool_uses().next().unwrap();
    assert_eq!(name, "subagent");
    assert!(input.get("prompt").is_some());
    let hello = answer(&*model, request("hello")).await;
    assert!(hello.message.text().contains("offline"));
}

/// The offline demo asked for a turn it has no answer for (the runtime's retry after an answer
/// without the structured output) says so in a user's words, not the scenario's internals.
#[tokio::test]
async fn the_demo_without_an_answer_says_so_in_a_users_words() {
    let model =
        build_with_env(&ModelConfig::new(ModelKind::Scripted, "offline"), |_| None).unwrap();
    let messages = vec![
        Message::user("Count the Rust files"),
        Message::new(Role::Assistant, vec![ContentBlock::text("an answer")]),
        Message::user("<system-reminder>Call the structured_output tool now.</system-reminder>"),
    ];
    let error = model
        .stream(
            ModelRequest::new("offline", messages),
            CancellationToken::new(),
        )
        .await
        .err()
        .map(|e| (e.code(), e.to_string()));
    assert_eq!(
        error,
        Some((
            ErrorCode::ModelBadRequest,
            "the offline scripted model has no answer for this turn: it plays a fixed demo (say \
             hello, delegate a hello) and cannot follow other instructions, such as an output \
             schema. Set ANTHROPIC_API_KEY or OPENAI_API_KEY to use a real model."
                .to_owned()
        ))
    );
}

/// A scenario file of one's own without an answer names the file and what is missing.
#[tokio::test]
async fn a_scenario_file_without_an_answer_names_the_file() {
    let scenarios =
        Scenarios::from_yaml("- name: only\n  match: hello\n  steps: [{text: hi}]\n").unwrap();
    let model = ScriptedModel::new("mine", scenarios).with_scenario_file("scenarios/mine.yaml");
    let error = model
        .stream(request("goodbye"), CancellationToken::new())
        .await
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        error.as_deref(),
        Some(
            "the scripted model has no answer in scenarios/mine.yaml: no scenario matches the \
             prompt \"goodbye\" (scenarios: only)"
        )
    );
}
