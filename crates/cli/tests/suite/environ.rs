//! A command a model runs cannot read a key back from its ancestors: `subagent` (and its
//! guardian) hold none in their environment blocks (`/proc/<pid>/environ`, which shows the block
//! a process was started with whatever it removed since; root reads it whatever the process's
//! state), and both are non-dumpable, so processes of the same user cannot read their `/proc`
//! files or memory at all.
//!
//! The model's command walks every ancestor up to pid 1 and prints each one's environment, each
//! value plain and base64-encoded; none of the keys may show, neither in what it could read nor
//! in what reached the model, the `--json` stream, the A2A answer or the transcripts.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use pretty_assertions::assert_eq;
use serde_json::Value;
use subagent_test_support::FakeServer;

use super::support::write_file;
use super::support::{Subagent, bin};
use super::support::{announced_addr, json_lines, post_a2a, start_piped, stderr, stdout, subagent};

/// A key in a variable whose name says so (withdrawn by the name rule).
const RULE_KEY: (&str, &str) = ("ANTHROPIC_API_KEY", "sk-ant-walk-0123456789abcdef");
/// The preset's key, in a variable no rule knows (withdrawn once the preset names it).
const PRESET_KEY: (&str, &str) = ("LLM_ACCESS", "llm-access-0123456789abcdef");
/// Another variable holding the preset key's value.
const COPY: (&str, &str) = ("SAME_VALUE_COPY", PRESET_KEY.1);
/// `serve`'s bearer token, in a variable only `--token-env` names.
const BEARER: (&str, &str) = ("SERVE_BEARER", "serve-bearer-0123456789abcdef");
/// An ordinary variable: it stays in the block (the control that the walk reads it).
const PLAIN: (&str, &str) = ("VISIBLE_VAR", "plain-visible-value");

/// Walks from the shell up to pid 1: for each process a header (`ancestor <pid> <comm>
/// readable|unreadable`), then each variable as `raw NAME=VALUE` and `b64 NAME <base64 of the
/// value>`; all of it in `walk.txt`, its first 28,000 bytes on stdout (the bash tool keeps
/// 30,000), where the nearest ancestors come first.
const WALK: &str = r#"pid=$$
: > walk.txt
while :; do
  comm=$(cat /proc/$pid/comm 2>/dev/null)
  if block=$(tr '\0' '\n' 2>/dev/null < /proc/$pid/environ); then
    echo "ancestor $pid $comm readable" >> walk.txt
    printf '%s\n' "$block" | while IFS= read -r line; do
      [ -n "$line" ] || continue
      printf 'raw %s\n' "$line"
      printf 'b64 %s %s\n' "${line%%=*}" "$(printf '%s' "${line#*=}" | base64 -w0)"
    done >> walk.txt
  else
    echo "ancestor $pid $comm unreadable" >> walk.txt
  fi
  [ "$pid" -gt 1 ] || break
  pid=$(awk '/^PPid:/ {print $2}' /proc/$pid/status)
  [ -n "$pid" ] && [ "$pid" -ge 1 ] || break
done
head -c 28000 walk.txt"#;

/// The fake model: asked to walk, it runs [`WALK`] with the bash tool, then says done.
fn walk_scenario() -> String {
    format!(
        "- match: 'walk the ancestors'\n  steps:\n    - tool_calls:\n        - {{name: bash, input: {{command: {}}}}}\n    - text: done\n",
        serde_json::to_string(WALK).unwrap()
    )
}

/// A preset whose model is the fake server, its key in [`PRESET_KEY`]'s variable, the bash
/// tool allowed.
fn walk_preset(dir: &Path, url: &str) -> PathBuf {
    write_file(
        dir,
        "walk.yaml",
        format!(
            "version: 1\nmodel:\n  kind: anthropic\n  name: fake-model\n  base_url: {url}\n  api_key_env: {}\n  retry:\n    max_retries: 0\nproviders:\n  - name: spawn\n    kind: spawn\n    config:\n      permission_mode: bypass\ntools:\n  - name: subagent\n    provider: spawn\n",
            PRESET_KEY.0
        ),
    )
}

/// Standard base64 with padding (what `base64 -w0` prints).
fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(TABLE[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Fails when `text` (named `what`) shows a secret value, plain or base64-encoded, or a
/// redaction marker (a value that was there and got redacted on its way).
fn assert_no_secret(what: &str, text: &str, secrets: &[(&str, &str)]) {
    for (name, value) in secrets {
        assert!(!text.contains(value), "{what} shows {name}'s value: {text}");
        let encoded = base64(value.as_bytes());
        assert!(
            !text.contains(&encoded),
            "{what} shows {name}'s value in base64 ({encoded}): {text}"
        );
    }
    assert!(
        !text.contains("[REDACTED"),
        "{what} had a secret (redacted on the way): {text}"
    );
}

/// The sections of `walk.txt`, nearest ancestor first: (header, lines).
fn sections(walk: &str) -> Vec<(String, Vec<String>)> {
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    for line in walk.lines() {
        if line.starts_with("ancestor ") {
            sections.push((line.to_owned(), Vec::new()));
        } else if let Some((_, lines)) = sections.last_mut() {
            lines.push(line.to_owned());
        }
    }
    sections
}

/// Checks what the walk could read: it went past `subagent` (whose block it read when the test
/// runs as root, else could not read at all) up to pid 1, and no process from the shell up to
/// `subagent` has a secret's variable or value.
fn assert_walk_clean(walk: &str, secrets: &[(&str, &str)]) {
    assert_no_secret("what the command could read", walk, secrets);
    let sections = sections(walk);
    let headers: Vec<&str> = sections.iter().map(|(h, _)| h.as_str()).collect();
    let host = sections
        .iter()
        .position(|(header, _)| header.split(' ').nth(2) == Some("subagent"))
        .unwrap_or_else(|| panic!("the walk never met subagent: {headers:?}"));
    assert!(
        headers[..host]
            .iter()
            .any(|h| h.contains(" subagent-guardi")),
        "the guardian sits between the command and subagent: {headers:?}"
    );
    assert!(
        headers.last().unwrap().starts_with("ancestor 1 "),
        "the walk reaches pid 1: {headers:?}"
    );
    let test = format!("ancestor {} ", std::process::id());
    assert!(
        headers[host..].iter().any(|h| h.starts_with(&test)),
        "the walk passes this test: {headers:?}"
    );
    let root = rustix::process::geteuid().is_root();
    let (header, lines) = &sections[host];
    assert_eq!(
        header.ends_with(" readable"),
        root,
        "root reads subagent's block, nobody else may: {header}"
    );
    if root {
        assert!(
            lines.contains(&format!("raw {}={}", PLAIN.0, PLAIN.1)),
            "ordinary variables stay in the block: {lines:?}"
        );
    }
    for (header, lines) in &sections[..=host] {
        for (name, _) in secrets {
            assert!(
                !lines
                    .iter()
                    .any(|line| line.starts_with(&format!("raw {name}="))),
                "{header} has {name}: {lines:?}"
            );
        }
    }
}

/// Every transcript under `home`'s state dir, as text.
fn transcripts(home: &Path) -> String {
    let mut text = String::new();
    let mut dirs = vec![home.join(".local/state/subagents/sessions")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                text.push_str(&std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    text
}

/// What the model was sent, every request.
fn model_saw(server: &FakeServer) -> String {
    server
        .model_requests()
        .iter()
        .map(|request| {
            request
                .body
                .as_ref()
                .map(Value::to_string)
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_ancestor_of_the_bash_tool_holds_a_key_plain_or_encoded() {
    let server = FakeServer::from_yaml(&walk_scenario()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = walk_preset(dir.path(), &server.url());
    let output = subagent(dir.path())
        .env(RULE_KEY.0, RULE_KEY.1)
        .env(PRESET_KEY.0, PRESET_KEY.1)
        .env(COPY.0, COPY.1)
        .env(PLAIN.0, PLAIN.1)
        .args(["run", "--json", "--permission-mode", "bypass", "--preset"])
        .arg(&preset)
        .arg("walk the ancestors")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let secrets = [RULE_KEY, PRESET_KEY, COPY];
    let walk = std::fs::read_to_string(dir.path().join("walk.txt")).unwrap();
    assert_walk_clean(&walk, &secrets);
    let results: Vec<String> = json_lines(&output)
        .iter()
        .filter(|line| line["type"] == "tool_result")
        .map(|line| line["output"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].contains("ancestor "), "{}", results[0]);
    assert_no_secret("the --json stream", &stdout(&output), &secrets);
    assert_no_secret("what the model saw", &model_saw(&server), &secrets);
    let transcripts = transcripts(dir.path());
    assert!(transcripts.contains("ancestor "), "{transcripts}");
    assert_no_secret("the transcript", &transcripts, &secrets);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_ancestor_of_a_served_runs_bash_tool_holds_a_key_or_the_bearer_token() {
    let server = FakeServer::from_yaml(&walk_scenario()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = walk_preset(dir.path(), &server.url());
    let mut command = Subagent::new(bin(), dir.path()).command();
    command
        .env(RULE_KEY.0, RULE_KEY.1)
        .env(PRESET_KEY.0, PRESET_KEY.1)
        .env(COPY.0, COPY.1)
        .env(BEARER.0, BEARER.1)
        .env(PLAIN.0, PLAIN.1)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--keep-transcripts",
            "--token-env",
            BEARER.0,
            "--preset",
        ])
        .arg(&preset);
    let (mut child, mut stderr) = start_piped(&mut command, Stdio::null());
    let addr = announced_addr(&mut stderr);
    let request = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "walk the ancestors"}]}}});
    let answer = tokio::task::spawn_blocking(move || {
        post_a2a(&format!("http://{addr}"), BEARER.1, &request)
    })
    .await
    .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(answer.contains("TASK_STATE_COMPLETED"), "{answer}");
    let secrets = [RULE_KEY, PRESET_KEY, COPY, BEARER];
    let walk = std::fs::read_to_string(dir.path().join("walk.txt")).unwrap();
    assert_walk_clean(&walk, &secrets);
    assert_no_secret("the A2A answer", &answer, &secrets);
    assert_no_secret("what the model saw", &model_saw(&server), &secrets);
    let transcripts = transcripts(dir.path());
    assert!(transcripts.contains("ancestor "), "{transcripts}");
    assert_no_secret("the transcript", &transcripts, &secrets);
}

/// Prints, for the bash tool's shell, its uid and the owner of its `/proc/<pid>/environ`, then
/// for its parent (the guardian) and grandparent (`subagent`): the name, the owner of that file
/// (root when the process is non-dumpable; the `/proc/<pid>` directory itself keeps the
/// process's uid) and whether it could be read.
const LOOK: &str = r#"echo "self $(id -u) $(stat -c %u /proc/$$/environ)"
for pid in $PPID $(awk '/^PPid:/ {print $2}' /proc/$PPID/status); do
  if cat /proc/$pid/environ > /dev/null 2>&1; then r=readable; else r=denied; fi
  echo "ancestor $(cat /proc/$pid/comm) $(stat -c %u /proc/$pid/environ) $r"
done"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagent_and_its_guardian_are_not_dumpable() {
    let server = FakeServer::from_yaml(&format!(
        "- match: 'look up'\n  steps:\n    - tool_calls:\n        - {{name: bash, input: {{command: {}}}}}\n    - text: done\n",
        serde_json::to_string(LOOK).unwrap()
    ))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = walk_preset(dir.path(), &server.url());
    let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("subagent"));
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .env(PRESET_KEY.0, PRESET_KEY.1)
        .current_dir(dir.path())
        .args(["run", "--json", "--permission-mode", "bypass", "--preset"])
        .arg(&preset)
        .arg("look up");
    // Root may read any process's files: the run goes to another user, for whom a non-dumpable
    // process's files are root's.
    let uid = if rustix::process::geteuid().is_root() {
        let nobody = 65534;
        std::os::unix::fs::chown(dir.path(), Some(nobody), Some(nobody)).unwrap();
        command.uid(nobody).gid(nobody);
        nobody
    } else {
        rustix::process::geteuid().as_raw()
    };
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let result = json_lines(&output)
        .iter()
        .find(|line| line["type"] == "tool_result")
        .map(|line| line["output"].as_str().unwrap().to_owned())
        .unwrap();
    let seen: Vec<&str> = result
        .lines()
        .filter(|line| line.starts_with("self ") || line.starts_with("ancestor "))
        .collect();
    assert_eq!(
        seen,
        [
            format!("self {uid} {uid}"),
            "ancestor subagent-guardi 0 denied".to_owned(),
            "ancestor subagent 0 denied".to_owned(),
        ],
        "{result}"
    );
}
