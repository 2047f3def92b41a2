//! The real `codex` CLI against the fake model server: what the capability table claims.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_core::{RunEvent, StopReason, SubagentProvider, Usage};

use subagent_test_support::runs::{completed, run_to_end};

use super::harness::{Harness, MODEL, finish, texts};

/// Scenarios of the tests in this file and `e2e_failures.rs`: matched on the latest genuine
/// user prompt, never on codex's developer prompts.
pub(super) const SCENARIOS: &str = r#"
- name: hello
  match: "(?i)^say hi$"
  steps:
    - text: "hi from fake"
- name: tools
  match: "(?i)use the tools"
  steps:
    - text: "Running it."
      tool_calls:
        - name: exec_command
          input: {cmd: "echo hello-from-codex > out.txt && cat out.txt"}
    - text: "Patching."
      tool_calls:
        - name: apply_patch
          custom: true
          input: "*** Begin Patch\n*** Add File: hello.txt\n+hello from a patch\n*** End Patch\n"
    - text: "Done: wrote out.txt and hello.txt"
- name: json
  match: "(?i)describe the widget"
  steps:
    - text: '{"name":"widget","n":3}'
- name: remember
  match: "(?i)remember BETA"
  steps:
    - text: "remembered"
- name: recall
  match: "(?i)what did I ask you to remember"
  steps:
    - text: "you asked me to remember BETA"
- name: bad-request
  match: "(?i)trigger a model error"
  steps:
    - error: {status: 400, type: invalid_request_error, message: "fake bad request"}
- name: long-command
  match: "(?i)run the long command"
  steps:
    - text: "Sleeping."
      tool_calls:
        - name: exec_command
          input: {cmd: "sleep 31337 && echo never"}
    - text: "slept"
- name: stall
  match: "(?i)stall forever"
  steps:
    - wait_gate: never-opened
      text: "too late"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hello_completes_with_text_usage_and_a_session() {
    let harness = Harness::new(SCENARIOS).await;
    let provider = harness.provider(|_| {});
    let (events, outcome) = completed(&provider, harness.request("say hi")).await;
    assert_eq!(outcome.text, "hi from fake");
    assert_eq!(outcome.diagnostic, None);
    assert_eq!(
        Usage {
            duration_ms: 0,
            ..outcome.usage
        },
        Usage {
            input_tokens: 10,
            output_tokens: 5,
            ..Usage::default()
        }
    );
    let session = outcome.session.unwrap();
    assert_eq!(session.provider, "codex");
    assert!(!session.id.is_empty());
    assert_eq!(session.cwd, Some(harness.project()));
    assert_eq!(texts(&events), vec!["hi from fake".to_owned()]);
    assert!(matches!(events.first(), Some(RunEvent::Started { .. })));
    assert!(matches!(
        events.last(),
        Some(RunEvent::Finished {
            status: StopReason::Completed
        })
    ));
    let requests = harness.server.model_requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/responses");
    assert_eq!(harness.server.violations(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_command_and_apply_patch_round_trips_in_workspace_write() {
    let harness = Harness::new(SCENARIOS).await;
    let provider = harness.provider(|c| c.sandbox = subagent_codex::SandboxMode::WorkspaceWrite);
    let (events, outcome) = completed(&provider, harness.request("use the tools please")).await;
    assert_eq!(outcome.text, "Done: wrote out.txt and hello.txt");
    assert_eq!(outcome.usage.tool_uses, 2);
    let project = harness.project();
    assert_eq!(
        std::fs::read_to_string(project.join("out.txt")).unwrap(),
        "hello-from-codex\n"
    );
    assert_eq!(
        std::fs::read_to_string(project.join("hello.txt")).unwrap(),
        "hello from a patch\n"
    );
    let tools: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolCall { id, name, .. } => Some((format!("call {name}"), id.clone())),
            RunEvent::ToolResult {
                id,
                output,
                is_error,
                ..
            } => Some((format!("result {output:?} error={is_error}"), id.clone())),
            _ => None,
        })
        .collect();
    let hello = project.join("hello.txt");
    assert_eq!(
        tools
            .iter()
            .map(|(what, _)| what.clone())
            .collect::<Vec<_>>(),
        vec![
            "call exec_command".to_owned(),
            "result \"hello-from-codex\\n\" error=false".to_owned(),
            "call apply_patch".to_owned(),
            format!("result \"add {}\" error=false", hello.display()),
        ]
    );
    assert_eq!(tools[0].1, tools[1].1, "a result answers its call");
    assert_eq!(tools[2].1, tools[3].1, "a result answers its call");
    assert_eq!(
        texts(&events),
        vec![
            "Running it.".to_owned(),
            "Patching.".to_owned(),
            "Done: wrote out.txt and hello.txt".to_owned()
        ]
    );
    assert_eq!(harness.server.model_requests().len(), 3);
    assert_eq!(harness.server.violations(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_schema_gives_validated_structured_output() {
    let harness = Harness::new(SCENARIOS).await;
    let schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["name", "n"],
        "additionalProperties": false
    });
    let provider = harness.provider(|_| {});
    let (_, outcome) = completed(
        &provider,
        harness
            .request("describe the widget")
            .output_schema(schema.clone()),
    )
    .await;
    assert_eq!(outcome.structured, Some(json!({"name": "widget", "n": 3})));
    let body = harness.server.model_requests()[0].body.clone().unwrap();
    assert_eq!(
        body["text"]["format"],
        json!({"type": "json_schema", "strict": true, "schema": schema, "name": "codex_output_schema"})
    );

    // The same answer against a schema it does not satisfy: Failed, the text kept.
    let strict = json!({"type": "object", "required": ["missing"]});
    let (_, outcome) = run_to_end(
        &provider,
        harness.request("describe the widget").output_schema(strict),
    )
    .await;
    assert_eq!(outcome.status, StopReason::Failed);
    assert_eq!(outcome.text, r#"{"name":"widget","n":3}"#);
    let diagnostic = outcome.diagnostic.unwrap();
    assert!(
        diagnostic.starts_with("the structured output does not match the output schema"),
        "{diagnostic}"
    );
}

fn developer_texts(body: &Value) -> Vec<String> {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["role"] == "developer")
        .flat_map(|item| item["content"].as_array().into_iter().flatten())
        .filter_map(|part| part["text"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persona_and_model_reach_the_model_request() {
    let harness = Harness::new(SCENARIOS).await;
    // No model in the config: the request's model must be the one sent.
    let provider = harness.provider(|c| c.model = None);
    let persona = "PERSONA-7f3a: you are a terse reviewer.\nAnswer in \"one\" line.";
    completed(
        &provider,
        harness
            .request("say hi")
            .persona(persona)
            .model("gpt-6-sol"),
    )
    .await;
    let body = harness.server.model_requests()[0].body.clone().unwrap();
    assert_eq!(body["model"], "gpt-6-sol");
    let developer = developer_texts(&body);
    assert!(
        developer.iter().any(|text| text == persona),
        "persona not among the developer texts: {developer:#?}"
    );

    // Without a persona, nothing of it is sent; the config's model applies.
    let provider = harness.provider(|_| {});
    completed(&provider, harness.request("say hi")).await;
    let body = harness.server.model_requests()[1].body.clone().unwrap();
    assert_eq!(body["model"], MODEL);
    assert!(!body.to_string().contains("PERSONA-7f3a"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn effort_reaches_the_model_request_as_reasoning_effort() {
    let harness = Harness::new(SCENARIOS).await;
    let provider = harness.provider(|_| {});
    completed(
        &provider,
        harness.request("say hi").effort(subagent_core::Effort::Low),
    )
    .await;
    let body = harness.server.model_requests()[0].body.clone().unwrap();
    assert_eq!(body["reasoning"]["effort"], "low");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_continues_the_thread_with_its_history() {
    let harness = Harness::new(SCENARIOS).await;
    let provider = harness.provider(|_| {});
    let (_, first) = completed(&provider, harness.request("remember BETA")).await;
    let session = first.session.clone().unwrap();

    let (_, second) = completed(
        &provider,
        harness
            .request("what did I ask you to remember?")
            .resume(session.clone()),
    )
    .await;
    assert_eq!(second.text, "you asked me to remember BETA");
    assert_eq!(second.session.as_ref().map(|s| &s.id), Some(&session.id));
    let requests = harness.server.model_requests();
    assert_eq!(requests.len(), 2);
    let history = requests[1].body.clone().unwrap().to_string();
    assert!(history.contains("remember BETA"), "no history re-sent");
    assert!(history.contains("remembered"), "no history re-sent");

    // An unknown thread: Failed with codex's own explanation.
    let mut unknown = session;
    unknown.id = "01a229ea-0000-7000-8000-000000000000".into();
    let (_, outcome) = run_to_end(&provider, harness.request("say hi").resume(unknown)).await;
    assert_eq!(outcome.status, StopReason::Failed);
    let diagnostic = outcome.diagnostic.unwrap();
    assert!(
        diagnostic.contains("no rollout found for thread id 01a229ea-0000-7000-8000-000000000000"),
        "{diagnostic}"
    );
}

/// The request's permission ceiling beats the configured sandbox: a child configured for
/// `workspace-write` but started under a plan-mode parent runs read-only, so neither the command
/// nor the patch writes anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_ceiling_makes_the_sandbox_read_only() {
    let harness = Harness::new(SCENARIOS).await;
    let provider = harness.provider(|c| c.sandbox = subagent_codex::SandboxMode::WorkspaceWrite);
    completed(
        &provider,
        harness
            .request("use the tools please")
            .permission_ceiling(subagent_core::PermissionMode::Plan),
    )
    .await;
    let project = harness.project();
    assert!(
        !project.join("out.txt").exists(),
        "the command wrote under a plan ceiling"
    );
    assert!(
        !project.join("hello.txt").exists(),
        "the patch applied under a plan ceiling"
    );
    let first = &harness.server.model_requests()[0];
    let metadata = first.header("x-codex-turn-metadata").unwrap_or_default();
    assert!(metadata.contains("read-only"), "{metadata}");
}

/// Scripted calls of codex's own sub-agent tools: v1 (`multi_agent_v1`, the default) and v2
/// (`collaboration`, feature `multi_agent_v2`). The v1 sub-agent's prompt matches `sub`.
const SUB_AGENT_SCENARIOS: &str = r#"
- name: spawn-v1
  match: "(?i)delegate it"
  steps:
    - text: "Delegating."
      tool_calls:
        - {name: spawn_agent, namespace: multi_agent_v1, input: {message: "SUBTASK-1"}}
    # codex runs a sub-agent on its own task: hold the parent's last answer until the test
    # has seen the sub-agent's request (else codex may exit first and stop it).
    - wait_gate: sub-seen
      text: "parent done"
- name: spawn-v2
  match: "(?i)collaborate now"
  steps:
    - text: "Delegating v2."
      tool_calls:
        - {name: spawn_agent, namespace: collaboration, input: {task_name: "sub_task", message: "SUBTASK-2", fork_turns: "none"}}
    - text: "parent v2 done"
- name: sub
  match: "SUBTASK"
  steps:
    - text: "sub done"
# codex tells the parent when its sub-agent finished, as a user message of its own.
- name: notified
  match: "<subagent_notification>"
  steps:
    - text: "parent done"
- name: hello
  match: "(?i)^say hi$"
  steps:
    - text: "hi from fake"
"#;

/// The tool names of a recorded request, a namespace's tools as `namespace/tool`.
fn tool_names(body: &Value) -> Vec<String> {
    subagent_test_support::tool_paths(body)
}

fn is_sub_agent_tool(name: &str) -> bool {
    name.ends_with("/spawn_agent") || name == "tool_search"
}

/// The outputs the parent's requests carry back for its tool calls.
fn call_outputs(body: &Value) -> Vec<String> {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["type"] == "function_call_output")
        .filter_map(|item| item["output"].as_str().map(str::to_owned))
        .collect()
}

/// The distinct codex threads (the `thread-id` header) that asked the model something.
fn threads(harness: &Harness) -> Vec<String> {
    let mut threads: Vec<String> = Vec::new();
    for request in harness.server.model_requests() {
        let id = request.header("thread-id").unwrap_or_default().to_owned();
        if !threads.contains(&id) {
            threads.push(id);
        }
    }
    threads
}

/// `depth_limit`: a request with `max_depth` runs codex without its own sub-agents. Uncapped,
/// `fake-model`'s request lists the `multi_agent_v1` tools (a catalog model's hides
/// `spawn_agent` behind `tool_search`) and a scripted `spawn_agent` starts a second thread;
/// capped, neither tool is sent and the same call starts nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_depth_cap_leaves_codex_without_its_own_sub_agents() {
    for model in ["fake-model", MODEL] {
        // Uncapped: the tools are there and the call starts a sub-agent (the control).
        let harness = Harness::new(SUB_AGENT_SCENARIOS).await;
        let provider = harness.provider(|_| {});
        let run = provider
            .start(harness.request("delegate it").model(model).build())
            .await
            .unwrap();
        // The parent's two requests and the sub-agent's: then let the parent answer.
        // (Bounded: if no sub-agent starts, fail instead of hanging.)
        let seen = tokio::time::timeout(
            std::time::Duration::from_secs(60),
            harness.server.wait_requests(3),
        )
        .await;
        harness.server.gate("sub-seen").open();
        assert!(seen.is_ok(), "{model}: the sub-agent never asked the model");
        let (_, outcome) = finish(run).await;
        assert_eq!(
            outcome.status,
            StopReason::Completed,
            "{model}: {outcome:?}"
        );
        let requests = harness.server.model_requests();
        let tools = tool_names(requests[0].body.as_ref().unwrap());
        let expected = if model == MODEL {
            "tool_search"
        } else {
            "multi_agent_v1/spawn_agent"
        };
        assert!(
            tools.iter().any(|t| t == expected),
            "{model}: no {expected} uncapped: {tools:?}"
        );
        assert_eq!(threads(&harness).len(), 2, "{model}: no sub-agent uncapped");
        assert!(
            requests
                .iter()
                .any(|r| r.scenario.as_ref().is_some_and(|(name, _)| name == "sub")),
            "{model}: the sub-agent's prompt never reached the model"
        );

        // Capped: no sub-agent tool in any request, and the same call starts nothing.
        let harness = Harness::new(SUB_AGENT_SCENARIOS).await;
        harness.server.gate("sub-seen").open();
        let provider = harness.provider(|_| {});
        let (_, outcome) = run_to_end(
            &provider,
            harness.request("delegate it").model(model).max_depth(1),
        )
        .await;
        assert_eq!(
            outcome.status,
            StopReason::Completed,
            "{model}: {outcome:?}"
        );
        assert_eq!(outcome.text, "parent done");
        let requests = harness.server.model_requests();
        assert_eq!(requests.len(), 2, "{model}: {requests:#?}");
        for request in &requests {
            let tools = tool_names(request.body.as_ref().unwrap());
            assert!(
                !tools.iter().any(|t| is_sub_agent_tool(t)),
                "{model}: a sub-agent tool under a cap: {tools:?}"
            );
        }
        assert_eq!(threads(&harness).len(), 1, "{model}: a sub-agent started");
        assert_eq!(
            call_outputs(requests[1].body.as_ref().unwrap()),
            vec!["unsupported call: multi_agent_v1spawn_agent".to_owned()]
        );
        assert_eq!(harness.server.violations(), Vec::<String>::new());
    }
}

/// A resumed thread keeps the multi-agent version it was started with, whatever `--disable`
/// says: a thread started uncapped with `multi_agent_v2` on, resumed under a cap, still gets no
/// `collaboration` tools and its `spawn_agent` starts nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_depth_cap_holds_on_a_resumed_thread_started_with_sub_agents() {
    let harness = Harness::new(SUB_AGENT_SCENARIOS).await;
    let provider = harness.provider(|c| {
        c.config_overrides = vec!["features.multi_agent_v2=true".into()];
    });
    let (_, first) = completed(&provider, harness.request("say hi")).await;
    let first_tools = tool_names(harness.server.model_requests()[0].body.as_ref().unwrap());
    assert!(
        first_tools.iter().any(|t| t == "collaboration/spawn_agent"),
        "the thread did not start with the v2 tools: {first_tools:?}"
    );
    let session = first.session.unwrap();

    let (_, outcome) = completed(
        &provider,
        harness
            .request("collaborate now")
            .resume(session.clone())
            .max_depth(1),
    )
    .await;
    assert_eq!(outcome.text, "parent v2 done");
    assert_eq!(outcome.session.map(|s| s.id), Some(session.id));
    let requests = harness.server.model_requests();
    assert_eq!(requests.len(), 3, "{requests:#?}");
    for request in &requests[1..] {
        let tools = tool_names(request.body.as_ref().unwrap());
        assert!(
            !tools.iter().any(|t| is_sub_agent_tool(t)),
            "a sub-agent tool on a capped resume: {tools:?}"
        );
    }
    assert_eq!(threads(&harness).len(), 1, "a sub-agent started");
    assert_eq!(
        call_outputs(requests[2].body.as_ref().unwrap()),
        vec!["unsupported call: collaborationspawn_agent".to_owned()]
    );
}
