//! The cap on one tool result: what the model is given of a result longer than the run's
//! `max_tool_result_bytes` (every tool's, a child's delegation result, a background task's
//! notification). The result is never cut silently: a marker in it says how much was left out
//! and how to see the rest.

/// The most bytes of one tool result the model is given when none is configured: 100,000, the
/// order of Claude Code's cap on an MCP tool's output (25,000 tokens, about four bytes each).
pub const DEFAULT_MAX_TOOL_RESULT_BYTES: usize = 100_000;

/// A run's cap on its tool results, handed to its children: the delegation tool puts it in a
/// child's `StartRequest` (`ParentContext::extensions`), and a child whose configuration sets
/// none ([`AgentConfig::max_tool_result_bytes`](crate::AgentConfig::max_tool_result_bytes))
/// takes it. A front end may put one in a top-level request as well.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolResultCap(pub usize);

/// `text` as the model is given it under a cap of `max` bytes: whole when it fits; else its
/// first three quarters of `max` and its last quarter (each cut to whole characters, so a few
/// bytes less), with a marker between them that says how many bytes were left out of how many
/// and, with `hint` (words after "To see the rest, "), how to see them. Head and tail are both
/// kept because a result's end says things too: a command's stderr, a subagent's session id.
pub fn cut_result(text: String, max: usize, hint: &str) -> String {
    if text.len() <= max {
        return text;
    }
    let head = text.floor_char_boundary(max - max / 4);
    let tail = text.ceil_char_boundary(text.len() - max / 4);
    format!(
        "{}\n\n[{} of {} bytes cut here: a tool result keeps at most {max} bytes. To see the rest, {hint}.]\n\n{}",
        &text[..head],
        tail - head,
        text.len(),
        &text[tail..]
    )
}

/// What the model is told to do about a result cut when its tool says nothing better.
pub(crate) const DEFAULT_CUT_HINT: &str =
    "call the tool again with narrower arguments, asking for less at a time";

/// What the model is told to do about a cut `<task-notification>`.
pub(crate) const NOTIFICATION_HINT: &str = "read the task's output file (named above) in parts, with bash (`sed -n`, `tail -c`); a subagent's session can be resumed (its session id above) to ask for the part you need";
