//! Background commands (the bash tool's `run_in_background`): a task with an output file, read
//! with `task_output`, stopped with `task_stop` (its whole process group with it), and stopped
//! with the run when it is still going at the end. (Background subagents are tested in
//! `crates/spawn/tests/suite/tasks.rs`.)

use pretty_assertions::assert_eq;
use serde_json::Value;
use subagent_core::CancellationToken;
use subagent_runtime::Agent;
use subagent_runtime::tools::task_tools;
use subagent_test_support::procs::{gone, pids_from};
use subagent_test_support::runs::no_durations;
use subagent_test_support::{FakeServer, RecordedRequest};

use subagent_test_support::runs::assert_answered;

use super::support::{config, counting_in_the_background, last_results, run};

/// The task id a "Started background command <id>." result names.
/// A run of `scenarios` on `prompt` with the task tools, started in a fresh dir holding the FIFO
/// `pids.fifo` its command writes to: the dir, the FIFO, the server and the running run.
async fn started(
    scenarios: &str,
    prompt: &str,
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    FakeServer,
    subagent_core::Run,
) {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pids.fifo");
    subagent_test_support::procs::mkfifo(&fifo);
    let server = FakeServer::from_yaml(scenarios).await.unwrap();
    let mut config = config(&server, dir.path());
    config.tools = config.tools.with(task_tools());
    let run = Agent::new(config)
        .unwrap()
        .start_prompt(prompt, CancellationToken::new());
    (dir, fifo, server, run)
}

fn started_id(request: &RecordedRequest) -> String {
    let (text, _) = &last_results(request)[0];
    text.strip_prefix("Started background command ")
        .and_then(|rest| rest.split('.').next())
        .unwrap()
        .to_owned()
}

/// What sits between `<tag>` and `</tag>` in `text`.
fn between(text: &str, tag: &str) -> String {
    let open = format!("<{tag}>");
    let start = text.find(&open).unwrap() + open.len();
    let end = text.find(&format!("</{tag}>")).unwrap();
    text[start..end].to_owned()
}

/// Counting to three in the background (`three` on stderr), and the answer to the
/// notification.
fn read() -> String {
    let notified = r#"
- name: notification
  match: "<task-notification>"
  steps:
    - text: "a notification came""#;
    notified.to_owned() + &counting_in_the_background("echo one; echo two; echo three >&2")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_command_is_a_task_with_an_output_file_read_with_task_output() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeServer::from_yaml(&read()).await.unwrap();
    let mut config = config(&server, dir.path());
    config.tools = config.tools.with(task_tools());
    let outcome = run(config, "count in the background").await;
    assert_answered(&outcome, "done");
    let requests = server.model_requests();
    assert_eq!(requests.len(), 3);
    let id = started_id(&requests[1]);
    let (started, _) = &last_results(&requests[1])[0];
    let (read, is_error) = last_results(&requests[2]).remove(0);
    let output_file = between(&read, "output_file");
    assert!(
        started.ends_with(&format!(
            " Its output goes to {output_file}. Read it with task_output, stop it with task_stop; a <task-notification> tells you when it ends."
        )),
        "{started}"
    );
    assert_eq!(
        (no_durations(&read), is_error),
        (
            format!(
                "<retrieval_status>success</retrieval_status>\n<task_id>{id}</task_id>\n<task_type>bash</task_type>\n<status>completed</status>\n<description>count</description>\n<tool_use_id>call_bg</tool_use_id>\n<output_file>{output_file}</output_file>\n<progress>\ntool_uses: 0\ntokens: 0\nlast_activity: two\nrecent:\n- one\n- two\n</progress>\n<result>exit code 0\n<stdout>\none\ntwo\n\n</stdout>\n<stderr>\nthree\n\n</stderr></result>\n<usage><total_tokens>0</total_tokens><tool_uses>0</tool_uses><duration_ms>D</duration_ms></usage>"
            ),
            false
        )
    );
    // The output file: each stdout line as it came, then the outcome.
    let lines: Vec<Value> = std::fs::read_to_string(&output_file)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        lines[..2],
        [
            serde_json::json!({"type": "stdout", "line": "one"}),
            serde_json::json!({"type": "stdout", "line": "two"})
        ]
    );
    assert_eq!(lines[2]["type"], "outcome");
    assert_eq!(lines[2]["outcome"]["status"], "completed");
    // Read through task_output: never notified.
    assert!(
        requests
            .iter()
            .flat_map(|request| request.messages.iter())
            .all(|message| !message.text().contains("<task-notification>"))
    );
    std::fs::remove_file(&output_file).unwrap();
}

const STOP: &str = r#"
- name: parent
  match: "stop the command"
  steps:
    - tool_calls:
        - id: call_bg
          name: bash
          input: {command: "sleep 300 & echo \"$$ $!\" > pids.fifo; wait", run_in_background: true}
    - wait_gate: pids-read
      tool_calls:
        - {id: call_stop, name: task_stop, input: {task_id: call_bg}}
    - text: "stopped"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_stop_kills_a_background_commands_whole_process_group() {
    let (_dir, fifo, server, run) = started(STOP, "stop the command").await;
    // Opening the FIFO blocks until the command writes its pids: a gate, not a sleep.
    let pids = pids_from(fifo).await;
    assert_eq!(pids.len(), 2, "{pids:?}");
    assert!(pids.iter().all(|pid| !gone(*pid)));
    server.gate("pids-read").open();
    let outcome = run.outcome().await;
    assert_answered(&outcome, "stopped");
    // task_stop answered once the command had ended and its group had been killed.
    for pid in pids {
        assert!(gone(pid), "process {pid} survived task_stop");
    }
    let requests = server.model_requests();
    let id = started_id(&requests[1]);
    let (stopped, is_error) = last_results(&requests[2]).remove(0);
    assert!(!is_error);
    assert!(
        stopped.starts_with(&format!(
            "Stopped task {id}.\n<retrieval_status>success</retrieval_status>\n<task_id>{id}</task_id>\n<task_type>bash</task_type>\n<status>killed</status>\n"
        )),
        "{stopped}"
    );
    assert!(
        stopped.contains("<result>cancelled; killed</result>"),
        "{stopped}"
    );
    std::fs::remove_file(between(&stopped, "output_file")).unwrap();
}

const LEFT: &str = r#"
- name: parent
  match: "leave it running"
  steps:
    - tool_calls:
        - id: call_bg
          name: bash
          input: {command: "echo $$ > pids.fifo; exec sleep 300", run_in_background: true}
    - wait_gate: pid-read
      text: "leaving"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_does_not_wait_for_a_background_command_and_stops_it_when_it_ends() {
    let (_dir, fifo, server, run) = started(LEFT, "leave it running").await;
    let pid = read_fifo(&fifo, "the command's pid").await;
    let pid: u32 = pid.trim().parse().unwrap();
    // Only now may the model end its answer (before, the run could end and stop the command
    // before it wrote its pid).
    server.gate("pid-read").open();
    let outcome = within(run.outcome(), "the run's end").await;
    assert_answered(&outcome, "leaving");
    // Stopped with the run (SIGTERM, then the group's kill), and its output file says how it
    // ended by the time the run's outcome is out: a caller that exits right after loses nothing.
    let (started, _) = &last_results(&server.model_requests()[1])[0];
    let output_file = started
        .split(" Its output goes to ")
        .nth(1)
        .and_then(|rest| rest.split(". Read it with").next())
        .unwrap();
    let written = std::fs::read_to_string(output_file).unwrap();
    let last: Value = serde_json::from_str(written.lines().last().unwrap_or("null")).unwrap();
    assert_eq!(
        (&last["type"], &last["outcome"]["status"]),
        (&Value::from("outcome"), &Value::from("cancelled")),
        "{written}"
    );
    exited(pid).await;
    std::fs::remove_file(output_file).unwrap();
}

/// How long a test waits for something that should come at once before it fails saying what
/// did not come (a bound against hanging, not a speed check).
const DEADLINE: std::time::Duration = std::time::Duration::from_secs(120);

/// `future`'s output, or a test failure naming `what` once [`DEADLINE`] has passed.
async fn within<T>(future: impl std::future::Future<Output = T>, what: &str) -> T {
    match tokio::time::timeout(DEADLINE, future).await {
        Ok(value) => value,
        Err(_) => panic!("waited {DEADLINE:?} for {what}"),
    }
}

/// The first line written to the FIFO `path`, read without blocking a thread (opened for
/// reading and writing, the FIFO neither blocks the open nor ends early), within [`DEADLINE`].
async fn read_fifo(path: &std::path::Path, what: &str) -> String {
    use tokio::io::AsyncBufReadExt;
    let receiver = tokio::net::unix::pipe::OpenOptions::new()
        .read_write(true)
        .open_receiver(path)
        .unwrap();
    let mut lines = tokio::io::BufReader::new(receiver).lines();
    within(lines.next_line(), what)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{what}: the FIFO closed"))
}

/// Waits until process `pid` has exited (a zombie counts), through a pidfd: the kernel says
/// when, nothing polls in a loop. Fails the test after [`DEADLINE`].
async fn exited(pid: u32) {
    let pid = rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap();
    let fd = match rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) {
        Ok(fd) => fd,
        // Gone and reaped already.
        Err(rustix::io::Errno::SRCH) => return,
        Err(error) => panic!("pidfd_open({pid:?}): {error}"),
    };
    let ready = tokio::task::spawn_blocking(move || {
        let mut fds = [rustix::event::PollFd::new(
            &fd,
            rustix::event::PollFlags::IN,
        )];
        let timeout = rustix::event::Timespec::try_from(DEADLINE).unwrap();
        rustix::event::poll(&mut fds, Some(&timeout)).unwrap()
    })
    .await
    .unwrap();
    assert_eq!(
        ready, 1,
        "process {pid:?} survived the run for {DEADLINE:?}"
    );
}
