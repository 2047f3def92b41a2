//! A parent delegating to spawn: results, background, forwarded events. (Agent types routed
//! across spawn and fork are tested in `crates/cli/tests/suite/routing.rs`.)

use pretty_assertions::assert_eq;
use subagent_model::ModelKind;
use subagent_spawn::DEFAULT_SYSTEM_PROMPT;

use subagent_test_support::runs::assert_answered;

use super::support::{Parent, completed_events};
use super::support::{builtin_and, last_results, requests_for};

const DELEGATE: &str = r#"
- name: child
  match: "CHILD-TASK"
  steps:
    - text: "child says 42"
- name: parent
  match: "please delegate"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "CHILD-TASK count the things", description: "count"}
    - text: "parent done"
"#;

async fn parent_delegates_to_spawn(kind: ModelKind) {
    let parent = Parent::start(DELEGATE, kind, 3).await;
    let server = &parent.server;
    let outcome = parent.run("please delegate").await;
    assert_answered(&outcome, "parent done");
    assert_eq!(outcome.usage.tool_uses, 1);
    assert_eq!(server.violations(), Vec::<String>::new());
    let requests = server.model_requests();
    assert_eq!(requests.len(), 3);
    // The child starts fresh: its own system prompt, only the task.
    let child = requests_for(&requests, "CHILD-TASK");
    assert_eq!(child.len(), 1);
    assert_eq!(child[0].messages.len(), 1);
    let system = child[0].body.as_ref().unwrap().to_string();
    assert!(system.contains(DEFAULT_SYSTEM_PROMPT));
    // The child has the built-in tools and no delegation tool: nesting is opt-in (see
    // `nesting.rs`).
    assert_eq!(child[0].tool_names(), builtin_and(&[]));
    let parent_second = requests_for(&requests, "please delegate")
        .into_iter()
        .find(|r| r.messages.len() == 3)
        .unwrap();
    let results = last_results(parent_second);
    assert_eq!(results.len(), 1);
    let (_, text, is_error) = &results[0];
    assert!(!is_error || kind != ModelKind::Anthropic);
    assert!(
        text.starts_with(
            "child says 42\n\n<usage>input_tokens: 10, output_tokens: 5, tool_uses: 0"
        ),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parent_delegates_to_spawn_anthropic() {
    parent_delegates_to_spawn(ModelKind::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parent_delegates_to_spawn_responses() {
    parent_delegates_to_spawn(ModelKind::OpenaiResponses).await;
}

const BACKGROUND: &str = r#"
- name: notification
  match: "<task-notification>"
  steps:
    - text: "got the background result"
- name: child
  match: "BG-TASK"
  steps:
    - text: "background child finished"
- name: parent
  match: "in the background"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "BG-TASK work", description: "bg work", run_in_background: true}
    - text: "I will wait."
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_delegation_returns_at_once_and_notifies_later() {
    let parent = Parent::start(BACKGROUND, ModelKind::Anthropic, 3).await;
    let server = &parent.server;
    let outcome = parent.run("do it in the background").await;
    assert_answered(&outcome, "got the background result");
    let requests = server.model_requests();
    let parent = requests_for(&requests, "in the background");
    let started = &last_results(parent[1])[0].1;
    assert!(
        started.starts_with("Started background subagent"),
        "{started}"
    );
    let last = parent.last().unwrap().messages.last().unwrap().text();
    assert!(last.contains("<status>completed</status>"), "{last}");
    assert!(
        last.contains("<result>background child finished</result>"),
        "{last}"
    );
    assert!(last.contains("<summary>bg work</summary>"), "{last}");
}

const FORWARD: &str = r#"
- name: child
  match: "CHILD-LOOKS"
  steps:
    - text: "child looking"
      tool_calls:
        - {id: call_child_ls, name: ls, input: {path: "."}}
    - text: "child found it"
- name: parent
  match: "please watch"
  steps:
    - tool_calls:
        - {id: call_delegate, name: subagent, input: {prompt: "CHILD-LOOKS around"}}
    - text: "parent done"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreground_childs_events_reach_the_parents_stream_tagged_with_the_call() {
    use subagent_core::RunEvent;

    let parent = Parent::start(FORWARD, ModelKind::Anthropic, 3).await;
    let config = parent.config();
    let (events, _) = completed_events(config, "please watch").await;

    let tagged = |id: Option<&String>| id.map(String::as_str) == Some("call_delegate");
    // The child's own events, in order, as the parent reports them.
    let child: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::Text {
                text,
                parent_tool_use_id,
            } if tagged(parent_tool_use_id.as_ref()) => Some(format!("text {text}")),
            RunEvent::ToolCall {
                id,
                name,
                parent_tool_use_id,
                ..
            } if tagged(parent_tool_use_id.as_ref()) => Some(format!("call {id} {name}")),
            RunEvent::ToolResult {
                id,
                is_error,
                parent_tool_use_id,
                ..
            } if tagged(parent_tool_use_id.as_ref()) => Some(format!("result {id} {is_error}")),
            _ => None,
        })
        .collect::<Vec<_>>();
    let joined_text: String = child
        .iter()
        .filter_map(|line| line.strip_prefix("text "))
        .collect();
    assert!(joined_text.contains("child looking"), "{child:?}");
    assert!(joined_text.ends_with("child found it"), "{child:?}");
    let calls: Vec<&String> = child.iter().filter(|l| !l.starts_with("text ")).collect();
    assert_eq!(
        calls,
        ["call call_child_ls ls", "result call_child_ls false"]
    );

    // The parent's own call and result are untagged, and the child's events come before the
    // delegation's result.
    let position = |wanted: &dyn Fn(&RunEvent) -> bool| events.iter().position(wanted).unwrap();
    let parent_call = position(
        &|e| matches!(e, RunEvent::ToolCall { id, parent_tool_use_id: None, .. } if id == "call_delegate"),
    );
    let parent_result = position(
        &|e| matches!(e, RunEvent::ToolResult { id, parent_tool_use_id: None, .. } if id == "call_delegate"),
    );
    let child_result =
        position(&|e| matches!(e, RunEvent::ToolResult { id, .. } if id == "call_child_ls"));
    assert!(parent_call < child_result && child_result < parent_result);
}

const FORWARD_USAGE: &str = r#"
- name: child
  match: "CHILD-COUNTS"
  steps:
    - tool_calls:
        - {id: call_child_ls, name: ls, input: {path: "."}}
      usage: {input_tokens: 7, output_tokens: 3}
    - text: "child done"
      usage: {input_tokens: 11, output_tokens: 2}
- name: parent
  match: "please count"
  steps:
    - tool_calls:
        - {id: call_delegate, name: subagent, input: {prompt: "CHILD-COUNTS things"}}
      usage: {input_tokens: 100, output_tokens: 50}
    - text: "parent done"
      usage: {input_tokens: 200, output_tokens: 60}
"#;

/// A live view of a delegation (the CLI's progress line) sees the child's token counts move
/// while it works: its cumulative usage reaches the parent's stream tagged with the call, and
/// the parent's own usage events stay untagged and its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreground_childs_usage_reaches_the_parents_stream_tagged_with_the_call() {
    use subagent_core::RunEvent;

    let parent = Parent::start(FORWARD_USAGE, ModelKind::Anthropic, 3).await;
    let config = parent.config();
    let (events, outcome) = completed_events(config, "please count").await;

    let usage: Vec<(Option<&str>, u64, u64)> = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::Usage {
                usage,
                parent_tool_use_id,
            } => Some((
                parent_tool_use_id.as_deref(),
                usage.input_tokens,
                usage.output_tokens,
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        usage,
        [
            (None, 100, 50),
            (Some("call_delegate"), 7, 3),
            (Some("call_delegate"), 18, 5),
            (None, 300, 110),
        ]
    );
    assert_eq!(
        (outcome.usage.input_tokens, outcome.usage.output_tokens),
        (300, 110),
        "the parent's outcome counts its own tokens"
    );
}
