//! What a permission question shows: what is asked, bounded and readable, and what each answer
//! does. An edit shows its diff (the old lines, then the new), a write its content, a command
//! its command line, each cut to [`MAX_LINES`] lines of at most [`MAX_LINE`] characters, with
//! control characters (a terminal escape in a model's text) shown escaped, never sent to the
//! terminal. "always" names the rule it adds: every call of that tool, for the rest of the run.

use serde_json::Value;
use subagent_core::text::{Limit, truncate};
use subagent_runtime::PermissionRequest;

use crate::line::one_line;

/// The most lines of one block (old text, new text, content, command) shown.
pub(crate) const MAX_LINES: usize = 12;

/// The most characters of one line shown.
pub(crate) const MAX_LINE: usize = 160;

/// The question put to the user for one call: a head line, the block that shows what is asked,
/// then the answers (the prompt line, which the user answers on).
pub(crate) fn question(request: &PermissionRequest) -> String {
    let field = |key: &str| request.input.get(key).and_then(Value::as_str);
    let who = if request.depth == 0 {
        String::new()
    } else {
        format!(" (subagent at depth {})", request.depth)
    };
    let subject = request
        .subject
        .clone()
        .or_else(|| field("path").map(str::to_owned));
    let tool = &request.tool;
    let mut text = match (tool.as_str(), field("old_string"), field("new_string")) {
        ("edit_file", Some(old), Some(new)) => {
            let every = match request.input.get("replace_all") {
                Some(Value::Bool(true)) => ", every occurrence",
                _ => "",
            };
            let mut text = format!(
                "allow edit_file{who}: {}{every}\n",
                shown_subject(subject.as_deref())
            );
            block(&mut text, "  - ", old);
            block(&mut text, "  + ", new);
            text
        }
        _ => match (tool.as_str(), field("content"), field("command")) {
            ("write_file", Some(content), _) => {
                let mut text = format!(
                    "allow write_file{who}: {} ({})\n",
                    shown_subject(subject.as_deref()),
                    size(content)
                );
                block(&mut text, "  | ", content);
                text
            }
            (_, _, Some(command)) => {
                let background = match request.input.get("run_in_background") {
                    Some(Value::Bool(true)) => " (in the background)",
                    _ => "",
                };
                let mut text = format!("allow {tool}{who}{background}:\n");
                block(&mut text, "  $ ", command);
                text
            }
            _ => {
                let what = subject.unwrap_or_else(|| request.input.to_string());
                format!("allow {tool}{who}: {}\n", one_line(&clean(&what), 100))
            }
        },
    };
    text.push_str(&format!(
        "[y]es / [n]o / [a]lways (adds the rule `{tool}`: every {tool} call is allowed for the rest of this run): "
    ));
    text
}

fn shown_subject(subject: Option<&str>) -> String {
    subject.map_or_else(|| "(no path)".to_owned(), |s| one_line(&clean(s), 120))
}

/// `lines (bytes)` of a content, for a write's head line.
fn size(content: &str) -> String {
    let lines = content.lines().count();
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "{}, {}",
        plural(lines, "line"),
        plural(content.len(), "byte")
    )
}

/// Appends `body`'s lines, each after `prefix`, at most [`MAX_LINES`] of them (then how many
/// more there are); an empty body is one empty line.
fn block(out: &mut String, prefix: &str, body: &str) {
    let lines: Vec<&str> = if body.is_empty() {
        vec![""]
    } else {
        body.lines().collect()
    };
    for line in lines.iter().take(MAX_LINES) {
        out.push_str(prefix);
        out.push_str(&cut(&clean(line)));
        out.push('\n');
    }
    if lines.len() > MAX_LINES {
        let more = lines.len() - MAX_LINES;
        out.push_str(&format!(
            "{}… {more} more line{}\n",
            " ".repeat(prefix.len()),
            if more == 1 { "" } else { "s" }
        ));
    }
}

/// A line as it can be shown: a tab as four spaces, any other control character escaped
/// (`\u{1b}`), so nothing the model wrote moves the cursor or recolours the terminal.
fn clean(line: &str) -> String {
    let mut shown = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            '\t' => shown.push_str("    "),
            c if c.is_control() => shown.extend(c.escape_default()),
            c => shown.push(c),
        }
    }
    shown
}

/// At most [`MAX_LINE`] characters, the cut marked `…`.
fn cut(line: &str) -> String {
    truncate(line, Limit::Chars(MAX_LINE)).into_owned()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn request(tool: &str, input: Value, subject: Option<&str>, depth: u32) -> PermissionRequest {
        PermissionRequest {
            cwd: None,
            tool: tool.into(),
            input,
            subject: subject.map(str::to_owned),
            aliases: Vec::new(),
            depth,
        }
    }

    #[test]
    fn an_edit_shows_its_diff() {
        let asked = request(
            "edit_file",
            json!({"path": "src/lib.rs", "old_string": "fn answer() -> u32 {\n    42\n}", "new_string": "fn answer() -> u32 {\n    43\n}"}),
            Some("src/lib.rs"),
            0,
        );
        assert_eq!(
            question(&asked),
            "allow edit_file: src/lib.rs\n\
             \x20 - fn answer() -> u32 {\n\
             \x20 -     42\n\
             \x20 - }\n\
             \x20 + fn answer() -> u32 {\n\
             \x20 +     43\n\
             \x20 + }\n\
             [y]es / [n]o / [a]lways (adds the rule `edit_file`: every edit_file call is allowed for the rest of this run): "
        );
        let every = request(
            "edit_file",
            json!({"path": "a.txt", "old_string": "x", "new_string": "", "replace_all": true}),
            Some("a.txt"),
            1,
        );
        assert_eq!(
            question(&every).lines().take(3).collect::<Vec<_>>(),
            [
                "allow edit_file (subagent at depth 1): a.txt, every occurrence",
                "  - x",
                "  + ",
            ]
        );
    }

    #[test]
    fn a_write_shows_its_content_bounded() {
        let content: String = (1..=20).map(|n| format!("line {n}\n")).collect();
        let asked = request(
            "write_file",
            json!({"path": "notes.txt", "content": content}),
            Some("notes.txt"),
            0,
        );
        let shown = question(&asked);
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(
            lines[0],
            "allow write_file: notes.txt (20 lines, 151 bytes)"
        );
        assert_eq!(lines[1], "  | line 1");
        assert_eq!(lines[12], "  | line 12");
        assert_eq!(lines[13], "    … 8 more lines");
        assert_eq!(lines.len(), 15);
    }

    #[test]
    fn a_command_shows_its_command_line() {
        let asked = request(
            "bash",
            json!({"command": "cargo test &&\n  git status", "run_in_background": true}),
            Some("cargo test &&\n  git status"),
            0,
        );
        assert_eq!(
            question(&asked),
            "allow bash (in the background):\n\
             \x20 $ cargo test &&\n\
             \x20 $   git status\n\
             [y]es / [n]o / [a]lways (adds the rule `bash`: every bash call is allowed for the rest of this run): "
        );
    }

    #[test]
    fn nothing_the_model_wrote_reaches_the_terminal_raw_and_long_lines_are_cut() {
        let long = "x".repeat(500);
        let asked = request(
            "write_file",
            json!({"path": "a.txt", "content": format!("\u{1b}[2J\tred\n{long}")}),
            Some("a.txt"),
            0,
        );
        let shown = question(&asked);
        assert!(!shown.contains('\u{1b}'), "{shown:?}");
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines[1], "  | \\u{1b}[2J    red");
        assert_eq!(lines[2].chars().count(), 4 + MAX_LINE);
        assert!(lines[2].ends_with('…'));
    }

    #[test]
    fn other_tools_show_their_subject_or_arguments() {
        assert_eq!(
            question(&request(
                "delete",
                json!({"path": "old.txt"}),
                Some("old.txt"),
                0
            )),
            "allow delete: old.txt\n[y]es / [n]o / [a]lways (adds the rule `delete`: every delete call is allowed for the rest of this run): "
        );
        assert_eq!(
            question(&request("web_fetch", json!({"url": "https://x"}), None, 2))
                .lines()
                .next(),
            Some("allow web_fetch (subagent at depth 2): {\"url\":\"https://x\"}")
        );
    }
}
