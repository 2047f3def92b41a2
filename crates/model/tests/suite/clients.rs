//! Streamed text, tool calls in fragments, parallel tool calls and usage, for each client.

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_model::{ModelEvent, ModelKind, ToolSpec, Usage};
use subagent_session::{ContentBlock, Message, Role, StopReason};
use subagent_test_support::FakeServer;

use super::support::{KINDS, answer, model, request, streamed, text_of};

const SCENARIOS: &str = r#"
- name: hello
  match: "(?i)say hi"
  steps:
    - text: "hi from the fake model"
      usage: {input_tokens: 120, output_tokens: 7, cache_read_tokens: 30, cache_write_tokens: 4}
- name: fragments
  match: "one tool"
  steps:
    - text: "Running it."
      tool_calls:
        - name: Bash
          fragments: 9
          input: {command: "echo hello && ls -la /tmp", description: "list /tmp", nested: {a: [1, 2, 3], "ü": "ẞ"}}
    - text: "done"
- name: parallel
  match: "two tools"
  steps:
    - tool_calls:
        - name: read_file
          input: {path: "a.txt"}
        - name: read_file
          input: {path: "b.txt"}
          fragments: 5
    - text: "both read"
"#;

#[tokio::test]
async fn streamed_text_for_each_client() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    for kind in KINDS {
        let model = model(&server, kind);
        let (events, error) = streamed(model.as_ref(), "please say hi").await;
        assert!(error.is_none(), "{kind:?}: {error:?}");
        let deltas = events
            .iter()
            .filter(|e| matches!(e, ModelEvent::TextDelta { .. }))
            .count();
        assert!(deltas >= 4, "{kind:?}: text arrived in {deltas} deltas");
        assert_eq!(text_of(&events), "hi from the fake model", "{kind:?}");
        assert_eq!(
            events.last(),
            Some(&ModelEvent::Stop {
                reason: StopReason::Completed
            }),
            "{kind:?}"
        );
    }
    assert_eq!(server.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn usage_is_reported() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    for kind in KINDS {
        let model = model(&server, kind);
        let response = answer(&*model, request("say hi")).await;
        let cache_write = if kind == ModelKind::Anthropic { 4 } else { 0 };
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 120,
                output_tokens: 7,
                cache_read_tokens: 30,
                cache_write_tokens: cache_write,
                ..Usage::default()
            },
            "{kind:?}"
        );
    }
}

#[tokio::test]
async fn tool_call_arguments_in_many_fragments() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let expected = json!({"command": "echo hello && ls -la /tmp", "description": "list /tmp",
                          "nested": {"a": [1, 2, 3], "ü": "ẞ"}});
    for kind in KINDS {
        let model = model(&server, kind);
        let (events, error) = streamed(model.as_ref(), "use one tool").await;
        assert!(error.is_none(), "{kind:?}: {error:?}");
        let fragments: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                ModelEvent::ToolCallDelta { index: 0, fragment } => Some(fragment.as_str()),
                _ => None,
            })
            .collect();
        assert!(
            fragments.len() >= 9,
            "{kind:?}: {} fragments",
            fragments.len()
        );
        let joined: serde_json::Value = serde_json::from_str(&fragments.concat()).unwrap();
        assert_eq!(joined, expected, "{kind:?}");
        let end = events
            .iter()
            .find_map(|e| match e {
                ModelEvent::ToolCallEnd { name, input, .. } => Some((name.clone(), input.clone())),
                _ => None,
            })
            .unwrap();
        assert_eq!(end, ("Bash".to_owned(), expected.clone()), "{kind:?}");
        // Replay the events through the collector: text then the call.
        let mut builder = subagent_model::ResponseBuilder::new();
        for e in events {
            builder.push(e).unwrap();
        }
        let response = builder.finish().unwrap();
        assert_eq!(response.message.text(), "Running it.");
        assert_eq!(response.message.tool_uses().count(), 1);
    }
}

#[tokio::test]
async fn parallel_tool_calls_round_trip() {
    let server = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    for kind in KINDS {
        let model = model(&server, kind);
        let mut req = request("read two tools please");
        req.tools = vec![ToolSpec {
            name: "read_file".into(),
            description: "Reads a file.".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }]
        .into();
        let first = answer(&*model, req.clone()).await;
        let calls: Vec<(String, String, serde_json::Value)> = first
            .message
            .tool_uses()
            .map(|(id, name, input)| (id.to_owned(), name.to_owned(), input.clone()))
            .collect();
        assert_eq!(calls.len(), 2, "{kind:?}");
        assert_ne!(calls[0].0, calls[1].0, "{kind:?}: ids must differ");
        assert_eq!(calls[0].2, json!({"path": "a.txt"}));
        assert_eq!(calls[1].2, json!({"path": "b.txt"}));
        // Answer both calls; the server checks that the results match the calls.
        req.messages.push(first.message.clone());
        req.messages.push(Message::new(
            Role::User,
            calls
                .iter()
                .map(|(id, _, input)| {
                    ContentBlock::tool_result(id.clone(), format!("contents of {input}"), false)
                })
                .collect(),
        ));
        let second = answer(&*model, req).await;
        assert_eq!(second.message.text(), "both read", "{kind:?}");
    }
    assert_eq!(server.violations(), Vec::<String>::new());
    let steps: Vec<_> = server
        .model_requests()
        .into_iter()
        .map(|r| r.scenario.unwrap())
        .collect();
    assert_eq!(
        steps,
        [0, 1, 0, 1, 0, 1]
            .map(|s| ("parallel".to_owned(), s))
            .to_vec()
    );
}

#[tokio::test]
async fn thinking_streams_as_thinking() {
    let server = FakeServer::from_yaml(
        r#"
- match: "think"
  steps:
    - thinking: "Let me think about it."
      text: "thought"
"#,
    )
    .await
    .unwrap();
    for kind in KINDS {
        let model = model(&server, kind);
        let response = answer(&*model, request("think please")).await;
        let thinking: Vec<&str> = response
            .message
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Thinking { thinking, .. } => Some(thinking.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(thinking, vec!["Let me think about it."], "{kind:?}");
        assert_eq!(response.message.text(), "thought");
    }
}
