//! The README's "A 60-second tour", walked as written in a fresh project outside the clone: every
//! `subagent …` command of the section (its shell blocks and its prose) is read from README.md
//! and run through the real binary, and each is held to what the README says of it. Commands
//! that need a model key run against the fake model server (a copy of the standard preset with
//! its `base_url` pointed there); the Claude Code and Codex ones run the real pinned CLIs behind
//! the `e2e` feature, and are reported as skipped without it.

use std::path::PathBuf;
use std::process::Output;

use pretty_assertions::assert_eq;

use super::support::{copy_dir, root, shell_words, stderr, stdout, subagent};

mod keyed;
mod offline;

/// One command of the tour.
#[derive(Clone, Debug)]
struct TourCommand {
    /// The line as the README prints it.
    line: String,
    /// What it pipes into `subagent` (`echo "…" | subagent …`).
    stdin: Option<String>,
    /// The arguments after `subagent`.
    args: Vec<String>,
    /// Its trailing `# comment`, if any.
    comment: Option<String>,
}

/// What the README promises of a command: one check each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Help,
    DelegateOffline,
    DelegateSpawn,
    DelegateSchema,
    DelegateClaudeCode,
    Run,
    Providers,
    ProvidersJson,
    DelegateCodex,
    Agents,
    PresetSchema,
    PresetValidate,
}

/// The tour section of the README: its commands and the definition and preset it shows.
struct Tour {
    commands: Vec<(Step, TourCommand)>,
    /// The agent definition (the `markdown` block).
    agent: String,
    /// The preset (the `yaml` block).
    preset: String,
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

/// The lines of the README section headed `## {title}`, up to the next `## `.
fn section(text: &str, title: &str) -> Vec<String> {
    let heading = format!("## {title}");
    let mut lines = text.lines().skip_while(|line| *line != heading);
    assert!(lines.next().is_some(), "README.md has no `{heading}`");
    lines
        .take_while(|line| !line.starts_with("## "))
        .map(str::to_owned)
        .collect()
}

/// `line` without a `# comment` outside quotes, and the comment.
fn split_comment(line: &str) -> (&str, Option<String>) {
    let mut quoted = false;
    let mut previous = ' ';
    for (at, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '#' if !quoted && previous.is_whitespace() => {
                return (line[..at].trim(), Some(line[at + 1..].trim().to_owned()));
            }
            _ => {}
        }
        previous = c;
    }
    (line.trim(), None)
}

/// A shell line of the tour as a command; `None` for a line that runs no `subagent`.
fn command(line: &str) -> Option<TourCommand> {
    let (text, comment) = split_comment(line);
    let (stdin, text) = match text.split_once(" | ") {
        Some((echo, rest)) => {
            let words = shell_words(echo);
            assert_eq!(words[0], "echo", "only `echo … |` is understood: {line}");
            (Some(format!("{}\n", words[1..].join(" "))), rest)
        }
        None => (None, text),
    };
    let args = text.strip_prefix("subagent ")?;
    Some(TourCommand {
        line: line.to_owned(),
        stdin,
        args: shell_words(args),
        comment,
    })
}

/// The check a command gets, from its arguments; a command the walk does not know fails.
fn step(command: &TourCommand) -> Step {
    let args = &command.args;
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|at| args.get(at + 1))
            .map(String::as_str)
    };
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["--help"] => Step::Help,
        ["delegate", ..] if has("--output-schema") => Step::DelegateSchema,
        ["delegate", ..] => match (value("--provider"), value("--preset")) {
            (Some("claude-code"), _) => Step::DelegateClaudeCode,
            (Some("codex"), _) => Step::DelegateCodex,
            (Some("spawn"), None) => Step::DelegateSpawn,
            (None, Some("presets/offline.yaml")) => Step::DelegateOffline,
            _ => panic!("a tour command this walk does not check: {}", command.line),
        },
        ["run", ..] => Step::Run,
        ["providers", ..] if has("--json") => Step::ProvidersJson,
        ["providers", ..] => Step::Providers,
        ["agents"] => Step::Agents,
        ["preset", "schema"] => Step::PresetSchema,
        ["preset", "validate", _] => Step::PresetValidate,
        _ => panic!("a tour command this walk does not check: {}", command.line),
    }
}

/// The code spans of a paragraph that run `subagent`.
fn prose_commands(paragraph: &str) -> Vec<TourCommand> {
    paragraph
        .split('`')
        .skip(1)
        .step_by(2)
        .filter_map(command)
        .collect()
}

/// Reads the tour from the README.
fn tour() -> Tour {
    let mut commands = Vec::new();
    let mut blocks: Vec<(String, String)> = Vec::new();
    let mut fence: Option<(String, String)> = None;
    let mut paragraph = String::new();
    for line in section(&readme(), "A 60-second tour") {
        match (&mut fence, line.strip_prefix("```")) {
            (None, Some(info)) => {
                commands.extend(prose_commands(&std::mem::take(&mut paragraph)));
                fence = Some((info.to_owned(), String::new()));
            }
            (Some(_), Some("")) => blocks.extend(fence.take()),
            (Some((info, body)), _) => {
                if info == "sh" {
                    commands.extend(command(&line));
                }
                body.push_str(&line);
                body.push('\n');
            }
            (None, None) if line.trim().is_empty() => {
                commands.extend(prose_commands(&std::mem::take(&mut paragraph)));
            }
            (None, None) => {
                paragraph.push_str(&line);
                paragraph.push(' ');
            }
        }
    }
    commands.extend(prose_commands(&paragraph));
    let block = |info: &str| {
        let found: Vec<&String> = blocks
            .iter()
            .filter(|(i, _)| i == info)
            .map(|(_, body)| body)
            .collect();
        assert_eq!(found.len(), 1, "the tour's `{info}` blocks");
        found[0].clone()
    };
    Tour {
        agent: block("markdown"),
        preset: block("yaml"),
        commands: commands.into_iter().map(|c| (step(&c), c)).collect(),
    }
}

impl Tour {
    /// The one command of this step.
    fn command(&self, step: Step) -> &TourCommand {
        let found: Vec<&TourCommand> = self
            .commands
            .iter()
            .filter(|(s, _)| *s == step)
            .map(|(_, c)| c)
            .collect();
        assert_eq!(found.len(), 1, "{step:?}: {found:?}");
        found[0]
    }
}

/// The capability table of the README: provider → column → yes.
fn readme_capabilities() -> Vec<(String, Vec<(String, bool)>)> {
    let rows: Vec<Vec<String>> = section(&readme(), "Capability table")
        .iter()
        .filter(|line| line.starts_with('|') && !line.starts_with("| ---"))
        .map(|line| {
            line.trim_matches('|')
                .split('|')
                .map(|cell| cell.trim().to_owned())
                .collect()
        })
        .collect();
    let (header, rows) = rows.split_first().unwrap();
    assert_eq!(header[0], "provider");
    rows.iter()
        .map(|row| {
            let cells = header[1..]
                .iter()
                .zip(&row[1..])
                .map(|(column, cell)| {
                    assert!(cell == "yes" || cell == "-", "README cell {cell:?}");
                    (column.clone(), cell == "yes")
                })
                .collect();
            (row[0].clone(), cells)
        })
        .collect()
}

/// A fresh project outside the clone, set up as the tour's reader would have it: a git repo
/// with a few Rust files in `src/`, a copy of `presets/`, the README's agent definition in
/// `.subagents/agents/reviewer.md`, the README's preset in `preset.yaml`, a `schema.json`.
struct Project {
    /// Holds the directory (removed on drop).
    _dir: tempfile::TempDir,
    /// The project (the commands' working directory).
    path: PathBuf,
    /// `HOME`.
    home: PathBuf,
}

/// The schema file the tour's `--output-schema` names (the README leaves its content to you).
const SCHEMA: &str =
    r#"{"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}"#;

impl Project {
    fn new(tour: &Tour) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("subagent-readme-tour-")
            .tempdir()
            .unwrap();
        assert!(!dir.path().starts_with(root()), "outside the clone");
        let home = dir.path().join("home");
        let path = dir.path().join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(path.join("src")).unwrap();
        let path = std::fs::canonicalize(path).unwrap();
        for (file, text) in [
            (
                "src/main.rs",
                "mod config;\n\nfn main() {\n    println!(\"{:?}\", config::parse_config(\"a=1\"));\n}\n",
            ),
            (
                "src/config.rs",
                "pub fn parse_config(text: &str) -> Vec<(String, String)> {\n    text.lines()\n        .filter_map(|l| l.split_once('='))\n        .map(|(k, v)| (k.into(), v.into()))\n        .collect()\n}\n",
            ),
            ("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n"),
            ("schema.json", SCHEMA),
            ("preset.yaml", &tour.preset),
        ] {
            std::fs::write(path.join(file), text).unwrap();
        }
        copy_dir(&root().join("presets"), &path.join("presets"));
        let agents = path.join(".subagents/agents");
        std::fs::create_dir_all(&agents).unwrap();
        std::fs::write(agents.join("reviewer.md"), &tour.agent).unwrap();
        let project = Self {
            _dir: dir,
            path,
            home,
        };
        project.git(&["init", "-q"]);
        project.git(&["add", "."]);
        project.git(&["commit", "-q", "-m", "a config parser"]);
        project
    }

    fn git(&self, args: &[&str]) {
        let status = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=tour",
                "-c",
                "user.email=tour@example.invalid",
            ])
            .args(args)
            .current_dir(&self.path)
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    /// Runs `subagent` with `args` in the project: no keys but those in `env`.
    fn run(&self, command: &TourCommand, args: &[String], env: &[(&str, &str)]) -> Output {
        let mut subagent = subagent(&self.home);
        subagent.current_dir(&self.path).args(args);
        for (name, value) in env {
            subagent.env(name, value);
        }
        if let Some(text) = &command.stdin {
            subagent.write_stdin(text.as_str());
        }
        subagent.output().unwrap()
    }

    /// Runs the tour's command as written, plus `extra` arguments after its subcommand.
    fn tour(&self, command: &TourCommand, extra: &[&str], env: &[(&str, &str)]) -> Output {
        let mut args = command.args.clone();
        let at = usize::from(args[0] == "preset") + 1;
        args.splice(at..at, extra.iter().map(|a| (*a).to_owned()));
        self.run(command, &args, env)
    }
}

/// Progress text with its elapsed times (`0.4s`) written `Ts`.
fn untimed(text: &str) -> String {
    let time = |word: &str| {
        word.strip_suffix('s')
            .is_some_and(|n| n.contains('.') && n.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    text.lines()
        .map(|line| {
            line.split(' ')
                .map(|word| match word.strip_suffix(']') {
                    Some(inner) if time(inner) => "Ts]",
                    _ if time(word) => "Ts",
                    _ => word,
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .map(|line| line + "\n")
        .collect()
}

/// Asserts the exit code, with both streams in the message.
fn assert_exit(output: &Output, code: i32, command: &TourCommand) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "{}\nstdout: {}\nstderr: {}",
        command.line,
        stdout(output),
        stderr(output)
    );
}

const OFFLINE_DEMO: &str =
    "offline: the scripted model answers from the built-in offline demo scenario (no network)";
const NO_KEY: &str = "error[MISSING_API_KEY]: ANTHROPIC_API_KEY is not set: the preset's model (anthropic claude-sonnet-4-5) needs it. Set it, or give --offline to use the scripted offline model (no network)";
const OFFLINE_FLAG: &str = "offline: --offline given, the scripted model answers (no network)";
const STANDARD: &str = "preset: built-in standard (no --preset, SUBAGENT_PRESET or .subagents/preset.yaml up to the repository root)";
const FALLBACK_ANSWER: &str = "[offline scripted model] This is the offline demo's scripted answer (no network). Ask me to delegate to see a subagent run.";

#[test]
fn the_tour_has_the_commands_this_walk_checks() {
    let tour = tour();
    let steps: Vec<Step> = tour.commands.iter().map(|(step, _)| *step).collect();
    assert_eq!(
        steps,
        [
            Step::Help,
            Step::DelegateOffline,
            Step::DelegateSpawn,
            Step::DelegateSchema,
            Step::DelegateClaudeCode,
            Step::Run,
            Step::Providers,
            Step::ProvidersJson,
            Step::DelegateCodex,
            Step::Agents,
            Step::PresetSchema,
            Step::PresetValidate,
        ],
        "{:#?}",
        tour.commands
    );
    // Why the README says the schema command needs a key; what the claude-code one pipes.
    assert_eq!(
        tour.command(Step::DelegateSchema).comment.as_deref(),
        Some("needs a key: the offline demo cannot follow an output schema")
    );
    assert_eq!(
        tour.command(Step::DelegateClaudeCode).stdin.as_deref(),
        Some("Review the last commit\n")
    );
    // What the walk holds the README to, besides its commands (whitespace as in a paragraph).
    let readme = readme().split_whitespace().collect::<Vec<_>>().join(" ");
    for said in [
        "`-v` (or `RUST_LOG`) logs what happens inside on stderr",
        "answer on stdout, live progress on stderr; `--json` prints events as JSON lines, then \
         the outcome object",
        "edits and commands are asked on a terminal; `--permission-mode \
         accept-edits|plan|dont-ask|bypass` changes that; `--offline` keeps the scripted model \
         even with a key set",
        "`cargo xtask install-clis` puts them in `target/clis/node_modules/.bin`",
        "(built-ins `general-purpose`, `explore`, `plan`, then yours) with where each came from",
    ] {
        assert!(readme.contains(said), "the README no longer says: {said}");
    }
}

/// Without the `e2e` feature the product commands are there, and said to be skipped.
#[cfg(not(feature = "e2e"))]
#[test]
fn the_tour_product_commands_need_the_e2e_feature() {
    let tour = tour();
    for step in [Step::DelegateClaudeCode, Step::DelegateCodex] {
        let command = tour.command(step);
        assert_eq!(
            command.args[..3],
            ["delegate", "--preset", "presets/cross-product.yaml"],
            "{}",
            command.line
        );
        eprintln!(
            "readme tour: skipped `{}`: it runs the real product CLI; build with `--features e2e` \
             after `cargo xtask install-clis` (cargo xtask test does)",
            command.line
        );
    }
}

/// The README's "Set up" section: its two commands work on a fresh clone as written. The main
/// job's `cargo run -p subagent-cli -- …` must resolve to one binary (the package has two: cargo
/// refuses "could not determine which binary to run" without a `default-run`), and what it runs
/// must answer offline; the test command must be what CI runs. (`cargo xtask test` also runs the
/// main-job line itself, verbatim, through `bash`, once the tests have passed.)
#[test]
fn the_set_up_commands_run_as_written() {
    let lines: Vec<String> = section(
        &readme(),
        "Set up (fresh machine: Rust 1.95, Node 20 + npm)",
    )
    .into_iter()
    .scan(false, |fenced, line| {
        let fence = line.starts_with("```");
        let inside = *fenced && !fence;
        if fence {
            *fenced = !*fenced;
        }
        Some(inside.then_some(line))
    })
    .flatten()
    .filter(|line| !line.trim().is_empty())
    .collect();
    let [main_job, tests] = lines.as_slice() else {
        panic!("the set-up section shows two commands: {lines:?}");
    };
    assert_eq!(tests, "cargo xtask test");
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|line| line == "exec cargo xtask test"),
        ".ci/run runs the README's test command: {ci}"
    );

    let words = shell_words(main_job);
    let at = words.iter().position(|w| w == "--").unwrap();
    assert_eq!(
        words[..at],
        ["cargo", "run", "-p", "subagent-cli"],
        "{main_job}"
    );
    // What `cargo run -p subagent-cli` runs: the package's only binary, else its `default-run`.
    let metadata = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(metadata.status.success(), "{}", stderr(&metadata));
    let metadata: serde_json::Value = serde_json::from_slice(&metadata.stdout).unwrap();
    let package = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "subagent-cli")
        .unwrap();
    let binaries: Vec<&str> = package["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let runs = match (binaries.as_slice(), package["default_run"].as_str()) {
        ([only], _) => *only,
        (_, Some(default)) => default,
        _ => panic!(
            "`{main_job}` fails as written: subagent-cli has the binaries {binaries:?} and no `default-run`"
        ),
    };
    assert_eq!(runs, "subagent");

    // In a fresh clone (the repository's root as the working directory), with no key.
    let home = tempfile::tempdir().unwrap();
    let output = subagent(home.path())
        .current_dir(root())
        .args(&words[at + 1..])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "[offline scripted model] The subagent finished and reported back: its report is the delegation's result.\n"
    );
}
