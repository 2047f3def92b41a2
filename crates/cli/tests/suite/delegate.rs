//! `subagent delegate`, driven as a user would.

use pretty_assertions::assert_eq;
use serde_json::json;
use std::path::Path;
use std::process::Output;

use super::support::assert_refused;
use super::support::write_file;
use super::support::{fake_setup, json_lines, keyed, preset, redact, stderr, stdout, subagent};

/// `subagent delegate ARGS --preset PRESET PROMPT` in `home` (also HOME), the fake presets' key
/// set (the shipped presets do not read it).
fn delegate(home: &Path, args: &[&str], preset: &Path, prompt: &str) -> Output {
    let preset = ["--preset", preset.to_str().unwrap(), prompt];
    keyed(home, &[&["delegate"], args, &preset].concat())
}

/// The stderr of `subagent delegate ARGS --preset presets/SHIPPED PROMPT` (HOME empty),
/// asserted a refusal of the command line (exit 2).
fn refused(shipped: &str, args: &[&str], prompt: &str) -> String {
    let home = tempfile::tempdir().unwrap();
    let output = delegate(home.path(), args, &preset(shipped), prompt);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    stderr(&output)
}

#[test]
fn delegates_offline_and_prints_the_answer() {
    let home = tempfile::tempdir().unwrap();
    let output = delegate(
        home.path(),
        &[],
        &preset("offline.yaml"),
        "Say hello from the subagent",
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "[offline scripted model] Hello from the subagent.\n"
    );
    let err = stderr(&output);
    assert!(err.contains("offline: the scripted model answers"), "{err}");
    assert!(
        err.contains("[spawn "),
        "plain progress lines when not a terminal: {err}"
    );
    assert!(err.contains("completed ·"), "{err}");
}

#[test]
fn json_outcome_snapshot() {
    let home = tempfile::tempdir().unwrap();
    let output = delegate(
        home.path(),
        &["--json"],
        &preset("offline.yaml"),
        "Say hello from the subagent",
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let root = super::support::root().display().to_string();
    let mut lines = json_lines(&output);
    // The run's session: its id is the run id, its transcript in HOME's state dir (see
    // `resume.rs`).
    let outcome = lines.last_mut().unwrap().as_object_mut().unwrap();
    let session = outcome
        .insert("session".into(), "[session]".into())
        .unwrap();
    let id = outcome["run_id"].as_str().unwrap();
    let dir = home.path().join(".local/state/subagents/sessions");
    assert_eq!(
        (&session["provider"], &session["id"], &session["cwd"]),
        (&json!("spawn"), &json!(id), &json!(home.path()))
    );
    let transcript = std::path::PathBuf::from(session["transcript"].as_str().unwrap());
    assert!(
        transcript.starts_with(&dir) && transcript.is_file(),
        "{transcript:?}"
    );
    for line in &mut lines {
        redact(line);
        if let Some(message) = line.get_mut("message") {
            *message = message.as_str().unwrap().replace(&root, "[root]").into();
        }
    }
    // The outcome's usage is the usage event's (redacted alike): the snapshot shows it once.
    let event = lines.iter().find(|line| line["type"] == "usage").unwrap();
    let event_usage = event["usage"].clone();
    let outcome = lines.last_mut().unwrap();
    let usage = std::mem::replace(&mut outcome["usage"], "[the usage event's]".into());
    assert_eq!(usage, event_usage);
    // Keys sorted: serde_json keeps insertion order in this build (the ACP SDK turns on its
    // preserve_order), and the snapshot is about the values.
    let lines: Vec<serde_json::Value> = lines.into_iter().map(sorted_keys).collect();
    insta::assert_json_snapshot!(lines, @r#"
    [
      {
        "message": "offline: the scripted model answers from the built-in offline demo scenario (no network)",
        "type": "notice"
      },
      {
        "description": "Say hello from the subagent",
        "provider": "spawn",
        "run_id": "[run_id]",
        "type": "started"
      },
      {
        "text": "[offline",
        "type": "text"
      },
      {
        "text": " scripted",
        "type": "text"
      },
      {
        "text": " model]",
        "type": "text"
      },
      {
        "text": " Hello",
        "type": "text"
      },
      {
        "text": " from",
        "type": "text"
      },
      {
        "text": " the",
        "type": "text"
      },
      {
        "text": " subagent.",
        "type": "text"
      },
      {
        "type": "usage",
        "usage": {
          "cache_read_tokens": 0,
          "cache_write_tokens": 0,
          "duration_ms": "[duration]",
          "input_tokens": 10,
          "output_tokens": 5,
          "tool_uses": 0
        }
      },
      {
        "status": "completed",
        "type": "finished"
      },
      {
        "provider": "spawn",
        "run_id": "[run_id]",
        "session": "[session]",
        "status": "completed",
        "text": "[offline scripted model] Hello from the subagent.",
        "type": "outcome",
        "usage": "[the usage event's]"
      }
    ]
    "#);
}

#[test]
fn prompt_from_stdin() {
    let home = tempfile::tempdir().unwrap();
    let output = subagent(home.path())
        .args(["delegate", "--preset"])
        .arg(preset("offline.yaml"))
        .arg("-")
        .write_stdin("Say hello from the subagent, please")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("Hello from the subagent."));
}

#[test]
fn unknown_provider_is_refused_with_its_code_and_the_known_names() {
    let home = tempfile::tempdir().unwrap();
    let output = delegate(
        home.path(),
        &["--json", "--provider", "nope"],
        &preset("offline.yaml"),
        "hello",
    );
    assert_eq!(output.status.code(), Some(2));
    let lines = json_lines(&output);
    assert_eq!(
        lines.last().unwrap(),
        &json!({
            "type": "error",
            "code": "UNKNOWN_PROVIDER",
            "message": "no subagent provider named \"nope\" (known: \"spawn\", \"fork\")"
        })
    );
    // Human form on stderr.
    let err = refused("offline.yaml", &["--provider", "nope"], "hello");
    assert!(
        err.contains("error[UNKNOWN_PROVIDER]: no subagent provider named \"nope\""),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupported_capability_is_refused_and_nothing_starts() {
    let scenario = "- match: '.*'\n  steps:\n    - text: should never be asked\n";
    let (server, dir, preset) = fake_setup(scenario, "").await;
    let output = delegate(
        dir.path(),
        &[
            "--json",
            "--provider",
            "fork",
            "--model",
            "other",
            "--max-turns",
            "2",
        ],
        &preset,
        "hello",
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(
        json_lines(&output).last().unwrap(),
        &json!({
            "type": "error",
            "code": "UNSUPPORTED_CAPABILITY",
            "message": "subagent provider \"fork\" does not support the capability: \"model_override\""
        })
    );
    assert!(
        server.model_requests().is_empty(),
        "a refused start reached the model"
    );
}

#[test]
fn unknown_agent_type_lists_the_available_ones() {
    let err = refused("offline.yaml", &["--agent", "reviewer"], "hello");
    assert!(
        err.contains(
            "error[UNKNOWN_AGENT_TYPE]: unknown agent type \"reviewer\" (available: \"general-purpose\", \"explore\", \"plan\")"
        ),
        "{err}"
    );
}

#[test]
fn empty_prompt_and_bad_schema_file_are_invalid_arguments() {
    let home = tempfile::tempdir().unwrap();
    let output = delegate(home.path(), &[], &preset("offline.yaml"), "  ");
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("error[INVALID_ARGUMENTS]: the prompt is empty"));

    let schema = write_file(home.path(), "schema.json", r#"{"type": "array"}"#);
    let schema_arg = ["--output-schema", schema.to_str().unwrap()];
    let output = delegate(home.path(), &schema_arg, &preset("offline.yaml"), "hello");
    assert_refused(
        &output,
        "error[INVALID_ARGUMENTS]: invalid arguments: output_schema must have \"type\": \"object\" at its root",
        "",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_output_and_agent_types_over_a_real_model_protocol() {
    let (server, dir, preset) = fake_setup(
        r#"
- match: "count the files"
  steps:
    - tool_calls:
        - name: structured_output
          input: {"count": 3}
    - text: done
"#,
        "",
    )
    .await;
    let schema = write_file(
        dir.path(),
        "schema.json",
        r#"{"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}"#,
    );
    let args = [
        "--json",
        "--agent",
        "explore",
        "--output-schema",
        schema.to_str().unwrap(),
    ];
    let output = delegate(dir.path(), &args, &preset, "count the files");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let outcome = json_lines(&output).pop().unwrap();
    assert_eq!(outcome["status"], "completed");
    assert_eq!(outcome["structured"], json!({"count": 3}));
    // explore is read-only: the child's tool list has no writing tool.
    let request = &server.model_requests()[0];
    let tools: Vec<&str> = request.body.as_ref().unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"read_file"), "{tools:?}");
    for writer in ["write_file", "edit_file", "delete", "bash"] {
        assert!(
            !tools.contains(&writer),
            "{writer} offered to explore: {tools:?}"
        );
    }
    assert_eq!(request.header("x-api-key"), Some("<redacted>"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_child_exits_1_with_the_diagnostic() {
    let (_server, dir, preset) = fake_setup(
        r#"
- match: ".*"
  steps:
    - error: {status: 400, type: invalid_request_error, message: "fake bad request"}
"#,
        "",
    )
    .await;
    let output = delegate(dir.path(), &["--json"], &preset, "hello");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let outcome = json_lines(&output).pop().unwrap();
    assert_eq!(outcome["status"], "failed");
    assert!(
        outcome["diagnostic"]
            .as_str()
            .unwrap()
            .contains("fake bad request"),
        "{outcome}"
    );
}

#[test]
fn a_disabled_provider_says_how_to_enable_it() {
    let err = refused("standard.yaml", &["--provider", "codex"], "hello");
    assert!(
        err.contains(&format!(
            "error[UNKNOWN_PROVIDER]: provider \"codex\" is disabled in {}:",
            preset("standard.yaml").display()
        )),
        "{err}"
    );
    assert!(
        err.contains("set `disabled: false` on its row to use it (enabled: spawn, fork)"),
        "{err}"
    );
    assert!(
        !err.contains("offline:"),
        "no model notice for a provider that does not use it: {err}"
    );
}

/// `value` with every object's keys in sorted order.
fn sorted_keys(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            let mut entries: Vec<_> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            serde_json::Value::Object(
                entries
                    .into_iter()
                    .map(|(key, value)| (key, sorted_keys(value)))
                    .collect(),
            )
        }
        serde_json::Value::Array(items) => {
            serde_json::Value::Array(items.into_iter().map(sorted_keys).collect())
        }
        other => other,
    }
}
