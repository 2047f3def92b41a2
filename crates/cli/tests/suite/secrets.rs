//! Secrets stay where they belong: the preset's key variable (whatever its name), and any other
//! variable holding the same value, never reach the bash tool or a product CLI unless a row
//! passes it; a configured secret's value is redacted from tool results, the event stream
//! (`--json`) and what goes back to the model.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::Value;
use subagent_test_support::FakeServer;

use super::support::write_file;
use super::support::{json_lines, stderr, stdout, subagent};

/// The preset's key: a name no pattern of the scrub knows.
const KEY_NAME: &str = "ADV_MODEL_KEY";
const KEY_VALUE: &str = "adv-secret-value-0123456789";
/// Another variable with the key's value.
const COPY_NAME: &str = "SAME_VALUE_COPY";
/// An ordinary variable: it must still get through (the control).
const PLAIN: &str = "VISIBLE_VAR=plain-visible-value";
/// What a redacted value becomes.
const MARKER: &str = "[REDACTED:ADV_MODEL_KEY]";

/// A preset whose model is the fake server with its key in `ADV_MODEL_KEY`, plus `extra`
/// provider rows.
fn secret_preset(dir: &Path, url: &str, extra: &str) -> PathBuf {
    write_file(
        dir,
        "secret.yaml",
        format!(
            "version: 1\nmodel:\n  kind: anthropic\n  name: fake-model\n  base_url: {url}\n  api_key_env: {KEY_NAME}\n  retry:\n    max_retries: 0\nproviders:\n  - name: spawn\n    kind: spawn\n    config:\n      permission_mode: bypass\n{extra}tools:\n  - name: subagent\n    provider: spawn\n"
        ),
    )
}

/// The binary with the key, its copy and a plain variable in its environment, and a file in
/// `dir` that holds the key's value (what a command might print).
fn with_secret(dir: &Path) -> assert_cmd::Command {
    std::fs::write(dir.join("notes.txt"), format!("the key is {KEY_VALUE}.\n")).unwrap();
    let (plain_name, plain_value) = PLAIN.split_once('=').unwrap();
    let mut command = subagent(dir);
    command
        .env(KEY_NAME, KEY_VALUE)
        .env(COPY_NAME, KEY_VALUE)
        .env(plain_name, plain_value);
    command
}

const BASH_SCENARIO: &str = r#"
- match: "show the environment"
  steps:
    - tool_calls:
        - {name: bash, input: {command: "env"}}
        - {name: bash, input: {command: "cat notes.txt"}}
        - {name: read_file, input: {path: "notes.txt"}}
    - text: "done"
"#;

/// The `tool_result` events of a `--json` stream, in order: (output, is_error).
fn tool_results(lines: &[Value]) -> Vec<(String, bool)> {
    lines
        .iter()
        .filter(|line| line["type"] == "tool_result")
        .map(|line| {
            (
                line["output"].as_str().unwrap().to_owned(),
                line["is_error"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// Checks one `env` dump: neither the key's name nor its value nor the copy, but the plain
/// variable.
fn assert_env_clean(env: &str) {
    assert!(!env.contains(KEY_NAME), "the key's name leaked: {env}");
    assert!(!env.contains(COPY_NAME), "the copy leaked: {env}");
    assert!(!env.contains(KEY_VALUE), "the key's value leaked: {env}");
    assert!(
        env.lines().any(|line| line == PLAIN),
        "ordinary variables get through: {env}"
    );
}

/// Runs `subagent <command…> --preset <the secret preset> "show the environment"` on the bash
/// scenario with the key in the environment, which must succeed: the fake server (what the
/// model was sent) and the output.
async fn show_the_environment(command: &[&str]) -> (FakeServer, std::process::Output) {
    let server = FakeServer::from_yaml(BASH_SCENARIO).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = secret_preset(dir.path(), &server.url(), "");
    let output = with_secret(dir.path())
        .args(command)
        .arg("--preset")
        .arg(&preset)
        .arg("show the environment")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    (server, output)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bash_tool_never_sees_the_presets_key_and_its_value_is_redacted() {
    let (server, output) =
        show_the_environment(&["run", "--json", "--permission-mode", "bypass"]).await;
    assert!(
        !stdout(&output).contains(KEY_VALUE),
        "the event stream shows the key: {}",
        stdout(&output)
    );
    let results = tool_results(&json_lines(&output));
    assert_eq!(results.len(), 3, "{results:?}");
    assert_env_clean(&results[0].0);
    let redacted = format!("the key is {MARKER}.\n");
    assert_eq!(
        results[1..],
        [
            (
                format!("exit code 0\n<stdout>\n{redacted}\n</stdout>"),
                false
            ),
            (format!("     1\t{redacted}"), false),
        ]
    );
    // What went back to the model is the same redacted text.
    let requests = server.model_requests();
    let body = requests[1].body.as_ref().unwrap().to_string();
    assert!(!body.contains(KEY_VALUE), "the model saw the key: {body}");
    assert!(
        !body.contains(&format!("{KEY_NAME}=")),
        "the model saw the key's variable: {body}"
    );
    assert!(body.contains(MARKER), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawned_childs_bash_tool_never_sees_the_presets_key() {
    let (_, output) = show_the_environment(&["delegate", "--json", "--provider", "spawn"]).await;
    assert!(!stdout(&output).contains(KEY_VALUE), "{}", stdout(&output));
    let results = tool_results(&json_lines(&output));
    assert_eq!(results.len(), 3, "{results:?}");
    assert_env_clean(&results[0].0);
    assert_eq!(
        results[1].0,
        format!("exit code 0\n<stdout>\nthe key is {MARKER}.\n\n</stdout>")
    );
}

/// A stand-in product CLI in `dir`: dumps its environment to `<name>.env`, then prints `lines`
/// (in which `$NOTES` is the notes file's first line).
fn fake_cli(dir: &Path, name: &str, lines: &[&str]) -> PathBuf {
    let path = dir.join(format!("fake-{name}"));
    let mut body = format!(
        "#!/bin/sh\nenv > '{}/{name}.env'\ncat >/dev/null\nNOTES=$(head -n 1 '{}/notes.txt')\n",
        dir.display(),
        dir.display()
    );
    for line in lines {
        body.push_str(&format!(
            "printf '%s\\n' \"{}\"\n",
            line.replace('"', "\\\"")
        ));
    }
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn product_rows(dir: &Path) -> String {
    let claude = fake_cli(
        dir,
        "claude",
        &[
            r#"{"type":"system","subtype":"init","session_id":"s1","model":"m"}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"claude read: $NOTES","session_id":"s1","usage":{"input_tokens":3,"output_tokens":2}}"#,
        ],
    );
    let claude_passing = fake_cli(
        dir,
        "claude-passing",
        &[
            r#"{"type":"system","subtype":"init","session_id":"s2","model":"m"}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s2","usage":{"input_tokens":3,"output_tokens":2}}"#,
        ],
    );
    let codex = fake_cli(
        dir,
        "codex",
        &[
            r#"{"type":"thread.started","thread_id":"t1"}"#,
            r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"codex read: $NOTES"}}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":3,"output_tokens":2}}"#,
        ],
    );
    format!(
        "  - name: cc\n    kind: claude-code\n    config: {{binary: \"{}\"}}\n  - name: cc-passing\n    kind: claude-code\n    config: {{binary: \"{}\", pass_env: [{KEY_NAME}]}}\n  - name: cx\n    kind: codex\n    config: {{binary: \"{}\"}}\n",
        claude.display(),
        claude_passing.display(),
        codex.display()
    )
}

/// `subagent delegate --json --provider <provider> hello` with the secret around: the outcome
/// line.
fn delegate(dir: &Path, preset: &Path, provider: &str) -> Value {
    let output = with_secret(dir)
        .args(["delegate", "--json", "--provider", provider, "--preset"])
        .arg(preset)
        .arg("hello")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!stdout(&output).contains(KEY_VALUE), "{}", stdout(&output));
    json_lines(&output).pop().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn product_clis_never_see_the_presets_key_unless_their_row_passes_it() {
    let server = FakeServer::from_yaml("- match: '.*'\n  steps:\n    - text: unused\n")
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = secret_preset(dir.path(), &server.url(), &product_rows(dir.path()));
    let read =
        |name: &str| std::fs::read_to_string(dir.path().join(format!("{name}.env"))).unwrap();

    let outcome = delegate(dir.path(), &preset, "cc");
    assert_eq!(
        (&outcome["status"], &outcome["text"]),
        (
            &Value::from("completed"),
            &Value::from(format!("claude read: the key is {MARKER}."))
        )
    );
    assert_env_clean(&read("claude"));

    let outcome = delegate(dir.path(), &preset, "cx");
    assert_eq!(
        (&outcome["status"], &outcome["text"]),
        (
            &Value::from("completed"),
            &Value::from(format!("codex read: the key is {MARKER}."))
        )
    );
    assert_env_clean(&read("codex"));

    // A row that passes the key by name gets it (and only it: the copy stays withheld).
    let outcome = delegate(dir.path(), &preset, "cc-passing");
    assert_eq!(outcome["status"], "completed");
    let env = read("claude-passing");
    let passed: Vec<&str> = env
        .lines()
        .filter(|line| line.starts_with(KEY_NAME) || line.starts_with(COPY_NAME))
        .collect();
    assert_eq!(passed, [format!("{KEY_NAME}={KEY_VALUE}")]);
}
