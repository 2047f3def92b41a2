//! What users reach for, as Claude Code taught them (issue 25, point 16): an agent type on a
//! provider of one's choice, an output schema inline, the parent's effort, inline agent
//! definitions (`--agents '<json>'`).

use std::process::Output;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{fake_setup, json_lines, keyed, stderr};

/// The system prompt of a model request, as one text.
fn system(request: &subagent_test_support::RecordedRequest) -> String {
    match &request.body.as_ref().unwrap()["system"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// `subagent COMMAND --json --preset PRESET REST…` in `dir` with the fake key.
fn json_run_on(dir: &std::path::Path, command: &str, preset: &str, rest: &[&str]) -> Output {
    keyed(
        dir,
        &[&[command, "--json", "--preset", preset], rest].concat(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_type_runs_on_the_provider_named_and_a_missing_capability_is_refused() {
    let (server, dir, preset) = fake_setup(
        "- match: \"look around\"\n  steps: [{text: looked}]\n",
        "  - name: spawn2\n    kind: spawn\n",
    )
    .await;
    let preset = preset.to_str().unwrap();
    let (on_spawn2, on_fork) = tokio::task::block_in_place(|| {
        let flags = [
            "delegate", "--json", "--preset", preset, "--agent", "explore",
        ];
        let on = |provider: &str| {
            let mut args = flags.to_vec();
            args.extend(["--provider", provider, "look around"]);
            keyed(dir.path(), &args)
        };
        (on("spawn2"), on("fork"))
    });
    // explore's settings on spawn2: its instructions, its read-only tools, its name.
    assert_eq!(on_spawn2.status.code(), Some(0), "{}", stderr(&on_spawn2));
    let outcome = json_lines(&on_spawn2).pop().unwrap();
    assert_eq!(
        (&outcome["provider"], &outcome["text"]),
        (&json!("spawn2"), &json!("looked"))
    );
    let requests = server.model_requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].tool_names(),
        ["ls", "read_file", "glob", "grep"]
    );
    assert!(
        system(&requests[0]).contains("You are a read-only exploration agent."),
        "{}",
        system(&requests[0])
    );
    // fork cannot take explore's tool filter, instructions or turn limit: refused up front.
    assert_eq!(on_fork.status.code(), Some(2), "{}", stderr(&on_fork));
    let refusal = json_lines(&on_fork).pop().unwrap();
    assert_eq!(refusal["code"], "UNSUPPORTED_CAPABILITY");
    assert!(
        refusal["message"].as_str().unwrap().contains("\"fork\""),
        "{refusal}"
    );
    assert_eq!(
        server.model_requests().len(),
        1,
        "the refused child never ran"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_schema_may_be_given_inline() {
    let (_server, dir, preset) = fake_setup("- match: \"count the files\"\n  steps:\n    - tool_calls: [{name: structured_output, input: {\"count\": 3}}]\n    - text: done\n", "").await;
    let schema = r#"{"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}"#;
    let (inline, broken) = tokio::task::block_in_place(|| {
        let with = |schema: &str| {
            json_run_on(
                dir.path(),
                "delegate",
                preset.to_str().unwrap(),
                &["--output-schema", schema, "count the files"],
            )
        };
        (with(schema), with(r#"{"type": "object""#))
    });
    assert_eq!(inline.status.code(), Some(0), "{}", stderr(&inline));
    assert_eq!(
        json_lines(&inline).pop().unwrap()["structured"],
        json!({"count": 3})
    );
    assert_eq!(broken.status.code(), Some(2));
    let refusal = json_lines(&broken).pop().unwrap();
    assert_eq!(refusal["code"], "INVALID_ARGUMENTS");
    assert!(
        refusal["message"]
            .as_str()
            .unwrap()
            .starts_with("--output-schema: not JSON: "),
        "{refusal}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_effort_is_the_parents_thinking_budget_and_a_model_without_effort_refuses() {
    let (server, dir, preset) =
        fake_setup("- match: \"think hard\"\n  steps: [{text: thought}]\n", "").await;
    let preset = preset.to_str().unwrap();
    let (ran, offline) = tokio::task::block_in_place(|| {
        (
            json_run_on(
                dir.path(),
                "run",
                preset,
                &["--effort", "high", "think hard"],
            ),
            keyed(
                dir.path(),
                &[
                    "run",
                    "--json",
                    "--offline",
                    "--preset",
                    preset,
                    "--effort",
                    "high",
                    "think hard",
                ],
            ),
        )
    });
    assert_eq!(ran.status.code(), Some(0), "{}", stderr(&ran));
    assert_eq!(json_lines(&ran).pop().unwrap()["text"], "thought");
    assert_eq!(
        server.model_requests()[0].body.as_ref().unwrap()["thinking"],
        json!({"type": "enabled", "budget_tokens": 10000})
    );
    assert_eq!(offline.status.code(), Some(2), "{}", stderr(&offline));
    let refusal = json_lines(&offline).pop().unwrap();
    assert_eq!(refusal["code"], "UNSUPPORTED_CAPABILITY");
    assert!(
        refusal["message"]
            .as_str()
            .unwrap()
            .starts_with("--effort high: the parent's model (scripted"),
        "{refusal}"
    );
}

/// Claude Code's `--agents` example, with Claude Code's tool names.
const REVIEWER: &str = r#"{"reviewer": {"description": "Expert code reviewer.", "prompt": "You are a senior code reviewer.", "tools": ["Read", "Grep"]}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inline_agents_are_agent_types_of_delegate_and_of_runs_delegations() {
    let (server, dir, preset) = fake_setup("- match: \"review it\"\n  steps: [{text: reviewed}]\n- match: \"who can help\"\n  steps: [{text: nobody}]\n", "").await;
    let preset = preset.to_str().unwrap();
    let (delegated, ran, bad) = tokio::task::block_in_place(|| {
        (
            json_run_on(
                dir.path(),
                "delegate",
                preset,
                &["--agents", REVIEWER, "--agent", "reviewer", "review it"],
            ),
            json_run_on(
                dir.path(),
                "run",
                preset,
                &["--agents", REVIEWER, "who can help"],
            ),
            keyed(
                dir.path(),
                &[
                    "run",
                    "--preset",
                    preset,
                    "--agents",
                    r#"{"reviewer": {"maxTurns": 0}}"#,
                    "who can help",
                ],
            ),
        )
    });
    assert_eq!(delegated.status.code(), Some(0), "{}", stderr(&delegated));
    assert_eq!(json_lines(&delegated).pop().unwrap()["text"], "reviewed");
    let requests = server.model_requests();
    assert_eq!(requests[0].tool_names(), ["read_file", "grep"]);
    assert!(system(&requests[0]).contains("You are a senior code reviewer."));
    // The run's delegation tool offers it, said to come from the option.
    assert_eq!(ran.status.code(), Some(0), "{}", stderr(&ran));
    let subagent_tool = requests[1].body.as_ref().unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "subagent")
        .unwrap()["description"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        subagent_tool.contains("\n- reviewer: Expert code reviewer."),
        "{subagent_tool}"
    );
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(
        stderr(&bad).lines().last().unwrap(),
        "error[INVALID_ARGUMENTS]: --agents: agent `reviewer`: `maxTurns`: expected a whole number from 1 to 4294967295, found 0"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_presets_builtin_models_give_explore_its_small_model() {
    let (server, dir, preset) =
        fake_setup("- match: \"look around\"\n  steps: [{text: looked}]\n", "").await;
    let text = std::fs::read_to_string(&preset).unwrap();
    std::fs::write(
        &preset,
        text.replace(
            "providers:",
            "builtin_models:\n  explore: small-model\nproviders:",
        ),
    )
    .unwrap();
    let output = tokio::task::block_in_place(|| {
        json_run_on(
            dir.path(),
            "delegate",
            preset.to_str().unwrap(),
            &["--agent", "explore", "look around"],
        )
    });
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        server.model_requests()[0].body.as_ref().unwrap()["model"],
        "small-model"
    );
}
