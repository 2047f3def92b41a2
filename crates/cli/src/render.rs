//! How a run looks: live progress on a terminal, plain lines otherwise, JSON lines for machines.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde_json::{Value, json};
use subagent_core::{Outcome, RunEvent, RunId};

use crate::activity::Activity;
use crate::background::Background;
use crate::line::one_line;

/// How to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Events as JSON lines on stdout, then the outcome object.
    Json,
    /// A live status line on stderr (stderr is a terminal).
    Live,
    /// One plain line per event on stderr.
    Plain,
}

impl Mode {
    /// JSON when asked, else live on a terminal (unless logs are on: they would be drawn
    /// over), else plain.
    pub(crate) fn pick(json: bool) -> Self {
        let logging = tracing::level_filters::LevelFilter::current()
            > tracing::level_filters::LevelFilter::WARN;
        if json {
            Self::Json
        } else if std::io::stderr().is_terminal() && !logging {
            Self::Live
        } else {
            Self::Plain
        }
    }
}

/// Erases the live view: back to the start of its first line (where the cursor is left), and
/// everything below.
pub(crate) const ERASE_VIEW: &str = "\r\x1b[J";

/// How much of the streamed text the live line keeps (it shows the last 50 characters).
const RECENT_TEXT_KEEP: usize = 2048;

/// Follows one run's events and prints them: a nested agent's (forwarded by a delegation) under
/// its own name, its tool uses and tokens counted apart from the run's.
pub(crate) struct Progress {
    mode: Mode,
    label: String,
    started: Instant,
    activity: Activity,
    /// The run's background tasks (listed under the live line).
    background: Background,
    /// The nested agent the last activity came from (`None`: the run itself).
    active: Option<String>,
    last: String,
    /// The end of the text streamed since the last tool call (its tail is the last activity),
    /// at most `2 * RECENT_TEXT_KEEP` bytes.
    recent_text: String,
    /// Whether the start of `recent_text` was dropped.
    recent_cut: bool,
    drawn: bool,
    /// Set while the user is being asked something: do not draw over the question.
    paused: Option<Arc<AtomicBool>>,
}

impl Progress {
    /// Progress of a run labelled `label` (the provider or agent).
    pub(crate) fn new(mode: Mode, label: impl Into<String>) -> Self {
        Self {
            mode,
            label: label.into(),
            started: Instant::now(),
            activity: Activity::default(),
            background: Background::default(),
            active: None,
            last: "starting".into(),
            recent_text: String::new(),
            recent_cut: false,
            drawn: false,
            paused: None,
        }
    }

    /// Names the nested agents that calls of the delegation tool `tool` without a
    /// `subagent_type` start (what the tool forks or runs them on).
    pub(crate) fn name_untyped(&mut self, tool: impl Into<String>, label: impl Into<String>) {
        self.activity.name_untyped(tool, label);
    }

    /// The tool uses and tokens of the summary line, agreeing with the live line's.
    pub(crate) fn summary_counts(&self, outcome: &Outcome) -> String {
        self.activity.summary(&outcome.usage)
    }

    /// Pauses drawing while `flag` is set (a permission question is open).
    pub(crate) fn pause_while(&mut self, flag: Arc<AtomicBool>) {
        self.paused = Some(flag);
    }

    fn is_paused(&self) -> bool {
        self.paused
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::SeqCst))
    }

    /// The status line: who is at work (`parent › general-purpose` while a delegation's
    /// child is), elapsed time, tool uses, tokens, the last activity.
    fn status(&self) -> String {
        let who = match &self.active {
            Some(nested) => format!("{} › {nested}", self.label),
            None => self.label.clone(),
        };
        format!(
            "{who} · {:.1}s · {} · {} · {}",
            self.started.elapsed().as_secs_f64(),
            self.activity.tool_uses_live(),
            self.activity.tokens_live(),
            self.last
        )
    }

    /// Takes one event into account and prints what the mode prints.
    pub(crate) fn event(&mut self, event: &RunEvent) {
        if self.mode == Mode::Json {
            let mut value = serde_json::to_value(event).unwrap_or(Value::Null);
            // A delegation's result: the child's session id and usage as fields too.
            if let RunEvent::ToolResult { output, .. } = event
                && let Some(child) = child_json(output)
            {
                value["child"] = child;
            }
            print_json_line(&value);
            return;
        }
        let line = self.plain_line(event);
        self.background.note(event);
        match self.mode {
            Mode::Plain => {
                let elapsed = self.started.elapsed().as_secs_f64();
                if let Some((tag, line)) = line {
                    eprintln!("[{tag} {elapsed:.1}s] {line}");
                }
            }
            Mode::Live => self.redraw(),
            Mode::Json => {}
        }
    }

    /// Takes one event into account; the line `subagent logs` prints of it, if any:
    /// `[who] what`, as a plain `run` prints it without the time.
    pub(crate) fn logged(&mut self, event: &RunEvent) -> Option<String> {
        self.background.note(event);
        self.plain_line(event)
            .map(|(tag, line)| format!("[{tag}] {line}"))
    }

    /// Takes one event into account; returns the plain line it prints, if any: the name of
    /// who did it (the run's label, or a nested agent's) and what happened.
    fn plain_line(&mut self, event: &RunEvent) -> Option<(String, String)> {
        let nested = self.activity.note(event);
        let acts = matches!(
            event,
            RunEvent::Text { .. }
                | RunEvent::Thinking { .. }
                | RunEvent::ToolCall { .. }
                | RunEvent::ToolResult { .. }
                | RunEvent::Progress { .. }
                | RunEvent::Summary { .. }
        );
        if acts && nested != self.active {
            // Another agent speaks: its text does not continue the previous one's.
            self.recent_text.clear();
            self.recent_cut = false;
            self.active.clone_from(&nested);
        }
        let line = match event {
            RunEvent::Queued { ahead } => Some(match ahead {
                0 => "queued: starts when a child of its row has started".to_owned(),
                1 => "queued: 1 child waits before it".to_owned(),
                n => format!("queued: {n} children wait before it"),
            }),
            RunEvent::Started { description, .. } => Some(format!("started: {description}")),
            RunEvent::Text { text, .. } => {
                self.recent_text.push_str(text);
                // Only the tail is shown: keep a bounded window, not the whole answer (which
                // would also make each delta cost as much as everything streamed before it).
                if self.recent_text.len() > RECENT_TEXT_KEEP * 2 {
                    let start = self
                        .recent_text
                        .ceil_char_boundary(self.recent_text.len() - RECENT_TEXT_KEEP);
                    self.recent_text.drain(..start);
                    self.recent_cut = true;
                }
                let flat = one_line(&self.recent_text, usize::MAX);
                let count = flat.chars().count();
                let tail: String = flat.chars().skip(count.saturating_sub(50)).collect();
                let more = count > 50 || self.recent_cut;
                self.last = format!("“{}{tail}”", if more { "…" } else { "" });
                None
            }
            RunEvent::Thinking { .. } => {
                self.last = "thinking".into();
                None
            }
            RunEvent::ToolCall { name, input, .. } => {
                self.recent_text.clear();
                self.recent_cut = false;
                self.last = format!("{name} {}", one_line(&input.to_string(), 50));
                Some(format!("tool {name} {}", one_line(&input.to_string(), 100)))
            }
            RunEvent::ToolResult {
                output, is_error, ..
            } => {
                let what = if *is_error {
                    "tool error:"
                } else {
                    "tool result:"
                };
                self.last = format!("{what} {}", one_line(output, 50));
                Some(format!("{what} {}", one_line(output, 100)))
            }
            RunEvent::Progress { message, .. } => {
                self.last = one_line(message, 50);
                Some(message.clone())
            }
            RunEvent::Summary { text, .. } => {
                self.last = one_line(text, 80);
                Some(format!("summary: {}", one_line(text, 200)))
            }
            RunEvent::TaskStarted {
                task_id,
                description,
                ..
            } => Some(format!(
                "background task {task_id} started: {}",
                one_line(description, 200)
            )),
            RunEvent::TaskEnded {
                task_id,
                status,
                description,
                ..
            } => {
                let line = format!(
                    "background task {task_id} {status}: {}",
                    one_line(description, 200)
                );
                self.last = one_line(&line, 50);
                Some(line)
            }
            RunEvent::Finished { status } => Some(format!("finished: {status}")),
            _ => None,
        };
        line.map(|line| (nested.unwrap_or_else(|| self.label.clone()), line))
    }

    /// The live view: the status line, then one line per background task, each at most 120
    /// characters.
    fn view(&self) -> Vec<String> {
        std::iter::once(one_line(&self.status(), 120))
            .chain(self.background.lines().into_iter().map(|line| {
                if line.chars().count() > 120 {
                    line.chars().take(119).chain(['…']).collect()
                } else {
                    line
                }
            }))
            .collect()
    }

    /// Redraws the live view (call on a timer too, so elapsed time moves): from the start of
    /// its first line, everything below erased (`ESC[J`), its lines, then the cursor back at
    /// the start of the first line when there are more (`ESC[nA`), so that the next redraw,
    /// [`Progress::clear`] and a permission question start there.
    pub(crate) fn redraw(&mut self) {
        if self.mode != Mode::Live || self.is_paused() {
            return;
        }
        let view = self.view();
        let mut text = format!("{ERASE_VIEW}{}", view.join("\n"));
        if view.len() > 1 {
            text.push_str(&format!("\x1b[{}A\r", view.len() - 1));
        }
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes());
        let _ = err.flush();
        self.drawn = true;
    }

    /// Clears the live view before the outcome is printed.
    pub(crate) fn clear(&mut self) {
        if self.drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "{ERASE_VIEW}");
            let _ = err.flush();
            self.drawn = false;
        }
    }
}

/// Prints one JSON value as a line on stdout.
pub(crate) fn print_json_line(value: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{value}");
    let _ = out.flush();
}

/// The outcome object of `--json`.
pub(crate) fn outcome_json(run_id: RunId, provider: &str, outcome: &Outcome) -> Value {
    let mut value = json!({ "type": "outcome", "run_id": run_id, "provider": provider });
    if let (Some(object), Ok(Value::Object(fields))) =
        (value.as_object_mut(), serde_json::to_value(outcome))
    {
        object.extend(fields);
    }
    value
}

/// The child a delegation's result names (`<session_id>`, `<usage>`), as JSON fields:
/// `{"session_id", "usage"}`; `None` for another tool's result.
pub(crate) fn child_json(result: &str) -> Option<Value> {
    let trailer = subagent_runtime::delegation::result_trailer(result);
    if trailer.session_id.is_none() && trailer.usage.is_none() {
        return None;
    }
    Some(json!({ "session_id": trailer.session_id, "usage": trailer.usage }))
}

/// Whether a write to stdout has failed for a reason worth saying (said once).
static STDOUT_FAILED: AtomicBool = AtomicBool::new(false);

/// Writes results to stdout. A reader that has gone (`subagent providers | head -1`: a closed
/// pipe) is not an error: the rest is dropped quietly and the command ends as it would, as `ls`
/// does. Any other failure (a full disk) is said once on stderr.
pub(crate) fn out(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(error) = out.write_fmt(args).and_then(|()| out.flush())
        && error.kind() != std::io::ErrorKind::BrokenPipe
        && !STDOUT_FAILED.swap(true, Ordering::Relaxed)
    {
        eprintln!("error: cannot write to stdout: {error}");
    }
}

/// The error object of `--json` for a refusal before start.
pub(crate) fn error_json(code: &str, message: &str) -> Value {
    json!({ "type": "error", "code": code, "message": message })
}

/// Prints an outcome for people: the answer on stdout, the summary on stderr.
pub(crate) fn print_outcome_human(outcome: &Outcome, progress: &Progress) {
    if let Some(structured) = &outcome.structured {
        outln!(
            "{}",
            serde_json::to_string_pretty(structured).unwrap_or_default()
        );
    } else if !outcome.text.is_empty() {
        if outcome.is_completed() {
            outln!("{}", outcome.text);
        } else {
            // Not an answer (a failed run's text may be an error, such as claude's "Not logged
            // in"): stdout stays for results.
            eprintln!("text of the {} run: {}", outcome.status, outcome.text);
        }
    }
    eprintln!(
        "{} · {:.1}s · {}",
        outcome.status,
        outcome.usage.duration_ms as f64 / 1000.0,
        progress.summary_counts(outcome)
    );
    if let Some(diagnostic) = &outcome.diagnostic
        && !outcome.is_completed()
    {
        eprintln!("diagnostic: {diagnostic}");
    }
    if let Some(worktree) = &outcome.worktree {
        eprintln!("{}", worktree_text(worktree));
    }
}

/// The session a run wrote, for people: its id and the command that continues it (`resume`:
/// the command up to `--resume`, e.g. `subagent run`). `None` when no transcript was written.
pub(crate) fn session_line(outcome: &Outcome, resume: &str) -> Option<String> {
    outcome.session.as_ref().map(|session| {
        format!(
            "session: {id} (continue it: {resume} --resume {id} PROMPT)",
            id = session.id
        )
    })
}

/// A kept worktree, for people: where, its branch, what changed.
pub(crate) fn worktree_text(worktree: &subagent_core::WorktreeReport) -> String {
    format!(
        "worktree kept: {} (branch {})\n{}",
        worktree.path.display(),
        worktree.branch,
        worktree.diffstat
    )
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use subagent_core::Usage;

    use super::*;

    /// The status line without its elapsed time.
    fn status_without_time(progress: &Progress) -> String {
        let status = progress.status();
        let mut parts: Vec<&str> = status.split(" · ").collect();
        parts.remove(1);
        parts.join(" · ")
    }

    #[test]
    fn a_queued_child_says_how_many_wait_before_it() {
        let mut progress = Progress::new(Mode::Plain, "claude-code");
        let line = |progress: &mut Progress, ahead| {
            progress
                .plain_line(&RunEvent::Queued { ahead })
                .map(|(_, line)| line)
        };
        assert_eq!(
            line(&mut progress, 0).as_deref(),
            Some("queued: starts when a child of its row has started")
        );
        assert_eq!(
            line(&mut progress, 3).as_deref(),
            Some("queued: 3 children wait before it")
        );
    }

    #[test]
    fn the_live_line_names_the_nested_agent_at_work_and_counts_its_work_apart() {
        let mut progress = Progress::new(Mode::Plain, "parent");
        for event in [
            RunEvent::Usage {
                usage: Usage {
                    input_tokens: 100,
                    output_tokens: 50,
                    ..Usage::default()
                },
                parent_tool_use_id: None,
            },
            RunEvent::ToolCall {
                id: "c1".into(),
                name: "subagent".into(),
                input: json!({"subagent_type": "general-purpose", "prompt": "look"}),
                parent_tool_use_id: None,
            },
            RunEvent::Usage {
                usage: Usage {
                    input_tokens: 7,
                    output_tokens: 3,
                    ..Usage::default()
                },
                parent_tool_use_id: Some("c1".into()),
            },
            RunEvent::ToolCall {
                id: "k1".into(),
                name: "read_file".into(),
                input: json!({"path": "a.rs"}),
                parent_tool_use_id: Some("c1".into()),
            },
        ] {
            progress.event(&event);
        }
        assert_eq!(
            status_without_time(&progress),
            "parent › general-purpose · 1 tool use (+1 in subagents) · 150 tokens (+10 in subagents) · read_file {\"path\":\"a.rs\"}"
        );
        assert_eq!(
            progress.plain_line(&RunEvent::ToolResult {
                id: "k1".into(),
                output: "fn main() {}".into(),
                is_error: false,
                parent_tool_use_id: Some("c1".into()),
            }),
            Some((
                "general-purpose".to_owned(),
                "tool result: fn main() {}".to_owned()
            ))
        );
        progress.event(&RunEvent::ToolResult {
            id: "c1".into(),
            output: "done".into(),
            is_error: false,
            parent_tool_use_id: None,
        });
        assert_eq!(
            status_without_time(&progress),
            "parent · 1 tool use (+1 in subagents) · 150 tokens (+10 in subagents) · tool result: done"
        );
    }

    #[test]
    fn the_live_line_keeps_a_bounded_tail_of_a_long_answer() {
        let mut progress = Progress::new(Mode::Plain, "x");
        for i in 0..20_000 {
            progress.event(&RunEvent::Text {
                text: format!("word{i} "),
                parent_tool_use_id: None,
            });
            assert!(progress.recent_text.len() <= 2 * RECENT_TEXT_KEEP + 16);
        }
        let flat = (0..20_000)
            .map(|i| format!("word{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        let count = flat.chars().count();
        let tail: String = flat.chars().skip(count - 50).collect();
        assert_eq!(progress.last, format!("“…{tail}”"));
        progress.event(&RunEvent::Text {
            text: "é".repeat(3000),
            parent_tool_use_id: None,
        });
        assert_eq!(progress.last, format!("“…{}”", "é".repeat(50)));
    }
}
