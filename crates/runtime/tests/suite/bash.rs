//! bash: output, timeouts, and cancellation that leaves no process behind.

use pretty_assertions::assert_eq;
use subagent_core::{CancellationToken, StopReason};
use subagent_runtime::Agent;
use subagent_test_support::FakeServer;
use subagent_test_support::procs::{gone, pids_from};

use super::support::{bash, call, completed_results, config, last_results, one_turn};

const CANCEL: &str = r#"
- name: long
  match: "long command"
  steps:
    - tool_calls:
        - {name: bash, input: {command: "sleep 300 & bash -c 'sleep 300' & echo \"$$ $! $(jobs -p | tr '\\n' ' ')\" > pids.fifo; wait"}}
    - text: "never reached"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_mid_bash_kills_the_whole_process_tree() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pids.fifo");
    subagent_test_support::procs::mkfifo(&fifo);
    let server = FakeServer::from_yaml(CANCEL).await.unwrap();
    let cancel = CancellationToken::new();
    let run = Agent::new(config(&server, dir.path()))
        .unwrap()
        .start_prompt("run the long command", cancel.clone());
    // Opening the FIFO blocks until the command writes its pids: a gate, not a sleep.
    let pids = pids_from(fifo).await;
    assert!(pids.len() >= 3, "{pids:?}");
    for pid in &pids {
        assert!(
            !gone(*pid),
            "process {pid} should be running before the cancel"
        );
    }
    cancel.cancel();
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, StopReason::Cancelled);
    // SIGKILL was sent to the whole group before the outcome; wait for the kernel to finish
    // the job (bounded, no sleeping).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    for pid in pids {
        while !gone(pid) {
            assert!(
                std::time::Instant::now() < deadline,
                "process {pid} survived the cancel"
            );
            std::thread::yield_now();
        }
    }
}

fn output() -> String {
    one_turn(
        "outputs",
        &[
            bash("echo out; echo err >&2; exit 3"),
            bash("head -c 100000 /dev/zero | tr '\\0' a"),
            call(
                "bash",
                r#"{command: "sleep 5 & echo started; wait", timeout_ms: 200}"#,
            ),
        ],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_reports_exit_codes_caps_output_and_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeServer::from_yaml(&output()).await.unwrap();
    let results = completed_results(&server, config(&server, dir.path()), "outputs").await;
    assert_eq!(
        results[0],
        (
            "exit code 3\n<stdout>\nout\n\n</stdout>\n<stderr>\nerr\n\n</stderr>".to_owned(),
            true
        )
    );
    assert!(
        results[1]
            .0
            .ends_with("(output cut at 30000 bytes per stream)")
    );
    assert!(results[1].0.len() < 30_100);
    assert!(
        results[2].0.starts_with("timed out after 200 ms; killed"),
        "{}",
        results[2].0
    );
    assert!(results[2].1);
}

fn serial() -> String {
    one_turn(
        "pair",
        &[
            bash("sleep 0.2; echo first >> order.txt; echo one"),
            bash("echo second >> order.txt; cat order.txt"),
        ],
    )
}

/// Commands change things: the commands of one message run one at a time, in the order the
/// model gave them (the first takes longer, yet the second sees what it wrote), and answer in
/// call order. (Reads and delegations between them still run together: `files.rs`,
/// `delegation.rs`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_of_one_message_run_one_at_a_time_in_call_order() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeServer::from_yaml(&serial()).await.unwrap();
    let results = completed_results(&server, config(&server, dir.path()), "pair").await;
    assert_eq!(
        results,
        vec![
            ("exit code 0\n<stdout>\none\n\n</stdout>".to_owned(), false),
            (
                "exit code 0\n<stdout>\nfirst\nsecond\n\n</stdout>".to_owned(),
                false
            ),
        ]
    );
}

fn chained() -> String {
    one_turn(
        "chain",
        &[
            bash("echo allowed"),
            bash("echo hi; touch pwned1"),
            bash("echo hi && touch pwned2"),
            bash("echo hi | tee pwned3"),
            bash("echo $(touch pwned4)"),
            bash("echo `touch pwned5`"),
            bash("echo hi > pwned6"),
            bash("echo hi\ntouch pwned7"),
        ],
    )
}

/// An allow rule for `echo *` allows an echo, not whatever a model chains after it: a command
/// with shell control operators, substitutions or redirections is not auto-allowed by a
/// subject pattern (it goes to the mode's default: here nobody can be asked, so denied).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allow_rule_does_not_cover_commands_chained_after_the_allowed_one() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeServer::from_yaml(&chained()).await.unwrap();
    let mut config = config(&server, dir.path());
    config.permissions = subagent_runtime::PermissionPolicy::new(
        subagent_core::PermissionMode::Default,
    )
    .rule(
        subagent_runtime::PermissionRule::parse("bash(echo *)", subagent_runtime::Decision::Allow)
            .unwrap(),
    );
    let results = completed_results(&server, config, "chain them").await;
    assert_eq!(results.len(), 8);
    assert!(!results[0].1, "{}", results[0].0);
    assert!(results[0].0.contains("allowed"), "{}", results[0].0);
    for (text, is_error) in &results[1..] {
        assert!(is_error, "{text}");
        assert!(text.starts_with("permission denied"), "{text}");
    }
    for n in 1..=7 {
        assert!(!dir.path().join(format!("pwned{n}")).exists(), "pwned{n}");
    }
}

const SECRET_VALUE: &str = "adv-secret-value-0123456789";
const REDACTED_NOTES: &str = "the key is [REDACTED:ADV_MODEL_KEY].\n";

fn notes() -> String {
    one_turn(
        "show the notes",
        &[
            bash("cat notes.txt"),
            call("read_file", r#"{path: "notes.txt"}"#),
        ],
    )
}

/// A configured secret's value never leaves a tool: the result the model gets, the run's
/// events and its log (what a transcript is written from) all carry the marker instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_value_in_tool_output_is_redacted_everywhere_it_goes() {
    use futures::StreamExt;
    use subagent_core::{Run, RunEvent, StartRequest};
    use subagent_runtime::Seed;
    use subagent_session::{ContentBlock, SessionEvent, TranscriptWriter, load_transcript};

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("notes.txt"),
        format!("the key is {SECRET_VALUE}.\n"),
    )
    .unwrap();
    let server = FakeServer::from_yaml(&notes()).await.unwrap();
    let mut config = config(&server, dir.path());
    config.secrets =
        subagent_process::Secrets::from_names(["ADV_MODEL_KEY"], |_| Some(SECRET_VALUE.to_owned()));
    let request = StartRequest::builder("show the notes")
        .cwd(dir.path())
        .build();
    let (sender, mut run) = Run::channel("runtime", &request);
    let events = run.take_events().unwrap();
    let (outcome, log) = Agent::new(config)
        .unwrap()
        .run(
            Seed::fresh(vec![ContentBlock::text("show the notes")]),
            &sender,
        )
        .await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    sender.finish(outcome);
    let bash = format!("exit code 0\n<stdout>\n{REDACTED_NOTES}\n</stdout>");
    let read = format!("     1\t{REDACTED_NOTES}");
    let expected = vec![(bash.clone(), false), (read.clone(), false)];

    // What the model got.
    assert_eq!(last_results(&server.model_requests()[1]), expected);

    // The event stream.
    let results: Vec<(String, bool)> = events
        .filter_map(|event| async move {
            match event {
                RunEvent::ToolResult {
                    output, is_error, ..
                } => Some((output, is_error)),
                _ => None,
            }
        })
        .collect()
        .await;
    assert_eq!(results, expected);

    // The log, and the transcript written from it.
    let path = dir.path().join("transcript.jsonl");
    let mut writer = TranscriptWriter::create(&path).unwrap();
    for event in log.iter() {
        writer.append(&event).unwrap();
    }
    writer.flush().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains(SECRET_VALUE), "{text}");
    let logged: Vec<(String, bool)> = load_transcript(&path)
        .unwrap()
        .log
        .iter()
        .filter_map(|event| match &*event {
            SessionEvent::Message { message } => Some(message.content.clone()),
            _ => None,
        })
        .flatten()
        .filter_map(|block| match block {
            ContentBlock::ToolResult {
                content, is_error, ..
            } => Some((content.to_text(), is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(logged, expected);
}
