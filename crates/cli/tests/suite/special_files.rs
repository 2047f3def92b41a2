//! Special files never hang `subagent` or exhaust its memory, wherever the user can name one:
//! `/dev/zero` (size 0, never ends), a symlink to it, a FIFO (blocks a reader until someone
//! writes) and an oversized regular file, as a preset, an output schema, a scenario file, an
//! agent definition, or the prompt on stdin. And validation agrees with running.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pretty_assertions::assert_eq;

use super::support::write_file;
use super::support::{stderr, stdout, subagent};

/// Each command must end well within this; a hang fails the test instead of blocking it.
const BOUND: Duration = Duration::from_secs(30);

fn fifo(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    subagent_test_support::procs::mkfifo(&path);
    path
}

/// `/dev/zero`, a symlink to it, a FIFO and a regular file of `big` bytes, all in `dir`.
fn specials(dir: &Path, stem: &str, big: usize) -> Vec<PathBuf> {
    let link = dir.join(format!("{stem}-zero-link"));
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let large = write_file(dir, format!("{stem}-large"), vec![b' '; big]);
    vec![
        PathBuf::from("/dev/zero"),
        link,
        fifo(dir, &format!("{stem}-fifo")),
        large,
    ]
}

/// `subagent ARGS` in `home`, ended if it runs past [`BOUND`].
fn bounded(home: &Path, args: &[&dyn AsRef<std::ffi::OsStr>]) -> std::process::Output {
    subagent(home)
        .timeout(BOUND)
        .args(args.iter().map(|arg| arg.as_ref()))
        .output()
        .unwrap()
}

/// Exit 2 with `INVALID_ARGUMENTS` and the path in the message.
fn assert_refused_naming(output: &std::process::Output, path: &Path) {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{}: {err}", path.display());
    assert!(err.contains("INVALID_ARGUMENTS"), "{err}");
    assert!(err.contains(&path.display().to_string()), "{err}");
}

#[test]
fn preset_validate_refuses_special_files() {
    let home = tempfile::tempdir().unwrap();
    for path in specials(home.path(), "preset", 2 << 20) {
        let output = bounded(home.path(), &[&"preset", &"validate", &path]);
        assert_refused_naming(&output, &path);
    }
}

#[test]
fn output_schema_refuses_special_files() {
    let home = tempfile::tempdir().unwrap();
    for path in specials(home.path(), "schema", 2 << 20) {
        let output = bounded(
            home.path(),
            &[
                &"delegate",
                &"--offline",
                &"--output-schema",
                &path,
                &"say hi",
            ],
        );
        assert_refused_naming(&output, &path);
    }
}

#[test]
fn a_scenario_file_that_is_special_is_refused() {
    let home = tempfile::tempdir().unwrap();
    for path in specials(home.path(), "scenario", 17 << 20) {
        let preset = write_file(
            home.path(),
            "scripted.yaml",
            format!(
                "version: 1\nmodel: {{kind: scripted, name: s, scenario: \"{}\"}}\nproviders:\n  - {{name: spawn, kind: spawn}}\n",
                path.display()
            ),
        );
        let output = bounded(
            home.path(),
            &[&"delegate", &"--offline", &"--preset", &preset, &"say hi"],
        );
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{}: {err}", path.display());
        assert!(err.contains(&path.display().to_string()), "{err}");
    }
}

#[test]
fn special_agent_files_are_warnings_and_the_rest_loads() {
    let home = tempfile::tempdir().unwrap();
    let agents = home.path().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::os::unix::fs::symlink("/dev/zero", agents.join("z.md")).unwrap();
    fifo(&agents, "f.md");
    std::fs::write(
        agents.join("fine.md"),
        "---\nname: fine\ndescription: a fine agent\n---\nBe fine.\n",
    )
    .unwrap();
    let output = bounded(home.path(), &[&"agents"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let all = format!("{}{}", stdout(&output), stderr(&output));
    assert!(all.contains("fine"), "{all}");
    assert!(all.contains("z.md") && all.contains("f.md"), "{all}");
}

#[test]
fn an_oversized_prompt_on_stdin_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let output = subagent(home.path())
        .timeout(BOUND)
        .args(["delegate", "--offline", "-"])
        .write_stdin(vec![b'a'; (4 << 20) + 1])
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains("INVALID_ARGUMENTS") && err.contains("stdin"),
        "{err}"
    );
}

/// What a run refuses, validation refuses, with the same code.
#[test]
fn validation_builds_what_a_run_builds() {
    let home = tempfile::tempdir().unwrap();
    let preset = write_file(
        home.path(),
        "turns.yaml",
        "version: 1\nproviders:\n  - name: spawn\n    kind: spawn\n    config: {max_turns: 5000000000}\n",
    );
    let run = bounded(
        home.path(),
        &[&"delegate", &"--offline", &"--preset", &preset, &"say hi"],
    );
    assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
    let validate = bounded(home.path(), &[&"preset", &"validate", &preset]);
    assert_eq!(validate.status.code(), Some(2), "{}", stdout(&validate));
    // The run names its preset first; the refusals are the same.
    let refusal = |text: String| {
        text.lines()
            .find(|line| line.starts_with("error["))
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(refusal(stderr(&validate)), refusal(stderr(&run)));
    assert!(refusal(stderr(&run)).starts_with("error[INVALID_ARGUMENTS]"));
}

#[test]
fn a_cwd_that_is_a_file_is_refused_like_a_missing_one() {
    let home = tempfile::tempdir().unwrap();
    let file = write_file(home.path(), "a-file", "x");
    for cwd in [file.as_path(), Path::new("/nonexistent-cwd-7f3a")] {
        let output = bounded(
            home.path(),
            &[&"delegate", &"--offline", &"--cwd", &cwd, &"say hi"],
        );
        assert_refused_naming(&output, cwd);
    }
}

const READ_THE_PIPE: &str = r#"
- match: "read the pipe"
  steps:
    - tool_calls:
        - {name: read_file, input: {path: "pipe"}}
    - text: "the pipe was refused"
"#;

/// A scripted preset whose model answers from `scenario` (text) with a spawn row and its tool.
fn scripted_preset(dir: &Path, scenario: &str) -> PathBuf {
    let scenario_path = write_file(dir, "scenario.yaml", scenario);
    write_file(
        dir,
        "scripted.yaml",
        format!(
            "version: 1\nmodel: {{kind: scripted, name: s, scenario: \"{}\"}}\nproviders:\n  - {{name: spawn, kind: spawn}}\ntools:\n  - {{name: subagent, provider: spawn}}\n",
            scenario_path.display()
        ),
    )
}

/// `read_file` on a FIFO in the project is a tool error the model reads, and the run goes on.
#[test]
fn read_file_on_a_fifo_is_a_tool_error_and_the_run_completes() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    fifo(&project, "pipe");
    let preset = scripted_preset(home.path(), READ_THE_PIPE);
    let output = bounded(
        home.path(),
        &[
            &"run",
            &"--json",
            &"--offline",
            &"--cwd",
            &project,
            &"--preset",
            &preset,
            &"read the pipe",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results: Vec<(serde_json::Value, serde_json::Value)> = super::support::json_lines(&output)
        .into_iter()
        .filter(|event| event["type"] == "tool_result")
        .map(|event| (event["output"].clone(), event["is_error"].clone()))
        .collect();
    assert_eq!(
        results,
        vec![(
            "pipe: a FIFO (named pipe), not a regular file; refused without reading it".into(),
            true.into()
        )]
    );
}

/// A cloned project whose `.claude/agents` links a definition to `/dev/zero` and holds a FIFO:
/// `delegate` and `run` there still start (each bad file is only a catalog warning).
#[test]
fn delegate_and_run_go_on_in_a_project_with_special_agent_files() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    let agents = project.join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::os::unix::fs::symlink("/dev/zero", agents.join("z.md")).unwrap();
    fifo(&agents, "f.md");
    let preset = super::support::preset("offline.yaml");
    for command in ["delegate", "run"] {
        let output = bounded(
            home.path(),
            &[
                &command,
                &"--offline",
                &"--cwd",
                &project,
                &"--preset",
                &preset,
                &"Say hello from the subagent, please",
            ],
        );
        assert_eq!(
            output.status.code(),
            Some(0),
            "{command}: {}",
            stderr(&output)
        );
    }
}
