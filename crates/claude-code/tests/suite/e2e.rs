//! End to end against the real `claude` 2.1.197 and the fake model server. Every capability
//! the provider declares is proven here.

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_core::{RunEvent, StopReason, SubagentProvider, ToolFilter};

use subagent_test_support::runs::{completed, run_to_end};

use super::harness::{Harness, finish, live_processes};
use super::harness::{system_text, texts};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hello() {
    let h = Harness::new().await;
    let (events, outcome) = completed(&h.provider(|_| {}), h.request("say hi")).await;
    assert_eq!(outcome.text, "hi from fake");
    assert_eq!(texts(&events), ["hi from fake"]);
    assert!(matches!(events.first(), Some(RunEvent::Started { .. })));
    assert!(matches!(
        events.last(),
        Some(RunEvent::Finished {
            status: StopReason::Completed
        })
    ));
    assert!(outcome.usage.input_tokens > 0);
    let session = outcome.session.expect("a session to resume");
    assert_eq!(session.provider, "claude");
    assert_eq!(session.cwd.as_deref(), Some(h.project().as_path()));
    // Only the model endpoint was asked; the key came from the provider's env.
    let requests = h.model_requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/messages?beta=true");
    // Without a depth cap claude keeps its own sub-agent tool.
    assert!(requests[0].tool_names().contains(&"Agent".to_owned()));
    assert!(live_processes(&h.project(), "subagent-claude-e2e-no-such-marker").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bash_tool_round_trip() {
    let h = Harness::new().await;
    let provider = h.provider(|c| c.allowed_tools = vec!["Bash".into()]);
    let (events, outcome) = completed(&provider, h.request("BASH-ROUND-TRIP")).await;
    assert_eq!(outcome.text, "The command printed hello-from-bash.");
    assert_eq!(
        std::fs::read_to_string(h.project().join("out.txt")).unwrap(),
        "hello-from-bash\n"
    );
    let call = events.iter().find_map(|e| match e {
        RunEvent::ToolCall { id, name, .. } => Some((id.clone(), name.clone())),
        _ => None,
    });
    let (call_id, name) = call.expect("a tool call event");
    assert_eq!(name, "Bash");
    let result = events.iter().find_map(|e| match e {
        RunEvent::ToolResult {
            id,
            output,
            is_error,
            ..
        } if *id == call_id => Some((output.clone(), *is_error)),
        _ => None,
    });
    assert_eq!(result, Some(("hello-from-bash".to_owned(), false)));
    assert_eq!(outcome.usage.tool_uses, 1);
    assert_eq!(h.model_requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_output() {
    let h = Harness::new().await;
    let schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["name", "n"],
    });
    let (_, outcome) = completed(
        &h.provider(|_| {}),
        h.request("SCHEMA-WIDGET").output_schema(schema.clone()),
    )
    .await;
    assert_eq!(outcome.structured, Some(json!({"name": "widget", "n": 3})));
    let tools = h.model_requests()[0].tool_names();
    assert!(tools.contains(&"StructuredOutput".to_owned()), "{tools:?}");

    // A model that never calls the tool: claude ends "success", the provider says failed.
    let h = Harness::new().await;
    let (_, outcome) = run_to_end(
        &h.provider(|_| {}),
        h.request("SCHEMA-IGNORED").output_schema(schema),
    )
    .await;
    assert_eq!(outcome.status, StopReason::Failed, "{outcome:?}");
    assert_eq!(outcome.structured, None);
    assert!(
        outcome
            .diagnostic
            .unwrap_or_default()
            .contains("StructuredOutput"),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_filter_and_depth_cap_shape_the_tool_list() {
    let h = Harness::new().await;
    let filter = ToolFilter {
        allow: Some(vec![
            "Read".into(),
            "Bash".into(),
            "Web*".into(),
            "Agent".into(),
        ]),
        deny: vec!["Bash".into(), "WebSearch".into()],
    };
    // Depth 0 with max_depth 1: the child runs at the cap and must not delegate.
    completed(
        &h.provider(|_| {}),
        h.request("say hi").tool_filter(filter).max_depth(1),
    )
    .await;
    let mut tools = h.model_requests()[0].tool_names();
    tools.sort();
    assert_eq!(tools, ["Read", "WebFetch"]);

    // A cap alone removes only the sub-agent tool, also below the cap: claude's own sub-agents
    // nest without limit, so under a cap the child may start none.
    let h = Harness::new().await;
    completed(&h.provider(|_| {}), h.request("say hi").max_depth(3)).await;
    let tools = h.model_requests()[0].tool_names();
    assert!(!tools.contains(&"Agent".to_owned()), "{tools:?}");
    assert!(tools.contains(&"Read".to_owned()), "{tools:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persona_and_model_reach_the_model_request() {
    let h = Harness::new().await;
    completed(
        &h.provider(|_| {}),
        h.request("say hi")
            .persona("PERSONA-MARKER: you answer like a pirate.")
            .model("my-fake-model-1"),
    )
    .await;
    let request = &h.model_requests()[0];
    assert!(system_text(request).contains("PERSONA-MARKER: you answer like a pirate."));
    let model = request
        .body
        .as_ref()
        .and_then(|b| b.get("model"))
        .and_then(Value::as_str);
    assert_eq!(model, Some("my-fake-model-1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn effort_reaches_the_model_request() {
    let h = Harness::new().await;
    completed(
        &h.provider(|_| {}),
        h.request("say hi").effort(subagent_core::Effort::Low),
    )
    .await;
    let body = h.model_requests()[0].body.clone().unwrap();
    assert_eq!(
        body["output_config"]["effort"], "low",
        "{}",
        body["output_config"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_turns() {
    let h = Harness::new().await;
    let provider = h.provider(|c| c.allowed_tools = vec!["Bash".into()]);
    let (_, outcome) = run_to_end(&provider, h.request("MAX-TURNS").max_turns(1)).await;
    assert_eq!(outcome.status, StopReason::MaxTurns, "{outcome:?}");
    assert_eq!(
        outcome.diagnostic.as_deref(),
        Some("Reached maximum number of turns (1)")
    );
    assert_eq!(h.model_requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_continues_the_session() {
    let h = Harness::new().await;
    let provider = h.provider(|_| {});
    let (_, first) = completed(&provider, h.request("REMEMBER the number 42")).await;
    let session = first.session.expect("a session");

    let (_, second) = completed(
        &provider,
        h.request("RECALL the number").resume(session.clone()),
    )
    .await;
    assert_eq!(second.text, "You said 42.");
    assert_eq!(second.session.map(|s| s.id), Some(session.id));
    // The resumed request carries the first exchange.
    let requests = h.model_requests();
    let last = requests.last().unwrap();
    let history = serde_json::to_string(&last.messages).unwrap();
    assert!(history.contains("REMEMBER the number 42"), "{history}");
    assert!(history.contains("I will remember 42."), "{history}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_error_fails_with_its_message() {
    let h = Harness::new().await;
    let (_, outcome) = run_to_end(&h.provider(|_| {}), h.request("MODEL-ERROR")).await;
    assert_eq!(outcome.status, StopReason::Failed, "{outcome:?}");
    let diagnostic = outcome.diagnostic.unwrap_or_default();
    assert!(diagnostic.contains("fake bad request"), "{diagnostic}");
    assert!(diagnostic.contains("400"), "{diagnostic}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_tool_leaves_no_process() {
    let h = Harness::new().await;
    let fifo = h.project().join("started.fifo");
    subagent_test_support::procs::mkfifo(&fifo);
    let provider = h.provider(|c| {
        c.allowed_tools = vec!["Bash".into()];
        c.grace_ms = 5000;
    });
    let run = provider
        .start(h.request("CANCEL-MID-TOOL").build())
        .await
        .unwrap();
    // The tool writes its `sleep`'s pid into the FIFO once the sleep runs: no polling.
    let read = tokio::task::spawn_blocking(move || std::fs::read_to_string(fifo));
    let pid: i32 = tokio::time::timeout(Duration::from_secs(60), read)
        .await
        .expect("the Bash tool never started")
        .unwrap()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    run.cancel();
    let (events, outcome) = finish(run).await;
    assert_eq!(outcome.status, StopReason::Cancelled, "{outcome:?}");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RunEvent::ToolCall { name, .. } if name == "Bash"))
    );
    // claude itself, its shell and the sleep: nothing is left in the project or by its marker.
    let left = live_processes(&h.project(), "sleep 3017");
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_agent_events_carry_the_parent_call() {
    let h = Harness::new().await;
    let (events, outcome) = completed(&h.provider(|_| {}), h.request("DELEGATE-NESTED")).await;
    assert_eq!(outcome.text, "parent done");
    let agent_call = events
        .iter()
        .find_map(|e| match e {
            RunEvent::ToolCall {
                id,
                name,
                parent_tool_use_id: None,
                ..
            } if name == "Agent" => Some(id.clone()),
            _ => None,
        })
        .expect("the Agent call");
    // The nested agent's own tool call and its result carry the Agent call's id.
    let nested_call = events
        .iter()
        .find_map(|e| match e {
            RunEvent::ToolCall {
                id,
                name,
                parent_tool_use_id: Some(parent),
                ..
            } if name == "Bash" && *parent == agent_call => Some(id.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no nested Bash call in {events:#?}"));
    let nested_result = events.iter().find_map(|e| match e {
        RunEvent::ToolResult {
            id,
            output,
            parent_tool_use_id: Some(parent),
            ..
        } if *id == nested_call && *parent == agent_call => Some(output.clone()),
        _ => None,
    });
    assert_eq!(nested_result.as_deref(), Some("nested-bash"));
    let agent_result = events.iter().find_map(|e| match e {
        RunEvent::ToolResult {
            id,
            output,
            parent_tool_use_id: None,
            ..
        } if *id == agent_call => Some(output.clone()),
        _ => None,
    });
    assert!(agent_result.unwrap_or_default().contains("sub result 42"));
    // The nested agent's text is not the child's answer.
    assert_eq!(texts(&events), ["parent done"]);
}

/// Why any depth cap removes claude's sub-agent tool: without one, a sub-agent's own `Agent`
/// call runs a sub-sub-agent (claude sets no nesting limit of its own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_sub_agents_nest_without_a_limit_of_their_own() {
    let h = Harness::new().await;
    completed(&h.provider(|_| {}), h.request("NEST-TOP")).await;
    let reached = h.model_requests().iter().any(|r| {
        r.scenario
            .as_ref()
            .is_some_and(|(name, _)| name == "nest-two")
    });
    assert!(reached, "the second nesting level never asked the model");
}

/// The request's permission ceiling beats the configured mode: a child configured with
/// `bypassPermissions` but started under a plan-mode parent cannot run the command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_ceiling_overrides_a_looser_configured_mode() {
    let h = Harness::new().await;
    let bypass = |c: &mut subagent_claude_code::ClaudeCodeConfig| {
        c.permission_mode = subagent_claude_code::ClaudePermissionMode::BypassPermissions;
        c.env.insert("IS_SANDBOX".into(), "1".into());
    };
    let (events, _outcome) = run_to_end(
        &h.provider(bypass),
        h.request("BASH-ROUND-TRIP")
            .permission_ceiling(subagent_core::PermissionMode::Plan),
    )
    .await;
    assert!(
        !h.project().join("out.txt").exists(),
        "the command ran under a plan ceiling"
    );
    let refused = events
        .iter()
        .any(|e| matches!(e, RunEvent::ToolResult { is_error: true, .. }));
    assert!(refused, "the Bash call was not refused: {events:?}");

    // The same provider without a ceiling runs it.
    completed(&h.provider(bypass), h.request("BASH-ROUND-TRIP")).await;
    assert!(h.project().join("out.txt").exists());
}
