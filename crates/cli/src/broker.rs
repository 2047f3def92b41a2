//! Asking the user: the permission broker of `subagent run` on a terminal.
//!
//! A call that no rule decides (in the `default` permission mode: edits and commands) is put to
//! the user on the terminal, showing what is asked (an edit's diff, a write's content, a
//! command line: `crate::prompt`): allow once, deny, or allow that tool for the rest of the run. Calls
//! asked at the same time wait their turn. Without a terminal there is no broker, so such calls
//! are denied (and a background child never asks at all).

use std::collections::HashSet;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use subagent_core::CancellationToken;
use subagent_runtime::{Decision, PermissionBroker, PermissionRequest};

/// Asks on stderr, reads the answer from stdin.
pub(crate) struct TerminalBroker {
    /// Set while a question is open, so the live progress line does not draw over it.
    pub asking: Arc<AtomicBool>,
    always: std::sync::Mutex<HashSet<String>>,
    turn: tokio::sync::Mutex<()>,
    /// Fires when the run is cancelled (Ctrl-C): an open question is then denied at once, not
    /// left waiting for a line nobody will type.
    cancel: CancellationToken,
}

impl TerminalBroker {
    /// A broker when both stdin and stderr are terminals (someone can answer), else `None`.
    /// Questions asked once `cancel` fired are denied without asking.
    pub(crate) fn if_interactive(
        asking: Arc<AtomicBool>,
        cancel: CancellationToken,
    ) -> Option<Arc<Self>> {
        (std::io::stdin().is_terminal() && std::io::stderr().is_terminal()).then(|| {
            Arc::new(Self {
                asking,
                always: std::sync::Mutex::new(HashSet::new()),
                turn: tokio::sync::Mutex::new(()),
                cancel,
            })
        })
    }
}

/// The answer typed, read as a decision: `y`/`yes` allow once, `a`/`always` allow the tool
/// from now on, anything else (including an empty line or end of input) denies.
pub(crate) fn parse_answer(answer: &str) -> (Decision, bool) {
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => (Decision::Allow, false),
        "a" | "always" => (Decision::Allow, true),
        _ => (Decision::Deny, false),
    }
}

#[async_trait]
impl PermissionBroker for TerminalBroker {
    async fn ask(&self, request: PermissionRequest) -> Decision {
        let _turn = tokio::select! {
            turn = self.turn.lock() => turn,
            () = self.cancel.cancelled() => return Decision::Deny,
        };
        if self.cancel.is_cancelled() {
            return Decision::Deny;
        }
        let known = self
            .always
            .lock()
            .map(|always| always.contains(&request.tool))
            .unwrap_or(false);
        if known {
            return Decision::Allow;
        }
        self.asking.store(true, Ordering::SeqCst);
        // Over the live view, whose lines it erases (the cursor is at its start).
        let question = format!(
            "{}{}",
            crate::render::ERASE_VIEW,
            crate::prompt::question(&request)
        );
        let reading = tokio::task::spawn_blocking(move || {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(question.as_bytes());
            let _ = err.flush();
            drop(err);
            let mut line = String::new();
            let _ = std::io::stdin().lock().read_line(&mut line);
            line
        });
        // The blocked read cannot be interrupted; on cancel it is left behind (the CLI does
        // not wait for it at exit).
        let answer = tokio::select! {
            answer = reading => answer.unwrap_or_default(),
            () = self.cancel.cancelled() => {
                self.asking.store(false, Ordering::SeqCst);
                eprintln!();
                return Decision::Deny;
            }
        };
        self.asking.store(false, Ordering::SeqCst);
        let (decision, always) = parse_answer(&answer);
        if always && let Ok(mut set) = self.always.lock() {
            set.insert(request.tool);
        }
        decision
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers() {
        assert_eq!(parse_answer("y\n"), (Decision::Allow, false));
        assert_eq!(parse_answer(" YES "), (Decision::Allow, false));
        assert_eq!(parse_answer("a"), (Decision::Allow, true));
        assert_eq!(parse_answer("always\n"), (Decision::Allow, true));
        for no in ["", "\n", "n", "no", "maybe"] {
            assert_eq!(parse_answer(no), (Decision::Deny, false), "{no:?}");
        }
    }
}
