//! Our tool names and Claude Code's, one table, and the tool families Claude Code's `Read` and
//! `Edit` rules cover.

/// Our tool name ↔ Claude Code's, one row per our tool. The reverse mapping takes the first row
/// of a Claude name (`Edit` → `edit_file`; `delete` is an edit and matches `Edit` rules).
const TABLE: &[(&str, &str)] = &[
    ("read_file", "Read"),
    ("write_file", "Write"),
    ("edit_file", "Edit"),
    ("delete", "Edit"),
    ("ls", "LS"),
    ("glob", "Glob"),
    ("grep", "Grep"),
    ("bash", "Bash"),
    ("task_output", "TaskOutput"),
    ("task_stop", "TaskStop"),
    // The delegation tool: a preset's row is named `subagent` unless it says otherwise.
    ("subagent", "Agent"),
    ("web_fetch", "WebFetch"),
];

/// Claude Code's older or other names for the same tools.
const CLAUDE_ALIASES: &[(&str, &str)] = &[
    ("BashOutput", "TaskOutput"),
    ("KillShell", "TaskStop"),
    ("KillBash", "TaskStop"),
    ("Task", "Agent"),
];

/// Claude Code's tools that read files: a `Read` rule covers them (as Claude Code documents,
/// best effort).
pub(crate) const READ_FAMILY: &[&str] = &["Read", "Glob", "Grep", "LS"];

/// Claude Code's tools that edit files: an `Edit` rule covers them.
pub(crate) const EDIT_FAMILY: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// Claude Code's name for our tool `ours` (`read_file` → `Read`); `None` for a name not ours.
pub fn claude_tool_name(ours: &str) -> Option<&'static str> {
    TABLE
        .iter()
        .find(|(name, _)| *name == ours)
        .map(|(_, claude)| *claude)
}

/// Our tool for Claude Code's `claude` (`Read` → `read_file`, `BashOutput` → `task_output`);
/// `None` when we have no such tool.
pub fn our_tool_name(claude: &str) -> Option<&'static str> {
    let claude = canonical_claude(claude);
    TABLE
        .iter()
        .find(|(_, name)| *name == claude)
        .map(|(ours, _)| *ours)
}

/// The table itself, `(ours, claude)`, for docs and `subagent settings`.
pub fn tool_name_table() -> &'static [(&'static str, &'static str)] {
    TABLE
}

/// Claude Code's current name for `claude` (an alias resolved), or `claude` itself.
fn canonical_claude(claude: &str) -> &str {
    CLAUDE_ALIASES
        .iter()
        .find(|(alias, _)| *alias == claude)
        .map_or(claude, |(_, name)| *name)
}

/// The name rules and matchers compare: Claude Code's for our tools and Claude's aliases, the
/// name itself otherwise (`mcp__…`, `WebSearch`).
pub(crate) fn canonical(tool: &str) -> &str {
    claude_tool_name(tool).unwrap_or_else(|| canonical_claude(tool))
}

/// Whether a rule naming `rule_tool` (canonical) covers a call of `call_tool` (canonical).
pub(crate) fn covers(rule_tool: &str, call_tool: &str) -> bool {
    match rule_tool {
        "Read" => READ_FAMILY.contains(&call_tool),
        "Edit" => EDIT_FAMILY.contains(&call_tool),
        _ => rule_tool == call_tool,
    }
}

/// Whether rules for `tool` (canonical) take a path specifier.
pub(crate) fn takes_path(tool: &str) -> bool {
    READ_FAMILY.contains(&tool) || EDIT_FAMILY.contains(&tool)
}
