//! What a run shows on stderr while it goes: plain lines (stderr is not a terminal here) name
//! who did what, and the summary counts a delegation's child apart from the parent.

use pretty_assertions::assert_eq;
use subagent_test_support::FakeServer;

use super::support::{fake_preset, preset, stderr, stdout, subagent};

/// Replaces every elapsed time (`0.3s`, `12.0s`) with `T`, a session id with `S` and the first
/// `duration_ms` with `D`, so whole lines can be compared.
fn without_times(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(dot) = rest.find('.') {
        let (before, after) = rest.split_at(dot);
        let digits_before =
            before.len() - before.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let digits_after = after[1..].len()
            - after[1..]
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .len();
        let is_time =
            digits_before > 0 && digits_after > 0 && after[1 + digits_after..].starts_with('s');
        if is_time {
            out.push_str(&before[..before.len() - digits_before]);
            out.push('T');
            rest = &after[1 + digits_after + 1..];
        } else {
            out.push_str(before);
            out.push('.');
            rest = &after[1..];
        }
    }
    out.push_str(rest);
    // A session id is a fresh UUID.
    let out = match (out.find("<session_id>"), out.find("</session_id>")) {
        (Some(start), Some(end)) if start < end => {
            format!("{}<session_id>S{}", &out[..start], &out[end..])
        }
        _ => out,
    };
    match out.split_once("duration_ms: ") {
        Some((before, after)) => format!(
            "{before}duration_ms: D{}",
            after.trim_start_matches(|c: char| c.is_ascii_digit())
        ),
        None => out,
    }
}

const DELEGATION: &str = r#"
- name: child
  match: "CHILD-READS"
  steps:
    - tool_calls:
        - {id: call_read, name: read_file, input: {path: notes.txt}}
      usage: {input_tokens: 7, output_tokens: 3}
    - text: "child read it"
      usage: {input_tokens: 11, output_tokens: 2}
- name: parent
  match: "please look"
  steps:
    - tool_calls:
        - id: call_delegate
          name: subagent
          input: {subagent_type: general-purpose, description: read notes, prompt: "CHILD-READS notes.txt"}
      usage: {input_tokens: 100, output_tokens: 50}
    - text: "parent done"
      usage: {input_tokens: 200, output_tokens: 60}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_lines_name_the_child_at_work_and_the_summary_counts_it_apart() {
    let server = FakeServer::from_yaml(DELEGATION).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "remember the milk\n").unwrap();
    let preset = fake_preset(dir.path(), &server.url(), "");
    let output = subagent(dir.path())
        .env("FAKE_KEY", "test-key")
        .args(["run", "--preset"])
        .arg(&preset)
        .arg("please look")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "parent done\n");
    // A call's input is shown as the model wrote it (serde_json keeps key order in this build).
    assert_eq!(
        without_times(&super::support::session_as_s(&stderr(&output)))
            .replace(&preset.display().to_string(), "P"),
        "preset: P (--preset)\n\
         [parent T] started: please look\n\
         [parent T] tool subagent {\"subagent_type\":\"general-purpose\",\"description\":\"read notes\",\"prompt\":\"CHILD-READS notes.txt\"}\n\
         [general-purpose T] tool read_file {\"path\":\"notes.txt\"}\n\
         [general-purpose T] tool result: 1 remember the milk\n\
         [parent T] tool result: child read it <session_id>S</session_id> <usage>input_tokens: 18…\n\
         [parent T] finished: completed\n\
         completed · T · 1 tool use (+1 in subagents) · 300 in / 110 out tokens (+18 in / +5 out in subagents)\n\
         delegations: 1\n  subagent [general-purpose on spawn] “read notes” → ok: child read it\n\
         session: S (continue it: subagent run --preset P --resume S PROMPT)\n"
    );
}

/// `delegate --agent` announces the task it was given, not the agent type's description.
#[test]
fn started_shows_the_prompt_for_an_agent_type() {
    let home = tempfile::tempdir().unwrap();
    let output = subagent(home.path())
        .args(["delegate", "--agent", "explore", "--preset"])
        .arg(preset("offline.yaml"))
        .arg("Say hello from the subagent")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let err = stderr(&output);
    let started: Vec<&str> = err.lines().filter(|l| l.contains("started:")).collect();
    assert_eq!(
        without_times(&started.join("\n")),
        "[spawn T] started: explore: Say hello from the subagent"
    );
}
