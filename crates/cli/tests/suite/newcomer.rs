//! The newcomer path: what a first-time user does, following the README in a project of their
//! own outside the clone.

use std::path::Path;

use pretty_assertions::assert_eq;

use super::support::{root, stderr, stdout, subagent};

/// Copies `from` (a directory of files) into `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// The words of a shell command line: spaces split, double quotes group.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut started = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                started = true;
            }
            ' ' if !quoted => {
                if started {
                    words.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            _ => {
                current.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(current);
    }
    words
}

/// The README's commands that use the offline preset, as `subagent` arguments (the
/// `cargo run -p subagent-cli --` form too).
fn readme_offline_commands() -> Vec<Vec<String>> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut commands = Vec::new();
    let mut in_shell = false;
    for line in readme.lines() {
        if line.starts_with("```") {
            in_shell = !in_shell && line == "```sh";
            continue;
        }
        if !in_shell || !line.contains("presets/offline.yaml") {
            continue;
        }
        let command = line.split('#').next().unwrap_or(line).trim();
        let args = command
            .strip_prefix("cargo run -p subagent-cli -- ")
            .or_else(|| command.strip_prefix("subagent "))
            .unwrap_or_else(|| panic!("not a subagent command: {line}"));
        commands.push(shell_words(args));
    }
    commands
}

#[test]
fn the_readme_offline_commands_work_from_a_copy_of_presets_outside_the_clone() {
    let project = tempfile::tempdir().unwrap();
    assert!(
        !project.path().starts_with(root()),
        "the project must be outside the clone"
    );
    copy_dir(&root().join("presets"), &project.path().join("presets"));
    let commands = readme_offline_commands();
    assert_eq!(
        commands.iter().map(|c| c[0].as_str()).collect::<Vec<_>>(),
        ["run", "delegate"],
        "the README's offline commands: {commands:?}"
    );
    for args in &commands {
        let output = subagent(project.path()).args(args).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stdout(&output).starts_with("[offline scripted model] "),
            "{args:?}: {}",
            stdout(&output)
        );
        let err = stderr(&output);
        assert!(
            err.starts_with(
                "offline: the scripted model answers from the built-in offline demo scenario (no network)\n"
            ),
            "{args:?}: {err}"
        );
    }
}
