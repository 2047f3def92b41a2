//! Byte caps: an answer past the model's cap ends the run `failed` with `ANSWER_TOO_LARGE` and a
//! transcript of whole messages; a tool result past the run's cap reaches the model cut, with a
//! marker that says how much was left out and how to see the rest. (A delegation's result, a
//! background subagent's notification and a child's inherited cap: the CLI's `caps` tests.)

use pretty_assertions::assert_eq;
use subagent_core::{CancellationToken, StopReason};
use subagent_model::ModelKind;
use subagent_runtime::{Agent, DEFAULT_MAX_TOOL_RESULT_BYTES, ToolResultCap, cut_result};
use subagent_session::{Role, SessionEvent, load_transcript};
use subagent_test_support::FakeServer;

use super::support::{config, config_with_sessions, last_results, run, transcript_texts};

const ENDLESS: &str = r#"
- match: "list and talk"
  steps:
    - text: "Listing."
      tool_calls: [{name: ls, input: {path: "."}}]
    - text: "Now I talk:"
      repeat: {text: "bla "}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_past_the_models_cap_fails_the_run_and_the_transcript_keeps_what_is_whole() {
    let server = FakeServer::from_yaml(ENDLESS).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let (mut config, store) = config_with_sessions(&server, dir.path(), sessions.path());
    let mut model = server.model_config(ModelKind::Anthropic);
    model.max_answer_bytes = 10_000;
    config.model = subagent_model::build_with_env(&model, |_| Some("k".to_owned())).unwrap();
    let run = Agent::new(config)
        .unwrap()
        .start_prompt("list and talk", CancellationToken::new());
    let id = run.id().to_string();
    let outcome = run.outcome().await;
    assert_eq!(
        (
            outcome.status,
            outcome.diagnostic.as_deref(),
            outcome.text.as_str()
        ),
        (
            StopReason::Failed,
            Some(
                "ANSWER_TOO_LARGE: the model's answer passed 10000 bytes of text, thinking and tool calls (the model's max_answer_bytes) and its stream was stopped; ask for a shorter answer, or raise the cap"
            ),
            "Listing."
        )
    );
    // The endless answer's connection was closed.
    server.wait_dropped(1).await;
    // The transcript holds the whole turn before and the prompt; the cut answer is not in it,
    // and its turn ended failed.
    let path = store.transcript(&id).unwrap();
    assert_eq!(
        transcript_texts(&path),
        vec![
            (Role::User, "list and talk".to_owned()),
            (Role::Assistant, "Listing.".to_owned()),
            (Role::User, String::new()),
        ]
    );
    let last_end = load_transcript(&path)
        .unwrap()
        .log
        .iter()
        .filter_map(|event| match &*event {
            SessionEvent::TurnEnd { stop_reason } => Some(*stop_reason),
            _ => None,
        })
        .last();
    assert_eq!(last_end, Some(StopReason::Failed));
}

const LONG: &str = r#"
- match: "read everything"
  steps:
    - tool_calls:
        - {name: read_file, input: {path: "big.txt", limit: 5000}}
        - {name: bash, input: {command: "seq 1 3000"}}
        - {name: grep, input: {pattern: "^line 1", path: "big.txt", output_mode: "content"}}
        - {name: ls, input: {path: "."}}
    - text: "read"
"#;

/// What a `read_file` of the whole of big.txt returns.
fn numbered(lines: usize) -> String {
    (1..=lines).map(|n| format!("{n:>6}\tline {n}\n")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_results_past_the_cap_reach_the_model_cut_with_a_marker() {
    let dir = tempfile::tempdir().unwrap();
    let big: String = (1..=3000).map(|n| format!("line {n}\n")).collect();
    std::fs::write(dir.path().join("big.txt"), &big).unwrap();
    let server = FakeServer::from_yaml(LONG).await.unwrap();
    let mut config = config(&server, dir.path());
    config.max_tool_result_bytes = Some(2000);
    let outcome = run(config, "read everything").await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    let requests = server.model_requests();
    let results = last_results(&requests[1]);
    let (read, bash, grep) = (&results[0].0, &results[1].0, &results[2].0);
    // The first 1500 bytes, the marker, the last 500: the marker says how much is missing and
    // how to read it.
    let whole = numbered(3000);
    assert_eq!(
        *read,
        format!(
            "{}\n\n[{} of {} bytes cut here: a tool result keeps at most 2000 bytes. To see the rest, read fewer lines at a time with offset and limit.]\n\n{}",
            &whole[..1500],
            whole.len() - 2000,
            whole.len(),
            &whole[whole.len() - 500..]
        )
    );
    assert!(
        bash.starts_with("exit code 0\n<stdout>\n1\n2\n3\n"),
        "{bash}"
    );
    assert!(bash.ends_with("2999\n3000\n\n</stdout>"), "{bash}");
    assert!(
        bash.contains(" bytes cut here: a tool result keeps at most 2000 bytes. To see the rest, write the output to a file (`command > out.txt`) and read that in parts (read_file with offset and limit, or head, tail and grep).]"),
        "{bash}"
    );
    assert!(grep.starts_with("big.txt:1:line 1\n"), "{grep}");
    assert!(
        grep.contains(" bytes cut here: a tool result keeps at most 2000 bytes. To see the rest, narrow the pattern, the path or the glob, or ask for files_with_matches or count first.]"),
        "{grep}"
    );
    for text in [read, bash, grep] {
        assert!(text.len() <= 2000 + 300, "{}", text.len());
    }
    // A short result is whole.
    assert_eq!(results[3], ("big.txt".to_owned(), false));
}

#[test]
fn the_cut_keeps_whole_characters_and_the_default_is_of_claude_codes_order() {
    // Claude Code cuts an MCP tool's output at 25,000 tokens, about 100,000 bytes.
    assert_eq!(DEFAULT_MAX_TOOL_RESULT_BYTES, 100_000);
    assert_eq!(ToolResultCap(5), ToolResultCap(5));
    assert_eq!(cut_result("short".to_owned(), 5, "x"), "short");
    let text = "é".repeat(10);
    // 8 bytes: 6 at the head (3 "é"), 2 at the tail (1 "é").
    assert_eq!(
        cut_result(text.clone(), 8, "ask less"),
        "ééé\n\n[12 of 20 bytes cut here: a tool result keeps at most 8 bytes. To see the rest, ask less.]\n\né"
    );
    // 7 bytes: the head gets 6 ("ééé"), the tail 1, less than a character: none. Whole
    // characters, never more than the cap.
    assert_eq!(
        cut_result(text, 7, "ask less"),
        "ééé\n\n[14 of 20 bytes cut here: a tool result keeps at most 7 bytes. To see the rest, ask less.]\n\n"
    );
}
