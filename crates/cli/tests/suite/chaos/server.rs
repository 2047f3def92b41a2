//! `subagent serve` (A2A) under chaos, driven by a raw A2A client over HTTP:
//!
//! - a client drops its stream after a random number of events and re-subscribes with our
//!   `from` (the events it read): the server promises every later event exactly once, for a
//!   task still running or streamed and ended less than 60 s ago. Each round compares what the
//!   client got (first stream + re-subscription) with the task's whole event list, read at the
//!   end with `from: 0`: events lost, events doubled.
//! - the server is SIGKILLed after a random number of events and started again on the same
//!   port: runs live in the server's memory only, so the restarted server knows no task; the
//!   client's re-subscription must be refused as unknown (not hang, not succeed). Every event
//!   after the kill is lost, and the run with them: counted, not asserted (it is the design),
//!   and the processes of the killed server's runs must still all end (guardians).

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use subagent_a2a::EXTENSION_URI;
use subagent_a2a::sse::Decoder;

use super::reaper;
use super::rows::local_preset;
use super::{Line, Plan, Rng, assert_clean, report, start_model};
use crate::suite::serve::TOKEN;
use crate::suite::support::{Subagent, announced_addr, bin, start_piped};

/// Ten turns, each a text and a short command, then the answer: ~40 events over a second.
fn scenario() -> String {
    let mut steps = String::new();
    for i in 0..10 {
        steps.push_str(&format!(
            "    - text: s{i}\n      delay_ms: 30\n      tool_calls: [{{name: bash, input: {{command: 'sleep 0.05'}}}}]\n"
        ));
    }
    format!("- match: 'CHAOS-STREAM'\n  steps:\n{steps}    - text: the end\n")
}

/// A `subagent serve` on `port` (0: any); returns it and its address.
fn serve(home: &Path, preset: &Path, port: u16) -> (Child, String) {
    let mut command = Subagent::new(bin(), home)
        .fake_key()
        .env("A2A_TOKEN", TOKEN)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--token-env", "A2A_TOKEN"])
        .preset(preset)
        .command();
    let (child, mut stderr) = start_piped(&mut command, Stdio::null());
    let addr = announced_addr(&mut stderr);
    std::thread::spawn(move || for _ in stderr.lines() {});
    (child, addr)
}

struct Client {
    http: reqwest::Client,
    url: String,
}

/// How a stream read ended.
#[derive(Debug, PartialEq)]
enum End {
    /// The server closed it (the task ended).
    Closed,
    /// We stopped reading after the count we wanted.
    Cut,
    /// A JSON-RPC error came instead of events.
    Error(Value),
    /// The connection failed (server gone).
    Broken,
}

impl Client {
    fn new(addr: &str) -> Self {
        Self {
            http: reqwest::Client::new(),
            url: format!("http://{addr}/a2a"),
        }
    }

    /// Streams `method` and returns the events' results, at most `max` of them.
    async fn stream(&self, method: &str, params: Value, max: usize) -> (Vec<Value>, End) {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let sent = self
            .http
            .post(&self.url)
            .header("A2A-Version", "1.0")
            .header("Accept", "text/event-stream")
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await;
        let Ok(mut response) = sent else {
            return (Vec::new(), End::Broken);
        };
        let mut decoder = Decoder::new(1 << 20);
        let mut events = Vec::new();
        loop {
            let chunk = tokio::time::timeout(Duration::from_secs(60), response.chunk()).await;
            let bytes = match chunk {
                Ok(Ok(Some(bytes))) => bytes,
                Ok(Ok(None)) => return (events, End::Closed),
                Ok(Err(_)) | Err(_) => return (events, End::Broken),
            };
            let text = if response
                .headers()
                .get("content-type")
                .is_some_and(|v| v.as_bytes().starts_with(b"application/json"))
            {
                let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                return (events, End::Error(value["error"].clone()));
            } else {
                decoder.feed(&bytes).unwrap()
            };
            for event in text {
                let value: Value = serde_json::from_str(&event.data).unwrap();
                if value.get("error").is_some() {
                    return (events, End::Error(value["error"].clone()));
                }
                events.push(value["result"].clone());
                if events.len() == max {
                    return (events, End::Cut);
                }
            }
        }
    }
}

fn send_params() -> Value {
    json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "CHAOS-STREAM go"}],
        "metadata": {EXTENSION_URI: {}}}})
}

fn subscribe_params(task: &str, from: usize) -> Value {
    json!({"id": task, "metadata": {EXTENSION_URI: {"from": from}}})
}

fn task_id(first: &Value) -> String {
    first["task"]["id"].as_str().unwrap().to_owned()
}

/// Events lost and doubled: `got` against `all`, as multisets of whole events.
fn compare(all: &[Value], got: &[Value]) -> (u32, u32) {
    let count = |list: &[Value]| {
        let mut map: BTreeMap<String, u32> = BTreeMap::new();
        for v in list {
            *map.entry(v.to_string()).or_default() += 1;
        }
        map
    };
    let (want, have) = (count(all), count(got));
    let mut lost = 0;
    let mut doubled = 0;
    for (key, n) in &want {
        lost += n.saturating_sub(*have.get(key).unwrap_or(&0));
    }
    for (key, n) in &have {
        doubled += n.saturating_sub(*want.get(key).unwrap_or(&0));
    }
    (lost, doubled)
}

pub(super) fn run(plan: &Plan) {
    let (rt, model) = start_model(&scenario());
    let home = tempfile::tempdir().unwrap();
    let preset = local_preset(home.path(), &model.url());
    let mut rng = Rng::new(plan.seed);
    let mut details = Vec::new();

    // The whole stream once, uncut: its length bounds the cut points.
    let (mut server, addr) = serve(home.path(), &preset, 0);
    let port: u16 = addr.rsplit(':').next().unwrap().parse().unwrap();
    let client = Client::new(&addr);
    let (whole, end) = rt.block_on(client.stream("SendStreamingMessage", send_params(), 0));
    assert_eq!(end, End::Closed, "{whole:#?}");
    let length = whole.len();
    assert!(length > 20, "a short stream: {whole:#?}");

    let mut reconnect = Line::new(
        "a2a (serve)",
        "client drops the stream, re-subscribes with from",
    );
    for round in 0..plan.rounds_or(3) {
        let cut = 1 + usize::try_from(rng.below(u64::try_from(length - 2).unwrap())).unwrap();
        let (first, end) = rt.block_on(client.stream("SendStreamingMessage", send_params(), cut));
        reconnect.runs += 1;
        if end != End::Cut {
            reconnect.wrong += 1;
            details.push(format!(
                "reconnect round {round}: the first stream ended {end:?} before event {cut}"
            ));
            continue;
        }
        let id = task_id(&first[0]);
        let (rest, end) =
            rt.block_on(client.stream("SubscribeToTask", subscribe_params(&id, cut), 0));
        let (all, all_end) =
            rt.block_on(client.stream("SubscribeToTask", subscribe_params(&id, 0), 0));
        if end != End::Closed || all_end != End::Closed {
            reconnect.wrong += 1;
            details.push(format!("reconnect round {round} (cut at {cut}): re-subscription ended {end:?}, the whole list {all_end:?}"));
            continue;
        }
        let got: Vec<Value> = first.into_iter().chain(rest).collect();
        let (lost, doubled) = compare(&all, &got);
        reconnect.lost += lost;
        reconnect.doubled += doubled;
        if lost + doubled > 0 {
            details.push(format!(
                "reconnect round {round} (cut at {cut}): {lost} lost, {doubled} doubled"
            ));
        }
    }
    reconnect.note = format!("cut after 1–{} of {length} events", length - 1);

    let mut killed = Line::new("a2a (serve)", "server SIGKILLed mid-stream, restarted");
    let mut events_lost = 0;
    let kill_rounds = plan.rounds_or(1);
    for round in 0..kill_rounds {
        let cut = 1 + usize::try_from(rng.below(u64::try_from(length - 2).unwrap())).unwrap();
        let (first, end) = rt.block_on(client.stream("SendStreamingMessage", send_params(), cut));
        killed.runs += 1;
        if end != End::Cut {
            killed.wrong += 1;
            details.push(format!(
                "kill round {round}: the stream ended {end:?} before event {cut}"
            ));
            continue;
        }
        let id = task_id(&first[0]);
        let _ = server.kill();
        let _ = server.wait();
        let left = reaper::settle(&BTreeSet::new(), Duration::from_secs(10));
        if !left.is_empty() {
            killed.left += u32::try_from(left.len()).unwrap();
            details.push(format!(
                "kill round {round}: the killed server left {left:?}"
            ));
        }
        let (next, _) = serve(home.path(), &preset, port);
        server = next;
        let (rest, end) =
            rt.block_on(client.stream("SubscribeToTask", subscribe_params(&id, cut), 0));
        // -32001: task not found.
        if !(rest.is_empty() && matches!(&end, End::Error(e) if e["code"] == -32001)) {
            killed.wrong += 1;
            details.push(format!(
                "kill round {round}: the restarted server answered {end:?} with {} events",
                rest.len()
            ));
        }
        events_lost += length - cut;
    }
    killed.note = format!(
        "the restarted server knows no task (runs live in memory): the client is told `task not found`; {events_lost} events after the kills (and those runs) lost by design, not counted"
    );
    let _ = server.kill();
    let _ = server.wait();
    reaper::settle(&BTreeSet::new(), Duration::from_secs(10));
    let lines = [reconnect, killed];
    report(plan, "server", &lines);
    assert_clean(&lines, &details);
}
