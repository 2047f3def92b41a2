//! A binary of one's own: the `subagent` command with an extra provider kind, through the CLI's
//! library entry (`subagent_cli::main_with`), without forking the project.
//!
//! The test binary plays that binary: [`own_binary_main`] is its `main`, run in a child process
//! of this same test binary that gets the command line in [`ENTRY_ARGS`] (set on that child
//! only). Its provider spawns no process, so the child needs no guardian (a real binary calls
//! `subagent_process::guard::init()` first, as the guide says).

use std::sync::Arc;

use async_trait::async_trait;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_core::{
    BuildContext, Capabilities, Outcome, ProviderFactory, Run, RunEvent, StartRequest,
    SubagentProvider,
};

use super::support::{stderr, stdout};

/// The variable carrying the child's command line, as a JSON list.
const ENTRY_ARGS: &str = "SUBAGENT_TEST_ENTRY_ARGS";

/// Answers with the prompt reversed.
struct Mirror {
    name: String,
}

#[async_trait]
impl SubagentProvider for Mirror {
    fn name(&self) -> &str {
        &self.name
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
    }

    async fn start(&self, request: StartRequest) -> subagent_core::Result<Run> {
        let text: String = request.prompt_text().chars().rev().collect();
        let (sender, run) = Run::channel(&self.name, &request);
        sender.emit(RunEvent::Text {
            text: text.clone(),
            parent_tool_use_id: None,
        });
        sender.finish(Outcome::completed(text));
        Ok(run)
    }
}

/// A kind whose rows must say something (its config has a required field).
const NEEDS_CONFIG: &str = "needs-config";

/// Builds [`Mirror`]s under the kind it is given (`mirror`, [`NEEDS_CONFIG`]).
struct MirrorFactory(&'static str);

impl ProviderFactory for MirrorFactory {
    fn kind(&self) -> &str {
        self.0
    }

    fn summary(&self) -> &str {
        "answers with the prompt reversed"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
    }

    fn config_schema(&self) -> schemars::Schema {
        if self.0 == NEEDS_CONFIG {
            schemars::json_schema!({
                "type": "object",
                "properties": {"target": {"type": "string"}},
                "required": ["target"]
            })
        } else {
            schemars::json_schema!({"type": "object", "additionalProperties": false})
        }
    }

    fn build(
        &self,
        name: &str,
        _config: &Value,
        _context: &BuildContext,
    ) -> subagent_core::Result<Arc<dyn SubagentProvider>> {
        Ok(Arc::new(Mirror {
            name: name.to_owned(),
        }))
    }
}

/// Not a test of its own: the `main` of the user's binary, when run as the child of the tests
/// below (without [`ENTRY_ARGS`] it does nothing).
#[test]
fn own_binary_main() {
    let Ok(args) = std::env::var(ENTRY_ARGS) else {
        return;
    };
    let args: Vec<String> = serde_json::from_str(&args).unwrap();
    let code = subagent_cli::run_with(
        args,
        vec![
            Arc::new(MirrorFactory("mirror")),
            Arc::new(MirrorFactory(NEEDS_CONFIG)),
            Arc::new(super::shell_echo::ShellEchoFactory::new()),
        ],
    );
    let code = if code == std::process::ExitCode::SUCCESS {
        0
    } else if code == std::process::ExitCode::from(2) {
        2
    } else {
        1
    };
    std::process::exit(code);
}

/// Runs the user's binary with `args` in `dir`, clean of API keys.
fn own_binary(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut command_line = vec!["my-subagent"];
    command_line.extend_from_slice(args);
    std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "suite::embedding::own_binary_main",
            "--nocapture",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env(ENTRY_ARGS, serde_json::to_string(&command_line).unwrap())
        .current_dir(dir)
        .output()
        .unwrap()
}

/// The outcome line of the user's binary run with `args` in `dir`, the run asserted a success.
fn own_outcome(dir: &std::path::Path, args: &[&str]) -> Value {
    let output = own_binary(dir, args);
    assert!(output.status.success(), "{}", stderr(&output));
    json_lines(&output)
        .into_iter()
        .find(|line| line["type"] == "outcome")
        .unwrap_or_else(|| panic!("no outcome in {}", stdout(&output)))
}

/// The outcome of `delegate --offline --json --provider PROVIDER PROMPT` by the user's binary
/// in `dir`.
fn own_delegate(dir: &std::path::Path, provider: &str, prompt: &str) -> Value {
    let args = [
        "delegate",
        "--offline",
        "--json",
        "--provider",
        provider,
        prompt,
    ];
    own_outcome(dir, &args)
}

/// `providers ARGS` of the user's binary in `dir`, asserted a success.
fn own_providers(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    let output = own_binary(dir, &[&["providers"], args].concat());
    assert!(output.status.success(), "{}", stderr(&output));
    output
}

/// The JSON lines of a child's stdout (the test harness's own lines are not JSON).
fn json_lines(output: &std::process::Output) -> Vec<Value> {
    stdout(output)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

const PRESET: &str =
    "version: 1\nproviders:\n  - name: mine\n    kind: mirror\n  - name: spawn\n    kind: spawn\n";

#[test]
fn a_binary_of_ones_own_delegates_to_its_extra_provider() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("preset.yaml"), PRESET).unwrap();
    let outcome = own_outcome(
        dir.path(),
        &[
            "delegate",
            "--preset",
            "preset.yaml",
            "--offline",
            "--json",
            "--provider",
            "mine",
            "hello there",
        ],
    );
    assert_eq!(
        (&outcome["provider"], &outcome["status"], &outcome["text"]),
        (&json!("mine"), &json!("completed"), &json!("ereht olleh"))
    );

    // The listing shows the extra kind beside the built-in ones.
    let output = own_providers(dir.path(), &["--preset", "preset.yaml"]);
    assert_eq!(
        rows(&output, &["mine", "spawn"]),
        [["mine", "mirror"], ["spawn", "spawn"]]
    );
}

#[test]
fn an_extra_factory_of_a_known_kind_is_refused() {
    // Refused before any argument is acted on: nothing is read, nothing runs.
    for extra in [["mirror", "mirror"], ["spawn", "mirror"]] {
        let factories: Vec<Arc<dyn ProviderFactory>> = extra
            .into_iter()
            .map(|kind| Arc::new(MirrorFactory(kind)) as Arc<dyn ProviderFactory>)
            .collect();
        let code = subagent_cli::run_with(["my-subagent", "providers"], factories);
        assert_eq!(code, std::process::ExitCode::from(2), "{extra:?}");
    }
}

/// The first two words of each line of `providers` that names a row in `names`.
fn rows(output: &std::process::Output, names: &[&str]) -> Vec<Vec<String>> {
    stdout(output)
        .lines()
        .map(|line| line.split_whitespace().take(2).map(str::to_owned).collect())
        .filter(|row: &Vec<String>| {
            row.first()
                .is_some_and(|name| names.contains(&name.as_str()))
        })
        .collect()
}

#[test]
fn an_extra_kind_runs_under_its_own_name_without_a_row_of_ones_own() {
    let dir = tempfile::tempdir().unwrap();
    // The built-in preset has no row of the kind: the kind gets one, named after it, with its
    // default config.
    let outcome = own_delegate(dir.path(), "mirror", "hello");
    assert_eq!(
        (&outcome["provider"], &outcome["status"], &outcome["text"]),
        (&json!("mirror"), &json!("completed"), &json!("olleh"))
    );
    // A kind whose default config is not a valid one gets no row: a preset must configure it.
    let output = own_providers(dir.path(), &[]);
    assert_eq!(
        rows(&output, &["mirror", NEEDS_CONFIG]),
        [["mirror", "mirror"]],
        "{}",
        stdout(&output)
    );
    // So does a preset of one's own without one; a preset with a row of the kind keeps its own.
    std::fs::write(
        dir.path().join("spawn-only.yaml"),
        "version: 1\nproviders:\n  - name: spawn\n    kind: spawn\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("preset.yaml"), PRESET).unwrap();
    for (preset, expected) in [
        (
            "spawn-only.yaml",
            vec![["spawn", "spawn"], ["mirror", "mirror"]],
        ),
        ("preset.yaml", vec![["mine", "mirror"], ["spawn", "spawn"]]),
    ] {
        let output = own_providers(dir.path(), &["--preset", preset]);
        assert_eq!(
            rows(&output, &["mine", "spawn", "mirror"]),
            expected,
            "{preset}: {}",
            stdout(&output)
        );
    }
}

#[test]
fn the_newcomers_shell_echo_runs_under_the_built_in_preset() {
    // The guide's path with no preset of one's own: `--provider shell-echo` is its default row.
    let dir = tempfile::tempdir().unwrap();
    let outcome = own_delegate(
        dir.path(),
        "shell-echo",
        "echo hello from $(basename \"$PWD\")",
    );
    let here = dir.path().file_name().unwrap().to_string_lossy();
    assert_eq!(
        (&outcome["provider"], &outcome["status"], &outcome["text"]),
        (
            &json!("shell-echo"),
            &json!("completed"),
            &json!(format!("hello from {here}"))
        )
    );
}
