//! `subagent sessions`: the sessions of a directory (the in-process runs' transcripts), one
//! shown, one deleted; and the latest one, which `--continue` continues.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Value, json};
use subagent_runtime::{SessionEntry, SessionState, SessionStore};
use subagent_session::{ContentBlock, Role, SessionEvent};

use crate::args::{SessionsArgs, SessionsCommand};
use crate::line::one_line;
use crate::setup;
use crate::{EXIT_COMPLETED, Refusal};

/// The provider name of the `run` parent's sessions (in its events, outcome and session).
pub(crate) const PARENT: &str = "parent";

/// The longest prompt shown in the table, in characters.
const PROMPT_CELL: usize = 60;
/// The longest text of one message shown by `sessions show`, in characters.
const MESSAGE_CHARS: usize = 2_000;

/// The session store of `cwd` (`--cwd`, else the current directory), or why there is none.
fn store(cwd: Option<&PathBuf>) -> Result<(SessionStore, PathBuf), Refusal> {
    let cwd = setup::cwd(&crate::args::ProjectArgs {
        preset: crate::args::PresetArgs { preset: None },
        cwd: cwd.cloned(),
    })?;
    let store = setup::session_store(&cwd).ok_or_else(|| {
        Refusal::new(
            subagent_core::ErrorCode::NotResumable,
            "no sessions are kept without a state dir (set HOME or XDG_STATE_HOME to an absolute path)",
        )
    })?;
    Ok((store, cwd))
}

pub(super) fn sessions(args: &SessionsArgs) -> Result<ExitCode, Refusal> {
    match &args.command {
        None => list(args.cwd.as_ref(), args.json),
        Some(SessionsCommand::Show { id, cwd, json }) => show(id, cwd.as_ref(), *json),
        Some(SessionsCommand::Rm { id, cwd }) => {
            let (store, _) = store(cwd.as_ref())?;
            store.remove(id)?;
            eprintln!("deleted session {}", id.trim());
            Ok(ExitCode::from(EXIT_COMPLETED))
        }
    }
}

/// An entry as JSON: id, when, provider, first prompt, status, tokens.
fn entry_json(entry: &SessionEntry) -> Value {
    let info = entry.info.as_ref();
    json!({
        "id": entry.id,
        "when": utc(entry.when_ms()),
        "state": entry.state.as_str(),
        "provider": info.map(|i| i.provider.as_str()),
        "prompt": info.map(|i| i.prompt.as_str()),
        "description": info.and_then(|i| i.description.as_deref()),
        "status": info.map(|i| i.status.as_str()),
        "runs": info.map(|i| i.runs),
        "usage": info.map(|i| json!({"input_tokens": i.input_tokens, "output_tokens": i.output_tokens})),
        "started": info.map(|i| utc(i.started_ms)),
        "transcript": entry.transcript,
    })
}

fn list(cwd: Option<&PathBuf>, json: bool) -> Result<ExitCode, Refusal> {
    let (store, cwd) = store(cwd)?;
    let entries = store.list();
    if json {
        let rows: Vec<Value> = entries.iter().map(entry_json).collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&rows).unwrap_or_default()
        );
        return Ok(ExitCode::from(EXIT_COMPLETED));
    }
    if entries.is_empty() {
        eprintln!(
            "no sessions in {}: in-process runs (run, and delegate to spawn or fork) keep theirs there",
            cwd.display()
        );
        return Ok(ExitCode::from(EXIT_COMPLETED));
    }
    let mut rows =
        vec![["id", "when (UTC)", "provider", "status", "tokens", "prompt"].map(str::to_owned)];
    for entry in &entries {
        let info = entry.info.as_ref();
        rows.push([
            entry.id.clone(),
            utc(entry.when_ms()),
            info.map_or("?".to_owned(), |i| one_line(&i.provider, 20)),
            match (entry.state, info) {
                (SessionState::Ended, Some(info)) => info.status.clone(),
                (state, _) => state.as_str().to_owned(),
            },
            info.map_or("-".to_owned(), |i| {
                format!("{} in / {} out", i.input_tokens, i.output_tokens)
            }),
            info.map_or(String::new(), |i| one_line(&i.prompt, PROMPT_CELL)),
        ]);
    }
    let widths: Vec<usize> = (0..6)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    for row in rows {
        let line = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect::<Vec<_>>()
            .join("  ");
        outln!("{}", line.trim_end());
    }
    Ok(ExitCode::from(EXIT_COMPLETED))
}

fn show(id: &str, cwd: Option<&PathBuf>, json: bool) -> Result<ExitCode, Refusal> {
    let (store, cwd) = store(cwd)?;
    let entry = store.find(id).ok_or_else(|| {
        Refusal::new(
            subagent_core::ErrorCode::NotResumable,
            format!(
                "no session {} in {} (`subagent sessions` lists them)",
                id.trim(),
                cwd.display()
            ),
        )
    })?;
    let loaded = subagent_session::load_transcript(&entry.transcript)
        .map_err(|e| Refusal::invalid(format!("session {}: {e}", entry.id)))?;
    if json {
        let events: Vec<Value> = loaded
            .log
            .iter()
            .map(|event| serde_json::to_value(&*event).unwrap_or(Value::Null))
            .collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({"session": entry_json(&entry), "events": events}))
                .unwrap_or_default()
        );
        return Ok(ExitCode::from(EXIT_COMPLETED));
    }
    outln!("session     {}", entry.id);
    if let Some(info) = &entry.info {
        outln!("provider    {}", info.provider);
        outln!("started     {} UTC", utc(info.started_ms));
        outln!(
            "last run    {} UTC ({}, {} run{})",
            utc(info.updated_ms),
            info.status,
            info.runs,
            if info.runs == 1 { "" } else { "s" }
        );
        outln!(
            "tokens      {} in / {} out",
            info.input_tokens,
            info.output_tokens
        );
    } else {
        outln!("state       {}", entry.state.as_str());
    }
    outln!("transcript  {}", entry.transcript.display());
    for event in loaded.log.iter() {
        if let SessionEvent::Message { message } = &*event {
            let who = match message.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            for block in &message.content {
                let line = match block {
                    ContentBlock::Text { text } => format!("{who}: {}", bounded(text)),
                    ContentBlock::ToolUse { name, input, .. } => {
                        format!("{who} → {name} {}", bounded(&input.to_string()))
                    }
                    ContentBlock::ToolResult {
                        content, is_error, ..
                    } => format!(
                        "{} {}",
                        if *is_error {
                            "tool error:"
                        } else {
                            "tool result:"
                        },
                        bounded(&content.to_text())
                    ),
                    _ => continue,
                };
                outln!("\n{line}");
            }
        }
    }
    Ok(ExitCode::from(EXIT_COMPLETED))
}

fn bounded(text: &str) -> String {
    let count = text.chars().count();
    if count <= MESSAGE_CHARS {
        return text.to_owned();
    }
    let kept: String = text.chars().take(MESSAGE_CHARS).collect();
    format!("{kept}… ({} more characters)", count - MESSAGE_CHARS)
}

/// The session `--continue` continues: the latest one of `cwd` that `wanted` accepts (by the
/// provider recorded for it) and that is not running; `NOT_RESUMABLE` when there is none.
pub(super) fn latest(
    cwd: &Path,
    what: &str,
    wanted: impl Fn(&str) -> bool,
) -> Result<SessionEntry, Refusal> {
    let store = setup::session_store(cwd).ok_or_else(|| {
        Refusal::new(
            subagent_core::ErrorCode::NotResumable,
            "--continue: no sessions are kept without a state dir (set HOME or XDG_STATE_HOME to an absolute path)",
        )
    })?;
    store
        .list()
        .into_iter()
        .find(|entry| {
            entry.state != SessionState::Running
                && entry
                    .info
                    .as_ref()
                    .is_some_and(|info| wanted(&info.provider))
        })
        .ok_or_else(|| {
            Refusal::new(
                subagent_core::ErrorCode::NotResumable,
                format!(
                    "--continue: no {what} session in {} to continue (`subagent sessions` lists them)",
                    cwd.display()
                ),
            )
        })
}

/// `ms` since the Unix epoch as `YYYY-MM-DD HH:MM` (UTC): the RFC 3339 time A2A writes, to the
/// minute.
fn utc(ms: u64) -> String {
    let rfc3339 = subagent_a2a::time::format_millis(ms);
    rfc3339.get(..16).unwrap_or(&rfc3339).replacen('T', " ", 1)
}

#[cfg(test)]
mod tests {
    use super::utc;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00");
        assert_eq!(utc(1_796_213_100_000), "2026-12-02 12:05");
    }
}
