//! The newcomer path: what a first-time user does, following the README in a project of their
//! own outside the clone.

use std::path::Path;

use pretty_assertions::assert_eq;

use super::support::assert_refused;
use super::support::write_file;
use super::support::{OFFLINE_RUN_ANSWER, copy_dir, root, shell_words, stderr, stdout, subagent};

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
                "preset: presets/offline.yaml (--preset)\noffline: the scripted model answers from the built-in offline demo scenario (no network)\n"
            ),
            "{args:?}: {err}"
        );
    }
}

/// Every value of the enum schema of `T`: every spelling a preset may write (the crates that
/// own the types pin these lists in their own tests).
fn spellings<T: schemars::JsonSchema>() -> Vec<String> {
    let schema = schemars::schema_for!(T);
    let values = schema.get("enum").and_then(|e| e.as_array()).unwrap();
    values
        .iter()
        .map(|value| value.as_str().unwrap().to_owned())
        .collect()
}

/// A preset with one provider row of `kind` whose `permission_mode` is `mode`.
fn preset_with_mode(dir: &Path, kind: &str, mode: &str) -> std::path::PathBuf {
    write_file(
        dir,
        format!("{kind}.yaml"),
        format!(
            "version: 1\nmodel: {{kind: scripted, name: s}}\nproviders:\n  - name: {kind}\n    kind: {kind}\n    config:\n      permission_mode: {mode}\ntools:\n  - {{name: subagent, provider: {kind}}}\n"
        ),
    )
}

#[test]
fn every_permission_mode_spelling_works_for_every_provider_kind() {
    let dir = tempfile::tempdir().unwrap();
    // Ours (kebab-case) and Claude Code's (camelCase) on every row; on Claude Code's rows its
    // own spellings, and its `auto` mode.
    let ours = spellings::<subagent_core::PermissionMode>();
    let claude = spellings::<subagent_claude_code::ClaudePermissionMode>();
    assert_eq!((ours.len(), claude.len()), (9, 10), "{ours:?} {claude:?}");
    for (kind, spellings) in [("spawn", &ours), ("claude-code", &claude)] {
        for mode in spellings {
            let file = preset_with_mode(dir.path(), kind, mode);
            let output = subagent(dir.path())
                .args(["preset", "validate"])
                .arg(&file)
                .output()
                .unwrap();
            assert_eq!(
                output.status.code(),
                Some(0),
                "{kind} {mode}: {}",
                stderr(&output)
            );
        }
        // A bad value lists the valid ones.
        let file = preset_with_mode(dir.path(), kind, "yolo");
        let output = subagent(dir.path())
            .args(["preset", "validate"])
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{kind}");
        let valid = spellings
            .iter()
            .map(|mode| format!("\"{mode}\""))
            .collect::<Vec<_>>()
            .join(", ");
        assert_eq!(
            stderr(&output),
            format!(
                "error[INVALID_ARGUMENTS]: {}:7:7: providers[0].config.permission_mode: invalid config for provider \"{kind}\" (kind {kind}): /permission_mode: value is not one of {valid}\n",
                file.display()
            ),
            "{kind}"
        );
    }
}

#[test]
fn every_permission_mode_spelling_works_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    for mode in spellings::<subagent_core::PermissionMode>() {
        let output = subagent(dir.path())
            .args(["run", "--permission-mode", &mode, "--help"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{mode}: {}", stderr(&output));
    }
    let output = subagent(dir.path())
        .args(["run", "--permission-mode", "yolo", "hello"])
        .output()
        .unwrap();
    assert_refused(
        &output,
        "unknown permission mode `yolo` (valid: default, accept-edits, acceptEdits, plan, dont-ask, dontAsk, bypass, bypass-permissions, bypassPermissions)",
        "",
    );
}

/// A project outside the clone with a copy of `presets/`.
fn project() -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    copy_dir(&root().join("presets"), &project.path().join("presets"));
    project
}

#[test]
fn an_output_schema_offline_fails_in_words_a_user_understands_and_no_failure_text_is_an_answer() {
    let project = project();
    std::fs::write(
        project.path().join("schema.json"),
        r#"{"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}"#,
    )
    .unwrap();
    let output = subagent(project.path())
        .args([
            "delegate",
            "--preset",
            "presets/offline.yaml",
            "--agent",
            "explore",
            "--output-schema",
            "schema.json",
            "Count the Rust files",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    // A failed run has no answer: whatever text it produced is not printed as one.
    assert_eq!(stdout(&output), "");
    let err = stderr(&output);
    assert!(
        err.contains(
            "diagnostic: model call failed: the offline scripted model has no answer for this turn: \
             it plays a fixed demo (say hello, delegate a hello) and cannot follow other \
             instructions, such as an output schema. Set ANTHROPIC_API_KEY or OPENAI_API_KEY to \
             use a real model.\n"
        ),
        "{err}"
    );
    assert!(!err.contains("scenario \"fallback\""), "{err}");
    assert!(
        err.contains("text of the failed run: [offline scripted model] This is the offline demo"),
        "the failed run's text is shown on stderr, labelled: {err}"
    );
}

#[test]
fn the_offline_parent_does_not_say_where_the_report_is_printed() {
    let project = project();
    let output = offline(
        project.path(),
        "run",
        &["Please delegate a hello to a subagent"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), OFFLINE_RUN_ANSWER);
}

/// `subagent COMMAND --preset presets/offline.yaml ARGS` in `dir` (also HOME).
fn offline(dir: &Path, command: &str, args: &[&str]) -> std::process::Output {
    subagent(dir)
        .args([command, "--preset", "presets/offline.yaml"])
        .args(args)
        .output()
        .unwrap()
}

/// The warning lines of `err`.
fn warnings(err: &str) -> Vec<&str> {
    err.lines()
        .filter(|line| line.starts_with("warning: "))
        .collect()
}

/// A project with agent definitions in `.subagents/agents/`.
fn project_with_agents(agents: &[(&str, &str)]) -> tempfile::TempDir {
    let project = project();
    let dir = project.path().join(".subagents/agents");
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in agents {
        std::fs::write(dir.join(file), text).unwrap();
    }
    project
}

/// A definition whose YAML does not parse.
const BROKEN_REVIEWER: &str =
    "---\nname: reviewer\ndescription: Reviews: a diff\ntools: read_file\n---\nYou review.\n";

#[test]
fn a_missing_agent_whose_file_did_not_load_is_refused_with_the_files_warning() {
    let project = project_with_agents(&[("reviewer.md", BROKEN_REVIEWER)]);
    let output = offline(
        project.path(),
        "delegate",
        &["--agent", "reviewer", "hello"],
    );
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    let expected = "preset: presets/offline.yaml (--preset)\nerror[UNKNOWN_AGENT_TYPE]: unknown agent type \"reviewer\" (available: \
                    \"general-purpose\", \"explore\", \"plan\"); its definition did not load: \
                    .subagents/agents/reviewer.md:3:";
    assert!(err.starts_with(expected), "{err}");
    assert!(err.contains("invalid frontmatter"), "{err}");
    assert_eq!(
        err.lines().count(),
        2,
        "the preset, then the refusal once: {err}"
    );
}

#[test]
fn delegate_and_run_print_catalog_warnings_once_on_stderr() {
    let project = project_with_agents(&[("reviewer.md", BROKEN_REVIEWER)]);
    for args in [
        ["delegate", "Say hello from the subagent"],
        ["run", "Please delegate a hello to a subagent"],
    ] {
        let output = offline(project.path(), args[0], &args[1..]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let err = stderr(&output);
        let warnings = warnings(&err);
        assert_eq!(warnings.len(), 1, "{args:?}: {err}");
        assert!(
            warnings[0].starts_with("warning: .subagents/agents/reviewer.md:3:")
                && warnings[0].contains("invalid frontmatter"),
            "{args:?}: {err}"
        );
        assert!(!stdout(&output).contains("warning"), "{args:?}");
    }
}

#[test]
fn an_unknown_tool_in_a_definition_is_a_warning_with_a_guess() {
    let project = project_with_agents(&[(
        "typo.md",
        "---\nname: typo\ndescription: Has a typo.\ntools: raed_file\n---\nYou read.\n",
    )]);
    let output = offline(
        project.path(),
        "delegate",
        &["--agent", "typo", "Say hello from the subagent"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let err = stderr(&output);
    assert_eq!(
        warnings(&err),
        [
            "warning: .subagents/agents/typo.md:4:1: agent `typo`: unknown tool `raed_file` in \
             tools (did you mean `read_file`?)",
            "warning: .subagents/agents/typo.md:4:1: agent `typo` would run with no tools on \
             provider `spawn`: its tools/disallowedTools leave none of ls, read_file, write_file, \
             edit_file, delete, glob, grep, bash, Skill, subagent",
        ],
        "{err}"
    );
}

#[test]
fn claude_code_tool_names_are_no_unknown_tools_on_a_claude_code_row() {
    let project = project_with_agents(&[(
        "cc.md",
        "---\nname: cc\ndescription: On Claude Code.\nprovider: claude-code\ntools: Task, Read, \
         WebFetch\n---\nYou read.\n",
    )]);
    let output = subagent(project.path())
        .args(["agents", "--preset", "presets/cross-product.yaml"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stderr(&output),
        "preset: presets/cross-product.yaml (--preset)\n",
        "no warnings"
    );
}
