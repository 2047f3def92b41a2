//! Tool lists: the comma-string form of `tools`/`disallowedTools`, and the name aliases that let
//! a Claude Code definition restrict our runtime's tools (and ours restrict Claude Code's).

/// Splits a comma-separated tool list (`"Read, Grep, Glob"`): items are trimmed, empty items
/// dropped, duplicates removed (first kept). Commas inside parentheses do not split, so Claude
/// Code rules such as `Bash(git diff:*, git log:*)` stay one item.
pub fn split_tool_list(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (index, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(&text[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    items.push(&text[start..]);
    dedup(
        items
            .into_iter()
            .map(str::trim)
            .filter(|item| !item.is_empty()),
    )
}

/// Removes duplicates, keeping the first of each, in order.
pub(crate) fn dedup<I, S>(items: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let mut out: Vec<String> = Vec::new();
    for item in items {
        let item = item.into();
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// Our runtime's tool names and Claude Code's names for the same tools.
pub const TOOL_ALIASES: [(&str, &str); 8] = [
    ("ls", "LS"),
    ("read_file", "Read"),
    ("write_file", "Write"),
    ("edit_file", "Edit"),
    ("edit_file", "MultiEdit"),
    ("glob", "Glob"),
    ("grep", "Grep"),
    ("bash", "Bash"),
];

/// The names of the same tool in the other vocabulary (`Read` → `read_file`, `bash` → `Bash`),
/// exact names only: patterns (`read_*`) and Claude Code rules (`Bash(git:*)`) have none.
pub fn tool_aliases(name: &str) -> Vec<&'static str> {
    TOOL_ALIASES
        .iter()
        .filter_map(|&(ours, theirs)| {
            if name == ours {
                Some(theirs)
            } else if name == theirs {
                Some(ours)
            } else {
                None
            }
        })
        .collect()
}

/// Each name followed by its aliases (see [`tool_aliases`]), without duplicates. A filter built
/// from a Claude Code definition (`tools: Read, Grep`) then works on our runtime, and one of ours
/// (`tools: [read_file]`) on a Claude Code provider; a name a provider does not have matches
/// nothing, so the extra names never widen a filter.
pub fn with_aliases(names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        if !out.contains(name) {
            out.push(name.clone());
        }
        for alias in tool_aliases(name) {
            if !out.iter().any(|known| known == alias) {
                out.push(alias.to_owned());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_commas_outside_parentheses() {
        for (text, expected) in [
            ("Read, Grep, Glob", vec!["Read", "Grep", "Glob"]),
            ("  ls ,, read_file ,", vec!["ls", "read_file"]),
            ("", vec![]),
            (" , ", vec![]),
            ("bash, bash", vec!["bash"]),
            (
                "Bash(git diff:*, git log:*), Read",
                vec!["Bash(git diff:*, git log:*)", "Read"],
            ),
            ("a), b", vec!["a)", "b"]),
        ] {
            assert_eq!(split_tool_list(text), expected, "{text:?}");
        }
    }

    #[test]
    fn aliases_go_both_ways() {
        assert_eq!(tool_aliases("Read"), vec!["read_file"]);
        assert_eq!(tool_aliases("edit_file"), vec!["Edit", "MultiEdit"]);
        assert!(tool_aliases("read_*").is_empty());
        assert_eq!(
            with_aliases(&["Read".into(), "read_file".into(), "mcp__x".into()]),
            vec!["Read", "read_file", "mcp__x"]
        );
    }
}
