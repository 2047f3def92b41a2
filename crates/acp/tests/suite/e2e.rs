//! The real pinned adapters (codex-acp 0.16.0, claude-agent-acp 0.23.1 running claude 2.1.197)
//! against the fake model server: a hello, a tool round trip, permission requests answered by
//! the row's policy, and a cancel mid-tool that leaves no process behind.

use std::time::{Duration, Instant};

use futures::StreamExt;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_acp::PermissionPolicy;
use subagent_core::{PermissionMode, RunEvent, StopReason, SubagentProvider, Usage};

use subagent_test_support::runs::{completed, run_to_end};

use super::harness::{Adapter, Harness, live_processes_matching};

/// Scenarios of the tests in this file: matched on the latest genuine user prompt.
const SCENARIOS: &str = r#"
- name: hello
  match: "(?i)^say hi$"
  steps:
    - text: "hi from fake"
- name: codex-read
  match: "(?i)read the input"
  steps:
    - text: "Reading."
      tool_calls:
        - name: exec_command
          input: {cmd: "cat input.txt"}
    - text: "it says hello"
- name: codex-patch
  match: "(?i)add the file"
  steps:
    - text: "Patching."
      tool_calls:
        - name: apply_patch
          custom: true
          input: "*** Begin Patch\n*** Add File: hello.txt\n+hello from a patch\n*** End Patch\n"
    - text: "patched"
- name: claude-bash
  match: "(?i)run bash"
  steps:
    - text: "Running."
      tool_calls:
        - name: Bash
          input: {command: "echo ran > ran.txt", description: "write ran.txt"}
    - text: "ran"
- name: codex-long
  match: "(?i)codex long command"
  steps:
    - text: "Sleeping."
      tool_calls:
        - name: exec_command
          input: {cmd: "sleep 41337 && echo never"}
    - text: "slept"
- name: remember
  match: "(?i)remember BETA"
  steps:
    - text: "remembered"
- name: nesting
  match: "(?i)^nesting check"
  steps:
    - text: "checked"
- name: recall
  match: "(?i)what did I ask you to remember"
  steps:
    - text: "you asked me to remember BETA"
- name: claude-long
  match: "(?i)claude long command"
  steps:
    - text: "Sleeping."
      tool_calls:
        - name: Bash
          input: {command: "sleep 41338 && echo never", description: "sleep"}
    - text: "slept"
"#;

fn texts(events: &[RunEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The tool calls and results of a run, with what of them does not change between runs.
fn tools(events: &[RunEvent], input_keys: &[&str]) -> Vec<Value> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolCall { name, input, .. } => {
                let kept: serde_json::Map<String, Value> = input_keys
                    .iter()
                    .filter_map(|k| input.get(*k).map(|v| ((*k).to_owned(), v.clone())))
                    .collect();
                Some(json!({"call": name, "input": kept}))
            }
            RunEvent::ToolResult {
                output, is_error, ..
            } => Some(json!({"result": output, "is_error": is_error})),
            _ => None,
        })
        .collect()
}

fn no_duration(usage: Usage) -> Usage {
    Usage {
        duration_ms: 0,
        ..usage
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hello_from_both_adapters() {
    let harness = Harness::new(SCENARIOS).await;
    for (adapter, usage) in [
        // codex-acp reports no token usage in its prompt answer; claude-agent-acp does.
        (Adapter::Codex, Usage::default()),
        (
            Adapter::Claude,
            Usage {
                input_tokens: 10,
                output_tokens: 5,
                ..Usage::default()
            },
        ),
    ] {
        let provider = harness.provider(adapter, |_| {});
        let (events, outcome) = run_to_end(&provider, harness.request("say hi")).await;
        assert_eq!(
            outcome.status,
            StopReason::Completed,
            "{adapter:?}: {outcome:?}"
        );
        assert_eq!(
            (
                outcome.text.as_str(),
                texts(&events).as_str(),
                outcome.diagnostic.as_deref()
            ),
            ("hi from fake", "hi from fake", None),
            "{adapter:?}"
        );
        assert_eq!(no_duration(outcome.usage), usage, "{adapter:?}");
        assert!(matches!(events.first(), Some(RunEvent::Started { .. })));
        assert_eq!(
            events.last(),
            Some(&RunEvent::Finished {
                status: StopReason::Completed
            })
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_round_trip_through_codex_acp() {
    let harness = Harness::new(SCENARIOS).await;
    std::fs::write(harness.project().join("input.txt"), "hello\n").unwrap();
    let provider = harness.provider(Adapter::Codex, |_| {});
    let (events, outcome) = completed(&provider, harness.request("read the input")).await;
    assert_eq!(outcome.text, "it says hello");
    assert_eq!(outcome.usage.tool_uses, 1);
    let mut seen = tools(&events, &["command", "cwd"]);
    // codex-acp reports a reading command's output in its content (fenced) or, in some runs,
    // only in `rawOutput` (bare).
    let output = seen[1]["result"].as_str().unwrap_or_default().to_owned();
    assert!(
        output == "hello\n" || output == "```txt\nhello\n```\n",
        "{output:?}"
    );
    seen[1]["result"] = json!("hello");
    assert_eq!(
        seen,
        vec![
            // codex-acp calls a reading command `read`.
            json!({"call": "read", "input": {
                "command": ["/bin/bash", "-lc", "cat input.txt"],
                "cwd": harness.project().display().to_string(),
            }}),
            json!({"result": "hello", "is_error": false}),
        ]
    );
    // The model saw the command's output.
    let requests = harness.server.model_requests();
    let last = serde_json::to_string(&requests.last().unwrap().body).unwrap();
    assert!(last.contains("hello"), "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_acp_permission_requests_are_answered_by_the_rows_policy() {
    // codex-acp's read-only mode (the row's `default`) asks before applying a patch. Rejected,
    // codex ends its turn as cancelled (a failure: nobody cancelled the run).
    for (policy, written, status) in [
        (PermissionPolicy::Reject, false, StopReason::Failed),
        (PermissionPolicy::Allow, true, StopReason::Completed),
    ] {
        let harness = Harness::new(SCENARIOS).await;
        let provider = harness.provider(Adapter::Codex, |c| c.permissions = policy);
        let (events, outcome) = run_to_end(&provider, harness.request("add the file")).await;
        assert_eq!(outcome.status, status, "{policy:?}: {outcome:?}");
        let file = harness.project().join("hello.txt");
        assert_eq!(file.exists(), written, "{policy:?}: {events:#?}");
        assert_eq!(
            tools(&events, &[]).first(),
            Some(&json!({"call": "edit", "input": {}})),
            "{policy:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_agent_acp_permission_requests_are_answered_by_policy_and_ceiling() {
    // claude's default mode asks before Bash. Allowed by the row's policy it runs; rejected by
    // the policy, or under a `plan` ceiling (claude's plan mode) even with `allow`, it does not.
    for (policy, ceiling, written) in [
        (PermissionPolicy::Reject, None, false),
        (PermissionPolicy::Allow, None, true),
        (PermissionPolicy::Allow, Some(PermissionMode::Plan), false),
    ] {
        let harness = Harness::new(SCENARIOS).await;
        let provider = harness.provider(Adapter::Claude, |c| c.permissions = policy);
        let mut request = harness.request("run bash");
        if let Some(ceiling) = ceiling {
            request = request.permission_ceiling(ceiling);
        }
        let (events, outcome) = run_to_end(&provider, request).await;
        assert_eq!(
            outcome.status,
            StopReason::Completed,
            "{policy:?}: {outcome:?}"
        );
        assert_eq!(
            harness.project().join("ran.txt").exists(),
            written,
            "{policy:?} {ceiling:?}: {events:#?}"
        );
        let calls = tools(&events, &["command"]);
        assert_eq!(
            calls.first(),
            Some(&json!({"call": "execute", "input": {"command": "echo ran > ran.txt"}})),
            "{policy:?} {ceiling:?}"
        );
    }
}

/// Waits (bounded) until `check` holds.
async fn eventually(what: &str, mut check: impl FnMut() -> Vec<String>, want_empty: bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let found = check();
        if found.is_empty() == want_empty {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: {found:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_tool_leaves_no_process_behind() {
    for (adapter, prompt, marker) in [
        (Adapter::Codex, "codex long command", "sleep 41337"),
        (Adapter::Claude, "claude long command", "sleep 41338"),
    ] {
        let harness = Harness::new(SCENARIOS).await;
        let provider = harness.provider(adapter, |c| {
            c.permissions = PermissionPolicy::Allow;
            c.permission_mode = PermissionMode::Bypass;
        });
        let mut run = provider
            .start(harness.request(prompt).build())
            .await
            .unwrap();
        let mut events = run.take_events().unwrap();
        while let Some(event) = events.next().await {
            if matches!(event, RunEvent::ToolCall { .. }) {
                break;
            }
        }
        // The agent's own tree: the command, and every process started with the project dir
        // or the fake server's address in its command line or environment is gone afterwards.
        eventually(
            &format!("{adapter:?}: the command runs"),
            || live_processes_matching(marker),
            false,
        )
        .await;
        let started = Instant::now();
        run.cancel();
        let outcome = run.outcome().await;
        assert_eq!(
            outcome.status,
            StopReason::Cancelled,
            "{adapter:?}: {outcome:?}"
        );
        eventually(
            &format!("{adapter:?}: processes left after cancel"),
            || {
                live_processes_matching(marker)
                    .into_iter()
                    .chain(live_processes_matching(&harness.server.url()))
                    .collect()
            },
            true,
        )
        .await;
        tracing_free_note(adapter, started.elapsed());
    }
}

/// How long the cancel took, for the reader of a failing run's output.
fn tracing_free_note(adapter: Adapter, took: Duration) {
    eprintln!("{adapter:?}: cancelled in {} ms", took.as_millis());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_agent_acp_resumes_a_session_through_session_load() {
    // (codex-acp's resume is the conformance kit's check.)
    let harness = Harness::new(SCENARIOS).await;
    let provider = harness.provider(Adapter::Claude, |_| {});
    let (_, first) = completed(&provider, harness.request("remember BETA")).await;
    let session = first.session.clone().expect("a session to resume");
    assert_eq!(
        (session.provider.as_str(), session.cwd.as_deref()),
        ("acp", Some(harness.project().as_path()))
    );
    let before = harness.server.model_requests().len();
    let (events, second) = completed(
        &provider,
        harness
            .request("what did I ask you to remember?")
            .resume(session.clone()),
    )
    .await;
    assert_eq!(second.text, "you asked me to remember BETA");
    // The replayed history is not the second run's: its text is its own answer only.
    assert_eq!(texts(&events), "you asked me to remember BETA");
    assert_eq!(second.session.map(|s| s.id), Some(session.id));
    let requests = harness.server.model_requests();
    let resumed = serde_json::to_string(&requests[before..].last().unwrap().body).unwrap();
    // The first run's prompt and answer are in the resumed conversation (without the
    // `session/close` that ends each run, claude had not always written its answer, or its
    // session at all, when its tree was killed).
    assert!(
        resumed.contains("remember BETA") && resumed.contains("remembered"),
        "{resumed}"
    );

    // An unknown session: failed, the agent's error in the diagnostic.
    let mut unknown = session_ref(&harness);
    unknown.id = "00000000-0000-4000-8000-000000000000".into();
    let (_, outcome) = run_to_end(&provider, harness.request("say hi").resume(unknown)).await;
    assert_eq!(outcome.status, StopReason::Failed, "{outcome:?}");
}

fn session_ref(harness: &Harness) -> subagent_core::SessionRef {
    subagent_core::SessionRef {
        provider: "acp".into(),
        id: String::new(),
        cwd: Some(harness.project()),
        transcript: None,
    }
}

/// `depth_limit`: under a depth cap neither pinned adapter offers its model its own sub-agent
/// tool — claude-agent-acp's Claude Code its Agent (or Task) tool, codex-acp's codex the
/// multi-agent `spawn_agent` (or the `tool_search` a catalog model finds it behind); uncapped,
/// both do (the control).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_depth_cap_leaves_both_adapters_without_their_own_sub_agents() {
    let harness = Harness::new(SCENARIOS).await;
    for adapter in [Adapter::Codex, Adapter::Claude] {
        let provider = harness.provider(adapter, |_| {});
        assert!(provider.capabilities().depth_limit, "{adapter:?}");
        for capped in [false, true] {
            let marker = format!("nesting check {adapter:?} capped={capped}");
            let mut request = harness.request(&marker);
            if capped {
                request = request.max_depth(1);
            }
            let (_, outcome) = run_to_end(&provider, request).await;
            assert_eq!(
                outcome.status,
                StopReason::Completed,
                "{marker}: {outcome:?}"
            );
            let requests = harness.server.requests();
            let tools: Vec<String> = requests
                .iter()
                .filter(|r| r.messages.iter().any(|m| m.text().contains(&marker)))
                .filter_map(|r| r.body.as_ref())
                .flat_map(subagent_test_support::tool_paths)
                .collect();
            assert!(!tools.is_empty(), "{marker}: no model request seen");
            let sub_agents: Vec<&String> = tools
                .iter()
                .filter(|t| {
                    ["Agent", "Task", "tool_search"].contains(&t.as_str())
                        || t.ends_with("/spawn_agent")
                        || *t == "spawn_agent"
                })
                .collect();
            assert_eq!(
                sub_agents.is_empty(),
                capped,
                "{marker}: sub-agent tools {sub_agents:?} of {tools:?}"
            );
        }
    }
}

/// Admission (`max_starting`) against codex-acp: past the bound a child waits, queued, and starts
/// once one before it has answered `initialize`; a queued child cancelled starts nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_bound_a_child_waits_queued_and_a_cancelled_one_starts_nothing() {
    let harness = Harness::new(SCENARIOS).await;
    let provider = harness.provider(Adapter::Codex, |config| config.max_starting = Some(1));
    subagent_test_support::runs::assert_admission(
        &provider,
        || harness.request("say hi").build(),
        "hi from fake",
    )
    .await;
    // Two children asked the model; the cancelled one never ran.
    let asked = harness
        .server
        .requests()
        .iter()
        .filter(|r| r.messages.iter().any(|m| m.text().contains("say hi")))
        .count();
    assert_eq!(asked, 2);
}
