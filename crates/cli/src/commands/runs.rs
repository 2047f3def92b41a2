//! `subagent ps`, `logs` and `stop`: the record of runs (crate `subagent-runs`, written by
//! every `subagent` process of the user as its runs go), read.

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};
use subagent_core::{RunEvent, RunId};
use subagent_runs::{Lookup, Record, Runs, Status};

use crate::args::{LogsArgs, PsArgs, StopArgs};
use crate::line::one_line;
use crate::render::{Mode, Progress};
use crate::{EXIT_COMPLETED, EXIT_NOT_COMPLETED, Refusal, RefusalCode};

/// The most of a run's events file `logs` reads at once.
const EVENTS_CHUNK: u64 = 16 << 20;

fn open() -> Result<Runs, Refusal> {
    crate::recording::runs().ok_or_else(|| {
        Refusal::new(
            RefusalCode::Runs("RUNS_UNAVAILABLE"),
            "no runs are recorded without a state dir (set HOME or XDG_STATE_HOME to an absolute path)",
        )
    })
}

/// The run `id` names (all of it, or its first characters).
fn find(runs: &Runs, id: &str) -> Result<Record, Refusal> {
    match runs.find(id) {
        Lookup::Found(record) => Ok(*record),
        Lookup::Missing => Err(Refusal::new(
            RefusalCode::Runs("RUN_NOT_FOUND"),
            format!("no run {id:?} is recorded (`subagent ps --all` lists them)"),
        )),
        Lookup::Ambiguous(ids) => Err(Refusal::new(
            RefusalCode::Runs("RUN_AMBIGUOUS"),
            format!(
                "{id:?} starts the ids of {} runs: {}; give more of it",
                ids.len(),
                ids.iter()
                    .map(RunId::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `12.3s`, `4m05s`, `2h03m`.
fn elapsed(record: &Record) -> String {
    let ms = record
        .ended_ms
        .unwrap_or_else(now_ms)
        .saturating_sub(record.started_ms);
    let secs = ms / 1000;
    match secs {
        0..60 => format!("{:.1}s", ms as f64 / 1000.0),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, (secs % 3600) / 60),
    }
}

pub(super) fn ps(args: &PsArgs) -> Result<ExitCode, Refusal> {
    let runs = open()?;
    let mut records = runs.live();
    if args.all {
        records.extend(runs.done());
    } else {
        // A finished run keeps its running children (and what they lead to) in view: their
        // parents are shown too.
        let live: std::collections::HashSet<RunId> = records.iter().map(|r| r.id).collect();
        let wanted: std::collections::HashSet<RunId> = records
            .iter()
            .filter_map(|r| r.parent)
            .filter(|p| !live.contains(p))
            .collect();
        if !wanted.is_empty() {
            records.extend(runs.done().into_iter().filter(|r| wanted.contains(&r.id)));
        }
    }
    let ordered = subagent_runs::tree(records);
    if args.json {
        let rows: Vec<Value> = ordered
            .iter()
            .map(|(depth, record)| {
                let mut value = serde_json::to_value(record).unwrap_or(Value::Null);
                value["depth"] = json!(depth);
                value
            })
            .collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({"runs": rows})).unwrap_or_default()
        );
        return Ok(ExitCode::from(EXIT_COMPLETED));
    }
    if ordered.is_empty() {
        outln!(
            "no runs are running{} (`subagent ps --all` adds the finished ones)",
            if args.all { " or recorded" } else { "" }
        );
        return Ok(ExitCode::from(EXIT_COMPLETED));
    }
    outln!(
        "{:<8}  {:<9}  {:<12}  {:<16}  {:>7}  {:>9}  WHAT",
        "ID",
        "STATUS",
        "PROVIDER",
        "AGENT",
        "TIME",
        "TOKENS"
    );
    for (depth, record) in &ordered {
        let tokens = record.usage.input_tokens + record.usage.output_tokens;
        let agent = record
            .teammate
            .clone()
            .or_else(|| record.agent_type.clone())
            .unwrap_or_else(|| record.kind.clone());
        let indent = if *depth == 0 {
            String::new()
        } else {
            format!("{}└ ", "  ".repeat(depth - 1))
        };
        let background = if record.background {
            " (background)"
        } else {
            ""
        };
        outln!(
            "{:<8}  {:<9}  {:<12}  {:<16}  {:>7}  {:>9}  {indent}{}{background}",
            record.id.short(),
            record.status.as_str(),
            one_line(&record.provider, 12),
            one_line(&agent, 16),
            elapsed(record),
            tokens,
            one_line(&record.description, 60)
        );
    }
    Ok(ExitCode::from(EXIT_COMPLETED))
}

pub(super) async fn logs(args: &LogsArgs) -> Result<ExitCode, Refusal> {
    let runs = open()?;
    let record = find(&runs, &args.id)?;
    let mut progress = Progress::new(
        Mode::Plain,
        record
            .agent_type
            .clone()
            .unwrap_or_else(|| record.provider.clone()),
    );
    let mut said = Said::default();
    let mut offset = 0;
    let mut first = true;
    loop {
        let (mut lines, next) = runs.events_from(&record, offset, EVENTS_CHUNK);
        if std::mem::take(&mut first) {
            lines.insert(0, Runs::started(&record));
        }
        let moved = next != offset;
        offset = next;
        for line in lines {
            if args.json {
                outln!("{line}");
                continue;
            }
            let Ok(event) = serde_json::from_str::<RunEvent>(&line) else {
                continue;
            };
            let who = progress.logged(&event);
            if let Some(text) = said.take(&event) {
                outln!("{text}");
            }
            if let Some(line) = who {
                outln!("{line}");
            }
        }
        if !args.follow {
            if moved {
                continue;
            }
            break;
        }
        match runs.find(&record.id.to_string()) {
            Lookup::Found(now) if now.running() => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            _ => {
                // The last lines written before the end.
                let (lines, _) = runs.events_from(&record, offset, EVENTS_CHUNK);
                for line in lines {
                    if args.json {
                        outln!("{line}");
                    } else if let Ok(event) = serde_json::from_str::<RunEvent>(&line) {
                        if let Some(text) = said.take(&event) {
                            outln!("{text}");
                        }
                        if let Some(line) = progress.logged(&event) {
                            outln!("{line}");
                        }
                    }
                }
                break;
            }
        }
    }
    if !args.json
        && let Some(text) = said.flush()
    {
        outln!("{text}");
    }
    Ok(ExitCode::from(EXIT_COMPLETED))
}

/// The text a run streamed, gathered until something else happens, then said in one line.
#[derive(Default)]
struct Said {
    text: String,
}

impl Said {
    /// Gathers `event`'s text; for any other event, the text gathered so far, if any.
    fn take(&mut self, event: &RunEvent) -> Option<String> {
        if let RunEvent::Text { text, .. } = event {
            self.text.push_str(text);
            return None;
        }
        self.flush()
    }

    fn flush(&mut self) -> Option<String> {
        let text = std::mem::take(&mut self.text);
        (!text.trim().is_empty()).then(|| format!("said: {}", text.trim()))
    }
}

pub(super) async fn stop(args: &StopArgs) -> Result<ExitCode, Refusal> {
    let runs = open()?;
    let record = find(&runs, &args.id)?;
    match record.status {
        Status::Running | Status::Queued => {}
        Status::Lost => {
            return Err(Refusal::new(
                RefusalCode::Runs("RUN_OWNER_GONE"),
                format!(
                    "run {} has no owner any more (process {} is gone): nothing runs it",
                    record.id, record.owner.pid
                ),
            ));
        }
        ended => {
            return Err(Refusal::new(
                RefusalCode::Runs("RUN_NOT_RUNNING"),
                format!("run {} is not running: it ended {ended}", record.id),
            ));
        }
    }
    runs.request_stop(record.id).map_err(|error| {
        Refusal::new(
            RefusalCode::Runs("RUNS_UNAVAILABLE"),
            format!("cannot ask for run {} to stop: {error}", record.id),
        )
    })?;
    let mut status = record.status;
    if !args.no_wait {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            match runs.find(&record.id.to_string()) {
                Lookup::Found(now) if now.running() => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Lookup::Found(now) => {
                    status = now.status;
                    break;
                }
                _ => break,
            }
        }
    }
    if args.json {
        outln!(
            "{}",
            json!({"id": record.id, "status": status.as_str(), "asked": true})
        );
    } else if status.live() {
        outln!(
            "asked run {} to stop{}",
            record.id,
            if args.no_wait {
                ""
            } else {
                " (it still runs after 30 s)"
            }
        );
    } else {
        outln!("run {} stopped: {status}", record.id);
    }
    Ok(ExitCode::from(if status.live() && !args.no_wait {
        EXIT_NOT_COMPLETED
    } else {
        EXIT_COMPLETED
    }))
}
