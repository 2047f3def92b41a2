//! The small matchers rules are built from: `*` wildcards over text, lexical path
//! normalisation, and the shell operators that make one command line run several commands.

use std::path::{Component, Path, PathBuf};

/// What makes one command line run more than the command an allow rule names (the runtime's
/// rule, `crates/runtime/src/permissions.rs`).
pub(crate) const SHELL_OPERATORS: &[&str] = &[";", "&", "|", "`", "$(", ">", "<", "\n", "\r"];

/// Whether `text` matches `pattern`, where `*` stands for any run of characters (spaces and
/// slashes included) and everything else is literal. Linear in practice (the classic
/// two-pointer algorithm with one backtrack point).
pub(crate) fn wildcard(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Whether `command` matches a Bash rule's `pattern`: `*` wildcards, and a trailing ` *` (the
/// word boundary Claude Code documents: `ls *` matches `ls -la`, not `lsof`) also matches the
/// bare command (`ls`).
pub(crate) fn command_matches(pattern: &str, command: &str) -> bool {
    let command = command.trim();
    if wildcard(pattern, command) {
        return true;
    }
    pattern
        .strip_suffix(" *")
        .is_some_and(|bare| !bare.ends_with(' ') && wildcard(bare, command))
}

/// Whether an allow rule with `pattern` may cover `command`: every operator the command uses
/// must be spelled in the pattern itself (so `git *` does not cover `git log; rm -rf ~`).
pub(crate) fn operators_spelled(pattern: &str, command: &str) -> bool {
    SHELL_OPERATORS
        .iter()
        .all(|op| !command.contains(op) || pattern.contains(op))
}

/// The simple commands of a command line, for deny and ask rules: split at every operator and
/// substitution, each trimmed, with leading `NAME=value` assignments dropped as a second
/// spelling. Quoting is not understood, so a deny rule errs on the side of catching.
pub(crate) fn command_parts(command: &str) -> Vec<String> {
    let split: &[char] = &[';', '&', '|', '`', '>', '<', '\n', '\r', '(', ')', '$'];
    let mut parts = Vec::new();
    for part in command.split(split) {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        parts.push(part.to_owned());
        let words: Vec<&str> = part.split_whitespace().collect();
        let skip = words.iter().take_while(|w| is_assignment(w)).count();
        if skip > 0 && skip < words.len() {
            parts.push(words[skip..].join(" "));
        }
    }
    parts
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// `path` with `.` dropped and `..` applied lexically (never above the root), so
/// `src/../.env` is `.env`. Relative paths stay relative (a leading `..` is kept).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                let popped =
                    matches!(out.components().next_back(), Some(Component::Normal(_))) && out.pop();
                if !popped && !out.has_root() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn wildcards() {
        assert!(wildcard("git *", "git status"));
        assert!(wildcard("*", ""));
        assert!(wildcard("a*b*c", "aXbYc"));
        assert!(!wildcard("a*b*c", "aXbY"));
        assert!(wildcard("npm run test", "npm run test"));
        assert!(!wildcard("npm run test", "npm run test2"));
        assert!(command_matches("ls *", "ls"));
        assert!(command_matches("ls *", "ls -la"));
        assert!(!command_matches("ls *", "lsof"));
        assert!(command_matches("ls*", "lsof"));
    }

    #[test]
    fn operators_and_parts() {
        assert!(operators_spelled("git *", "git status"));
        assert!(!operators_spelled("git *", "git status && rm -rf ~"));
        assert!(operators_spelled("git * | head", "git log | head"));
        assert_eq!(
            command_parts("FOO=1 rm -rf x && echo $(whoami)"),
            ["FOO=1 rm -rf x", "rm -rf x", "echo", "whoami"]
        );
    }

    #[test]
    fn normalisation() {
        assert_eq!(normalize(Path::new("/p/src/../.env")), Path::new("/p/.env"));
        assert_eq!(normalize(Path::new("/../x")), Path::new("/x"));
        assert_eq!(normalize(Path::new("./a/./b/..")), Path::new("a"));
        assert_eq!(normalize(Path::new("../a")), Path::new("../a"));
    }
}
