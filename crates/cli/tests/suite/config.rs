//! `subagent delegate --agent` runs an agent type with the same effective configuration as the
//! delegation tool: the call's flags, then the definition, the preset's model aliases, the
//! parent's model.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_test_support::FakeServer;

use super::support::{fake_preset, json_lines, stderr, subagent};

/// The model id and reasoning fields of the one request `delegate --agent thinker` sends.
async fn sent(definition: &str, flags: &[&str]) -> Value {
    let server = FakeServer::from_yaml("- match: 'think'\n  steps:\n    - text: thought\n")
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let agents = dir.path().join(".subagents/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join("thinker.md"), definition).unwrap();
    let preset = fake_preset(
        dir.path(),
        &server.url(),
        "model_aliases: {fast: tiny-model}\n",
    );
    let output = subagent(dir.path())
        .env("FAKE_KEY", "test-key")
        .args(["delegate", "--json", "--agent", "thinker", "--preset"])
        .arg(&preset)
        .args(flags)
        .arg("think about it")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(json_lines(&output).pop().unwrap()["text"], "thought");
    let requests = server.model_requests();
    assert_eq!(requests.len(), 1);
    let body = requests[0].body.clone().unwrap();
    let picked: serde_json::Map<String, Value> = ["model", "thinking"]
        .into_iter()
        .filter_map(|key| body.get(key).map(|value| (key.to_owned(), value.clone())))
        .collect();
    Value::Object(picked)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegate_agent_resolves_model_aliases_and_effort_like_the_delegation_tool() {
    let thinker =
        "---\nname: thinker\ndescription: Thinks.\nmodel: fast\neffort: low\n---\nThink.\n";
    // The definition's alias (the preset's table) and effort (a thinking budget).
    assert_eq!(
        sent(thinker, &[]).await,
        json!({"model": "tiny-model", "thinking": {"type": "enabled", "budget_tokens": 1024}})
    );
    // The call's --model beats the definition's, and is an alias too (Claude Code's, on an
    // Anthropic model).
    assert_eq!(
        sent(thinker, &["--model", "sonnet"]).await,
        json!({"model": "claude-sonnet-5", "thinking": {"type": "enabled", "budget_tokens": 1024}})
    );
    // `inherit` in a definition: the parent's (the preset's) model.
    assert_eq!(
        sent(
            "---\nname: thinker\ndescription: Thinks.\nmodel: inherit\n---\nThink.\n",
            &[]
        )
        .await,
        json!({"model": "fake-model"})
    );
}
