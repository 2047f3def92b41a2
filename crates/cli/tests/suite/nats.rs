//! The `nats` provider kind and `subagent worker` against a real `nats-server` (the pinned
//! binary, one per test, on 127.0.0.1 with a temporary store): the conformance kit (a worker in
//! this process serving a spawn row on the fake model server), then a real `subagent worker`
//! process SIGKILLed mid-run whose job another worker process finishes, seen by a `subagent
//! delegate` through a preset row `kind: nats`.

use std::io::BufReader;
use std::path::Path;
use std::process::{Child, ChildStderr, Stdio};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::Value;
use subagent_core::SubagentProvider;
use subagent_nats::testing::NatsServer;
use subagent_nats::{Auth, NatsConfig, NatsProvider};
use subagent_test_support::FakeServer;

use super::support::{HELLO_AND_GATED, Subagent, bin};
use super::support::{announcement, fake_preset, start_piped, stderr, stdout};

mod conformance {
    use std::sync::{Arc, Mutex};

    use subagent_nats::testing::NatsServer;
    use subagent_nats::{Auth, NatsConfig, NatsFactory, NatsProvider, Worker, WorkerConfig};

    use super::super::support::Remote;

    subagent_conformance::suite!({
        // The NATS servers live as long as the adapter.
        let servers = Mutex::new(Vec::new());
        Remote::new(Arc::new(NatsFactory), move |registry, cwd| {
            let nats = NatsServer::start().unwrap();
            let url = nats.url();
            servers.lock().unwrap().push(nats);
            let cwd = cwd.to_path_buf();
            let provider = tokio::task::block_in_place(|| {
                tokio::runtime::Handle::current().block_on(async {
                    let mut config = WorkerConfig::new(&url, cwd);
                    config.concurrency = 4;
                    let worker = Worker::connect(Arc::new(registry), config).await.unwrap();
                    tokio::spawn(worker.run(std::future::pending()));
                    NatsProvider::connect("workers", NatsConfig::new(&url, "spawn"), Auth::None)
                        .await
                        .unwrap()
                })
            });
            Arc::new(provider)
        })
    });
}

const SCENARIOS: &str = HELLO_AND_GATED;

/// `subagent worker` on `nats` with `preset`, its ack wait 1 s; returns once it announced its
/// rows (its first line on stderr). Its stdout stays empty.
/// A `subagent worker` process, killed (SIGKILL) and reaped when dropped: a failing test
/// leaves none behind.
pub(super) struct Running(Option<Child>);

impl Running {
    /// SIGKILL, as a crash.
    fn kill(&mut self) {
        if let Some(mut child) = self.0.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    /// The process, for a polite stop.
    fn into_child(mut self) -> Child {
        self.0.take().unwrap()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

pub(super) fn start_worker(
    home: &Path,
    preset: &Path,
    nats: &str,
) -> (Running, BufReader<ChildStderr>) {
    start_worker_with(home, preset, nats, &[])
}

fn start_worker_with(
    home: &Path,
    preset: &Path,
    nats: &str,
    extra: &[&str],
) -> (Running, BufReader<ChildStderr>) {
    let mut command = Subagent::new(bin(), home)
        .fake_key()
        .args(["worker", "--nats", nats, "--ack-wait-ms", "1000"])
        .preset(preset)
        .args(extra)
        .command();
    let (child, mut stderr) = start_piped(&mut command, Stdio::piped());
    let running = Running(Some(child));
    let line = announcement(&mut stderr);
    assert!(
        line.starts_with("subagent worker: rows spawn, fork on "),
        "not ready: {line}"
    );
    (running, stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkilled_workers_job_is_finished_by_another_worker_under_the_same_run() {
    let nats = NatsServer::start().unwrap();
    let model = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let worker_dir = dir.path().join("worker");
    std::fs::create_dir_all(&worker_dir).unwrap();
    let worker_preset = fake_preset(&worker_dir, &model.url(), "");
    let (mut first, _first_stderr) = start_worker(&worker_dir, &worker_preset, &nats.url());
    let caller_dir = dir.path().join("caller");
    std::fs::create_dir_all(&caller_dir).unwrap();
    let row = format!(
        "  - name: workers\n    kind: nats\n    config:\n      url: {}\n      row: spawn\n",
        nats.url()
    );
    let caller_preset = fake_preset(&caller_dir, &model.url(), &row);
    let home = caller_dir.clone();
    let delegate = tokio::task::spawn_blocking(move || {
        super::support::subagent(&home)
            .env("FAKE_KEY", "test-key")
            .args(["delegate", "--json", "--provider", "workers", "--preset"])
            .arg(&caller_preset)
            .arg("GATED: work until told")
            .output()
            .unwrap()
    });
    // The first worker's child is waiting on the gate (its second model request) and its
    // text is out: kill it.
    model.wait_requests(2).await;
    subagent_nats::testing::wait_for_event(&nats.url(), |envelope| {
        matches!(
            &envelope.body,
            subagent_nats::wire::Body::Event {
                event: subagent_core::RunEvent::Text { .. }
            }
        )
    })
    .await
    .unwrap();
    first.kill();
    let (second, second_stderr) = start_worker(&worker_dir, &worker_preset, &nats.url());
    // The job comes back after the ack wait; the second worker's child reaches the gate.
    model.wait_requests(4).await;
    model.gate("go").open();
    let output = tokio::time::timeout(Duration::from_secs(120), delegate)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines: Vec<Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let said: Vec<String> = lines
        .iter()
        .filter_map(|line| match line["type"].as_str() {
            Some("text") => Some(format!("text: {}", line["text"].as_str().unwrap_or(""))),
            Some("progress") => Some(format!(
                "progress: {}",
                line["message"].as_str().unwrap_or("")
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        said,
        vec![
            "text: working".to_owned(),
            "progress: attempt 1 was lost (its worker stopped answering): its events above are superseded; attempt 2 runs the task again from the start".to_owned(),
            "text: working".to_owned(),
            "text: done".to_owned(),
        ]
    );
    let outcome = lines.last().unwrap();
    assert_eq!(
        (
            outcome["type"].as_str(),
            outcome["status"].as_str(),
            outcome["text"].as_str()
        ),
        (Some("outcome"), Some("completed"), Some("done"))
    );
    // SIGTERM drains the second worker: it holds nothing, so it stops at once.
    let (code, out, rest) =
        tokio::task::spawn_blocking(move || super::serve::stop(second.into_child(), second_stderr))
            .await
            .unwrap();
    assert_eq!((code, out.as_str()), (Some(0), ""), "{rest}");
}

/// Three worker processes, 300 jobs, one worker SIGKILLed once a sixth of the outcomes are in:
/// every run ends completed with its one answer, and the events stream holds exactly one
/// outcome per run (a job the killed worker held ran again elsewhere; none ran to its end
/// twice).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_300_jobs_one_sigkilled_every_outcome_once() {
    const JOBS: usize = 300;
    let nats = NatsServer::start().unwrap();
    let model = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = fake_preset(dir.path(), &model.url(), "");
    // A worker announces the rows and stops: the jobs queue up before the three start, so
    // every worker is busy when one is killed.
    let (announcer, announcer_stderr) = start_worker(dir.path(), &preset, &nats.url());
    let provider =
        NatsProvider::connect("workers", NatsConfig::new(nats.url(), "spawn"), Auth::None)
            .await
            .unwrap();
    let (code, _, rest) = tokio::task::spawn_blocking(move || {
        super::serve::stop(announcer.into_child(), announcer_stderr)
    })
    .await
    .unwrap();
    assert_eq!(code, Some(0), "{rest}");
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel();
    for n in 0..JOBS {
        let request =
            subagent_core::StartRequest::new(format!("HELLO job {n}"), dir.path().to_path_buf());
        let run = provider.start(request).await.unwrap();
        let done = done_tx.clone();
        tokio::spawn(async move {
            let _ = done.send((n, run.outcome().await));
        });
    }
    drop(done_tx);
    let names = ["w0", "w1", "w2"];
    let mut workers: Vec<_> = names
        .iter()
        .map(|name| {
            start_worker_with(
                dir.path(),
                &preset,
                &nats.url(),
                &["--concurrency", "4", "--name", name],
            )
        })
        .collect();
    let mut outcomes = Vec::new();
    while let Some(outcome) = tokio::time::timeout(Duration::from_secs(120), done_rx.recv())
        .await
        .unwrap()
    {
        outcomes.push(outcome);
        if outcomes.len() == JOBS / 6 {
            let (mut killed, _) = workers.remove(0);
            killed.kill();
        }
    }
    outcomes.sort_by_key(|(n, _)| *n);
    let seen: Vec<(usize, String, String)> = outcomes
        .iter()
        .map(|(n, outcome)| (*n, format!("{:?}", outcome.status), outcome.text.clone()))
        .collect();
    let expected: Vec<(usize, String, String)> = (0..JOBS)
        .map(|n| (n, "Completed".to_owned(), "Hi there.".to_owned()))
        .collect();
    assert_eq!(seen, expected);
    let per_run = subagent_nats::testing::tally(&nats.url()).await.unwrap();
    assert_eq!(per_run.len(), JOBS);
    assert!(per_run.values().all(|run| run.outcomes == 1), "{per_run:?}");
    // The killed worker held jobs (it had four slots and the queue was long): they came back
    // (and ran again, or were acked at once when their outcome was already stored).
    let mut taken = std::collections::BTreeMap::new();
    for run in per_run.values() {
        for worker in &run.workers {
            *taken.entry(worker.clone()).or_insert(0) += 1;
        }
    }
    assert!(
        per_run.values().any(|run| run.attempts > 1),
        "jobs taken per worker: {taken:?}"
    );
    for (worker, stderr) in workers {
        let (code, _, rest) =
            tokio::task::spawn_blocking(move || super::serve::stop(worker.into_child(), stderr))
                .await
                .unwrap();
        assert_eq!(code, Some(0), "{rest}");
    }
}

/// `subagent worker` against a server with TLS that verifies clients (a private CA made by the
/// openssl command line): without `--tls-ca` it is refused with `UNAUTHORIZED` (exit 2); with
/// the CA and a client certificate it is ready, and a row given the same files sees its
/// announcement.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_over_tls_needs_the_ca_and_its_certificate() {
    use subagent_nats::Tls;
    use subagent_nats::testing::TlsFiles;

    let files = TlsFiles::generate().unwrap();
    let args = files.server_args(true);
    let nats =
        NatsServer::start_with(&args.iter().map(String::as_str).collect::<Vec<_>>()).unwrap();
    let model = FakeServer::from_yaml(SCENARIOS).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let preset = fake_preset(dir.path(), &model.url(), "");
    let refused = std::process::Command::new(assert_cmd::cargo::cargo_bin("subagent"))
        .env_clear()
        .env("HOME", dir.path())
        .env("FAKE_KEY", "test-key")
        .current_dir(dir.path())
        .args(["worker", "--nats", &nats.url(), "--preset"])
        .arg(&preset)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = stderr(&refused);
    assert_eq!(refused.status.code(), Some(2), "{text}");
    assert!(text.contains("error[UNAUTHORIZED]: "), "{text}");
    let path = |path: &Path| path.display().to_string();
    let (ca, cert, key) = (path(&files.ca), path(&files.cert), path(&files.key));
    let (worker, worker_stderr) = start_worker_with(
        dir.path(),
        &preset,
        &nats.url(),
        &["--tls-ca", &ca, "--tls-cert", &cert, "--tls-key", &key],
    );
    let mut config = NatsConfig::new(nats.url(), "spawn");
    config.tls = Tls {
        ca_file: Some(files.ca.clone()),
        cert_file: Some(files.cert.clone()),
        key_file: Some(files.key.clone()),
    };
    NatsProvider::connect("workers", config, Auth::None)
        .await
        .unwrap();
    let (code, _, rest) =
        tokio::task::spawn_blocking(move || super::serve::stop(worker.into_child(), worker_stderr))
            .await
            .unwrap();
    assert_eq!(code, Some(0), "{rest}");
}
