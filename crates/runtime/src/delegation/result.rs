//! What a delegation's result says to the parent's model (the child's text, then its
//! `<session_id>`, `<usage>` and kept `<worktree>`), and reading that trailer back for front
//! ends.

use subagent_core::Outcome;

use crate::report::worktree_lines;
use crate::tools::ToolOutput;

fn usage_line(outcome: &Outcome) -> String {
    let u = &outcome.usage;
    format!(
        "<usage>input_tokens: {}, output_tokens: {}, tool_uses: {}, duration_ms: {}</usage>",
        u.input_tokens, u.output_tokens, u.tool_uses, u.duration_ms
    )
}

/// What the end of a delegation's result says of the child (the lines [`outcome_result`]
/// writes for the parent's model): its session id and usage, for a front end to show as
/// fields.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResultTrailer {
    /// The child's `<session_id>`, when its session can be resumed.
    pub session_id: Option<String>,
    /// The child's `<usage>`.
    pub usage: Option<subagent_core::Usage>,
}

/// Reads the `<session_id>` and `<usage>` lines of a delegation's result (see
/// [`outcome_result`]); what is missing or malformed is `None`.
pub fn result_trailer(text: &str) -> ResultTrailer {
    let between = |open: &str, close: &str| {
        let start = text.rfind(open)? + open.len();
        let end = text[start..].find(close)? + start;
        Some(text[start..end].trim())
    };
    let session_id = between("<session_id>", "</session_id>")
        .filter(|id| !id.is_empty())
        .map(str::to_owned);
    let usage = between("<usage>", "</usage>").and_then(|fields| {
        let mut usage = subagent_core::Usage::default();
        let mut seen = 0;
        for field in fields.split(',') {
            let (key, value) = field.split_once(':')?;
            let value: u64 = value.trim().parse().ok()?;
            match key.trim() {
                "input_tokens" => usage.input_tokens = value,
                "output_tokens" => usage.output_tokens = value,
                "tool_uses" => usage.tool_uses = value,
                "duration_ms" => usage.duration_ms = value,
                _ => continue,
            }
            seen += 1;
        }
        (seen > 0).then_some(usage)
    });
    ResultTrailer { session_id, usage }
}

/// `<session_id>…</session_id>` and a newline when the child's session can be resumed (the
/// value of the tool's `resume` argument), else nothing.
fn session_line(outcome: &Outcome) -> String {
    outcome
        .session
        .as_ref()
        .map(|session| format!("<session_id>{}</session_id>\n", session.id))
        .unwrap_or_default()
}

/// The tool result for a child's outcome: its text (or structured JSON) plus usage (and the
/// worktree it left changes in, if any); anything but `completed` is an error result with the
/// status, diagnostic and partial text.
pub fn outcome_result(outcome: &Outcome) -> ToolOutput {
    let session = session_line(outcome);
    let worktree = outcome
        .worktree
        .as_ref()
        .map(|worktree| format!("\n{}", worktree_lines(worktree)))
        .unwrap_or_default();
    if outcome.is_completed() {
        let body = match &outcome.structured {
            Some(value) => value.to_string(),
            None => outcome.text.clone(),
        };
        return ToolOutput::ok(format!(
            "{body}\n\n{session}{}{worktree}",
            usage_line(outcome)
        ));
    }
    let mut text = format!("The subagent did not complete: {}", outcome.status);
    if let Some(diagnostic) = &outcome.diagnostic {
        text.push_str(&format!("\nDiagnostic: {diagnostic}"));
    }
    if !outcome.text.is_empty() {
        text.push_str(&format!("\nPartial output:\n{}", outcome.text));
    }
    text.push_str(&format!("\n\n{session}{}{worktree}", usage_line(outcome)));
    ToolOutput::error(text)
}

#[cfg(test)]
mod trailer_tests {
    use super::{ResultTrailer, outcome_result, result_trailer};
    use pretty_assertions::assert_eq;
    use subagent_core::{Outcome, SessionRef, Usage};

    /// What `outcome_result` writes, `result_trailer` reads back, completed or not.
    #[test]
    fn the_trailer_of_a_result_reads_back() {
        let mut outcome = Outcome::completed("done <usage>not this</usage>");
        outcome.usage = Usage {
            input_tokens: 12,
            output_tokens: 3,
            tool_uses: 2,
            duration_ms: 40,
            ..Usage::default()
        };
        outcome.session = Some(SessionRef {
            provider: "spawn".into(),
            id: "0b7c".into(),
            cwd: None,
            transcript: None,
        });
        let expected = ResultTrailer {
            session_id: Some("0b7c".into()),
            usage: Some(outcome.usage),
        };
        assert_eq!(result_trailer(&outcome_result(&outcome).content), expected);
        outcome.status = subagent_core::StopReason::Failed;
        assert_eq!(result_trailer(&outcome_result(&outcome).content), expected);
        outcome.session = None;
        assert_eq!(
            result_trailer(&outcome_result(&outcome).content).session_id,
            None
        );
        assert_eq!(result_trailer("no trailer"), ResultTrailer::default());
    }
}
