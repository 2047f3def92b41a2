//! `subagent delegate --effort`: the level reaches the child's model request on a provider that
//! declares `effort`, and a provider that does not refuses before anything starts.

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_test_support::FakeServer;

use super::support::{fake_preset, json_lines, stderr, stdout, subagent};

const CHILD: &str = r#"
- match: "think about it"
  steps: [{text: "thought"}]
"#;

/// `delegate --json ARGS "think about it"` against `server`, in a project whose
/// `.subagents/agents` holds `thinker` (`effort: low`).
fn delegate(server: &FakeServer, args: &[&str]) -> std::process::Output {
    let home = tempfile::tempdir().unwrap();
    let preset = fake_preset(home.path(), &server.url(), "");
    let agents = home.path().join(".subagents/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("thinker.md"),
        "---\nname: thinker\ndescription: Thinks.\neffort: low\n---\nThink.\n",
    )
    .unwrap();
    subagent(home.path())
        .env("FAKE_KEY", "test-key")
        .args(["delegate", "--json"])
        .args(args)
        .arg("--preset")
        .arg(&preset)
        .arg("think about it")
        .output()
        .unwrap()
}

/// The `thinking` field of each model request so far.
fn thinking(server: &FakeServer) -> Vec<serde_json::Value> {
    server
        .model_requests()
        .iter()
        .map(|request| request.body.as_ref().unwrap()["thinking"].clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegate_effort_becomes_the_childs_thinking_budget() {
    let server = FakeServer::from_yaml(CHILD).await.unwrap();
    let output = {
        let server = &server;
        tokio::task::block_in_place(|| {
            // Case-insensitive, as in a definition.
            let flag = delegate(server, &["--provider", "spawn", "--effort", "HIGH"]);
            // The flag beats the agent type's `effort: low`.
            let over = delegate(server, &["--agent", "thinker", "--effort", "max"]);
            [flag, over]
        })
    };
    for output in &output {
        assert_eq!(output.status.code(), Some(0), "{}", stderr(output));
        assert_eq!(json_lines(output).pop().unwrap()["text"], "thought");
    }
    assert_eq!(
        thinking(&server),
        [
            json!({"type": "enabled", "budget_tokens": 10000}),
            json!({"type": "enabled", "budget_tokens": 32000})
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_without_effort_refuses_before_anything_starts() {
    let server = FakeServer::from_yaml(CHILD).await.unwrap();
    let output = {
        let server = &server;
        tokio::task::block_in_place(|| delegate(server, &["--provider", "fork", "--effort", "low"]))
    };
    assert_eq!(
        (output.status.code(), json_lines(&output)),
        (
            Some(2),
            vec![json!({
                "type": "error",
                "code": "UNSUPPORTED_CAPABILITY",
                "message": "subagent provider \"fork\" does not support the capability: \"effort\"",
            })]
        ),
        "{}",
        stderr(&output)
    );
    assert_eq!(server.model_requests().len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_effort_is_refused_with_the_valid_levels() {
    let server = FakeServer::from_yaml(CHILD).await.unwrap();
    let output = {
        let server = &server;
        tokio::task::block_in_place(|| delegate(server, &["--effort", "extreme"]))
    };
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    // With --json, the usage error is the error object on stdout.
    let error: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(error["code"], "INVALID_ARGUMENTS");
    assert_eq!(
        error["message"],
        "invalid value 'extreme' for '--effort <LEVEL>': unknown effort `extreme` (valid: low, medium, high, xhigh, max)"
    );
    assert_eq!(server.model_requests().len(), 0);
}
