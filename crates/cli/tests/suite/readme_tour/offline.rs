//! The tour without a key: every command as written, each held to what the README says.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::super::support::{json_lines, root, stderr, stdout};
use super::{
    FALLBACK_ANSWER, NO_KEY, OFFLINE_DEMO, OFFLINE_FLAG, Project, STANDARD, Step, Tour,
    TourCommand, assert_exit, readme_capabilities, section, split_comment, tour, untimed,
};

/// Every command of the tour, with no key set; the product commands need the real CLIs.
#[test]
fn the_tour_walks_offline_in_a_fresh_project() {
    let tour = tour();
    let project = Project::new(&tour);
    for (step, command) in &tour.commands {
        match step {
            Step::Help => help(&project, command),
            Step::DelegateOffline => delegate_offline(&project, command),
            Step::DelegateSpawn => {
                needs_the_key(&project, command);
                let output = project.tour(command, &["--offline"], &[]);
                assert_exit(&output, 0, command);
                assert_eq!(stdout(&output), format!("{FALLBACK_ANSWER}\n"));
                assert_eq!(
                    stderr(&output).lines().take(2).collect::<Vec<_>>(),
                    [STANDARD, OFFLINE_FLAG],
                    "{}",
                    command.line
                );
            }
            Step::DelegateSchema => schema_offline(&project, command),
            // They run the real CLIs: the_tour_runs_claude_code_and_codex (e2e), else
            // the_tour_product_commands_need_the_e2e_feature says they were skipped.
            Step::DelegateClaudeCode | Step::DelegateCodex => {}
            Step::Run => run_offline(&project, command),
            Step::Providers => providers(&project, command),
            Step::ProvidersJson => providers_json(&project, command),
            Step::Agents => agents(&project, &tour, command),
            Step::PresetSchema => preset_schema(&project, &tour, command),
            Step::PresetValidate => preset_validate(&project, command),
        }
    }
}

/// `subagent --help` lists the commands and the exit codes of docs/cli.md.
fn help(project: &Project, command: &TourCommand) {
    let output = project.tour(command, &[], &[]);
    assert_exit(&output, 0, command);
    let text = stdout(&output);
    let commands: Vec<&str> = text
        .lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.is_empty())
        // A command's line is indented by two spaces; a wrapped description (clap wraps at the
        // terminal's width, 100 columns without one) by more.
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert_eq!(
        commands,
        [
            "delegate",
            "run",
            "acp",
            "providers",
            "agents",
            "skills",
            "serve",
            "mcp",
            "worker",
            "preset",
            "sessions",
            "settings",
            "trust",
            "mcp-servers",
            "doctor",
            "ps",
            "logs",
            "ui",
            "stop",
            "completions",
            "man",
            "help"
        ]
    );
    let numbers = |text: &str| {
        let mut found: Vec<u32> = text
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|n| n.parse().ok())
            .collect();
        found.sort_unstable();
        found
    };
    let (_, codes) = text.split_once("Exit codes:").unwrap();
    let cli = std::fs::read_to_string(root().join("docs/cli.md")).unwrap();
    let documented: String = section(&cli, "Exit codes")
        .iter()
        .filter_map(|line| line.strip_prefix("| "))
        .filter_map(|line| line.split(" |").next())
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(numbers(codes), numbers(&documented));
}

/// The offline delegate: the answer on stdout, the announcement and progress on stderr, logs
/// with `-v` or `RUST_LOG`, JSON lines with `--json`.
fn delegate_offline(project: &Project, command: &TourCommand) {
    let output = project.tour(command, &[], &[]);
    assert_exit(&output, 0, command);
    let answer = "[offline scripted model] Hello from the subagent.\n";
    assert_eq!(stdout(&output), answer);
    assert_eq!(
        untimed(&super::super::support::session_as_s(&stderr(&output))),
        format!(
            "preset: presets/offline.yaml (--preset)\n{OFFLINE_DEMO}\n[spawn Ts] started: Say hello \
             from the subagent\n[spawn Ts] finished: completed\ncompleted · Ts · 0 tool uses · 10 \
             in / 5 out tokens\nsession: S (continue it: subagent delegate --preset \
             presets/offline.yaml --provider spawn --resume S PROMPT)\n"
        )
    );

    for (extra, env) in [(&["-v"][..], &[][..]), (&[], &[("RUST_LOG", "debug")])] {
        let logged = project.tour(command, extra, env);
        assert_exit(&logged, 0, command);
        assert_eq!(stdout(&logged), answer, "{extra:?} {env:?}");
        let err = stderr(&logged);
        assert!(
            err.lines()
                .any(|line| line.contains(" DEBUG subagent_cli::setup: preset loaded")),
            "{extra:?} {env:?}: {err}"
        );
    }

    let output = project.tour(command, &["--json"], &[]);
    assert_exit(&output, 0, command);
    assert_eq!(stderr(&output), "preset: presets/offline.yaml (--preset)\n");
    let lines = json_lines(&output);
    let mut types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    types.dedup();
    assert_eq!(
        types,
        ["notice", "started", "text", "usage", "finished", "outcome"]
    );
    assert_eq!(lines[0], json!({"type": "notice", "message": OFFLINE_DEMO}));
    let outcome = lines.last().unwrap();
    assert_eq!(
        ["type", "provider", "status", "text"].map(|key| &outcome[key]),
        [
            &json!("outcome"),
            &json!("spawn"),
            &json!("completed"),
            &json!(answer.trim_end())
        ]
    );
}

/// A command on the standard preset's model, with no key: refused before anything runs, as
/// the README's comment says, with its code and exit 2.
fn needs_the_key(project: &Project, command: &TourCommand) {
    assert!(
        command
            .comment
            .as_deref()
            .is_some_and(|c| c.contains("needs")),
        "{}",
        command.line
    );
    let output = project.tour(command, &[], &[]);
    assert_exit(&output, 2, command);
    assert_eq!(stdout(&output), "");
    assert_eq!(stderr(&output), format!("{STANDARD}\n{NO_KEY}\n"));
}

/// With no key, the schema's command needs one; with `--offline`, it fails in the README's
/// words: nothing on stdout, exit code 1.
fn schema_offline(project: &Project, command: &TourCommand) {
    needs_the_key(project, command);
    let output = project.tour(command, &["--offline"], &[]);
    assert_exit(&output, 1, command);
    assert_eq!(stdout(&output), "");
    assert_eq!(
        untimed(&super::super::support::session_as_s(&stderr(&output))),
        format!(
            "{STANDARD}\n{OFFLINE_FLAG}\n[spawn Ts] started: explore: Count the Rust files\n[spawn Ts] finished: \
             failed\ntext of the failed run: {FALLBACK_ANSWER}\nfailed · Ts · 0 tool uses · 10 in \
             / 5 out tokens\ndiagnostic: model call failed: the offline scripted model has no \
             answer for this turn: it plays a fixed demo (say hello, delegate a hello) and cannot \
             follow other instructions, such as an output schema. Set ANTHROPIC_API_KEY or \
             OPENAI_API_KEY to use a real model.\nsession: S (continue it: subagent delegate \
             --offline --provider spawn --resume S PROMPT)\n"
        )
    );
}

/// With no key, the parent needs one; with `--offline`, it delegates the demo's hello.
fn run_offline(project: &Project, command: &TourCommand) {
    needs_the_key(project, command);
    let output = project.tour(command, &["--offline"], &[]);
    assert_exit(&output, 0, command);
    assert_eq!(
        stdout(&output),
        "[offline scripted model] The subagent finished and reported back: its report is the \
         delegation's result.\n"
    );
    let err = super::super::support::session_as_s(&stderr(&output));
    assert_eq!(
        err.lines().take(2).collect::<Vec<_>>(),
        [STANDARD, OFFLINE_FLAG]
    );
    let tail: Vec<&str> = err.lines().rev().take(3).collect();
    assert_eq!(
        tail,
        [
            "session: S (continue it: subagent run --offline --resume S PROMPT)",
            "  subagent [general-purpose on spawn] “offline demo subtask” → ok: [offline scripted model] \
             Hello from the subagent.",
            "delegations: 1",
        ],
        "{err}"
    );
}

/// The capability table of the standard preset is the README's, disabled rows marked.
fn providers(project: &Project, command: &TourCommand) {
    let output = project.tour(command, &[], &[]);
    assert_exit(&output, 0, command);
    assert_eq!(stderr(&output), format!("{STANDARD}\n"));
    let text = stdout(&output);
    let mut lines = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>());
    let header = lines.next().unwrap();
    let rows: Vec<Vec<&str>> = lines.collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let table: Vec<(String, Vec<(String, bool)>)> = readme_capabilities()
        .iter()
        .map(|(provider, cells)| {
            let row = rows.iter().find(|r| r[0] == provider).unwrap();
            let cells = cells
                .iter()
                .map(|(name, _)| (name.clone(), row[column(name)] == "yes"))
                .collect();
            (provider.clone(), cells)
        })
        .collect();
    assert_eq!(table, readme_capabilities(), "the README's table: {text}");
    let states: Vec<(&str, &str)> = rows.iter().map(|r| (r[0], r[column("state")])).collect();
    assert_eq!(
        states,
        [
            ("spawn", "enabled"),
            ("fork", "enabled"),
            ("claude-code", "disabled"),
            ("codex", "disabled"),
        ]
    );
}

/// `--json` of the cross-product preset: every row enabled, the README's capabilities.
fn providers_json(project: &Project, command: &TourCommand) {
    let output = project.tour(command, &[], &[]);
    assert_exit(&output, 0, command);
    let rows: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let rows = rows.as_array().unwrap();
    let states: Vec<(&str, bool)> = rows
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap(),
                r["disabled"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            ("spawn", false),
            ("fork", false),
            ("claude-code", false),
            ("codex", false),
            ("codex-acp", false),
            ("remote", true),
            ("workers", true)
        ]
    );
    let table: Vec<(String, Vec<(String, bool)>)> = readme_capabilities()
        .iter()
        .map(|(provider, cells)| {
            let row = rows
                .iter()
                .find(|r| r["name"] == provider.as_str())
                .unwrap();
            let cells = cells
                .iter()
                .map(|(name, _)| {
                    let value = row["capabilities"][name].as_bool();
                    (
                        name.clone(),
                        value.unwrap_or_else(|| panic!("{name}: {row}")),
                    )
                })
                .collect();
            (provider.clone(), cells)
        })
        .collect();
    assert_eq!(table, readme_capabilities());
}

/// The frontmatter fields of the README's definition (`key: value`, comments dropped) and its
/// body.
fn frontmatter(definition: &str) -> (Vec<(String, String)>, String) {
    let rest = definition.strip_prefix("---\n").unwrap();
    let (head, body) = rest.split_once("---\n").unwrap();
    let fields = head
        .lines()
        .map(|line| {
            let (key, value) = line.split_once(':').unwrap();
            let (value, _) = split_comment(value);
            (key.to_owned(), value.to_owned())
        })
        .collect();
    (fields, body.trim().to_owned())
}

/// `subagent agents`: the built-ins, then the README's reviewer from the project, no warnings;
/// `--agent reviewer` runs it.
fn agents(project: &Project, tour: &Tour, command: &TourCommand) {
    let output = project.tour(command, &[], &[]);
    assert_exit(&output, 0, command);
    assert_eq!(
        stderr(&output),
        format!("{STANDARD}\n"),
        "the README's definition has no warnings"
    );
    let text = stdout(&output);
    let names: Vec<&str> = text
        .lines()
        .skip(1)
        .filter(|line| !line.starts_with(' '))
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert_eq!(names, ["general-purpose", "explore", "plan", "reviewer"]);
    let (fields, prompt) = frontmatter(&tour.agent);
    let field = |key: &str| {
        fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .unwrap()
    };
    let file = project.path.join(".subagents/agents/reviewer.md");
    let row: Vec<String> = text
        .lines()
        .skip_while(|line| !line.starts_with("reviewer "))
        .take(2)
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        row,
        [
            format!(
                "reviewer {} project {}",
                field("provider"),
                field("description")
            ),
            format!("from {}", file.display()),
        ]
    );

    let output = project.tour(command, &["--json"], &[]);
    assert_exit(&output, 0, command);
    let catalog: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let reviewer = catalog["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["definition"])
        .find(|d| d["name"] == "reviewer")
        .unwrap();
    let keys = [
        "name",
        "description",
        "tools",
        "max_turns",
        "provider",
        "source",
        "prompt",
    ];
    let tools: Vec<&str> = field("tools").split(", ").collect();
    assert_eq!(
        keys.map(|key| reviewer[key].clone()),
        [
            json!(field("name")),
            json!(field("description")),
            json!(tools),
            json!(field("maxTurns").parse::<u32>().unwrap()),
            json!(field("provider")),
            json!("project"),
            json!(prompt),
        ]
    );
    assert_eq!(catalog["warnings"], json!([]));

    // The definition runs as `--agent reviewer`.
    let delegate = TourCommand {
        line: "subagent delegate --preset presets/offline.yaml --agent reviewer …".into(),
        stdin: None,
        args: Vec::new(),
        comment: None,
    };
    let args = [
        "delegate",
        "--preset",
        "presets/offline.yaml",
        "--agent",
        "reviewer",
        "Say hello from the subagent",
    ]
    .map(str::to_owned);
    let output = project.run(&delegate, &args, &[]);
    assert_exit(&output, 0, &delegate);
    assert!(
        stderr(&output)
            .lines()
            .any(|line| line.ends_with("] started: reviewer: Say hello from the subagent")),
        "{}",
        stderr(&output)
    );
}

/// `subagent preset schema` prints a JSON Schema that knows every top-level key of the README's
/// preset.
fn preset_schema(project: &Project, tour: &Tour, command: &TourCommand) {
    let output = project.tour(command, &[], &[]);
    assert_exit(&output, 0, command);
    assert_eq!(stderr(&output), "");
    let schema: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    let keys: Vec<&str> = tour
        .preset
        .lines()
        .filter(|line| !line.starts_with([' ', '-']))
        .filter_map(|line| line.split_once(':').map(|(key, _)| key))
        .collect();
    assert_eq!(
        keys,
        ["version", "max_depth", "model", "providers", "tools"]
    );
    for key in keys {
        assert!(schema["properties"].get(key).is_some(), "{key}: {schema}");
    }
}

/// The README's preset validates: what it configures, its delegation tools.
fn preset_validate(project: &Project, command: &TourCommand) {
    let mut args = command.args.clone();
    assert_eq!(args.pop().as_deref(), Some("FILE"));
    args.push("preset.yaml".into());
    let output = project.run(command, &args, &[]);
    assert_exit(&output, 0, command);
    assert_eq!(stderr(&output), "");
    let text = stdout(&output);
    assert_eq!(text.lines().next(), Some("preset.yaml: valid"));
    assert_eq!(
        text.lines().last(),
        Some("delegation tools: subagent, claude_code")
    );
    args.push("--json".into());
    let output = project.run(command, &args, &[]);
    assert_exit(&output, 0, command);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let providers: Vec<&Value> = report["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["name"])
        .collect();
    assert_eq!(
        (
            &report["valid"],
            &report["max_depth"],
            providers,
            &report["tools"]
        ),
        (
            &json!(true),
            &json!(3),
            vec![&json!("spawn"), &json!("fork"), &json!("claude-code")],
            &json!(["subagent", "claude_code"])
        )
    );
}

/// The long options of `subagent <command> --help`, without `--help` and `--verbose`.
fn options(project: &Project, command: &[&str]) -> Vec<String> {
    let args: Vec<String> = command
        .iter()
        .chain(&["--help"])
        .map(|a| (*a).to_owned())
        .collect();
    let help = TourCommand {
        line: args.join(" "),
        stdin: None,
        args: Vec::new(),
        comment: None,
    };
    let output = project.run(&help, &args, &[]);
    assert_exit(&output, 0, &help);
    // Option lines only (clap indents them by at most 6): a description wrapped onto lines of
    // its own, indented to the description column, may name another option, as in
    // "(with\n      --password-env)" (whether clap wraps depends on the features the build
    // unifies: the workspace build wraps at 100 columns).
    stdout(&output)
        .lines()
        .filter(|line| line.len() - line.trim_start().len() <= 8)
        .map(str::trim_start)
        .filter(|line| line.starts_with('-'))
        .filter_map(|line| line.split("  ").next())
        .flat_map(|option| option.split([',', ' ']))
        .filter(|word| word.starts_with("--") && !["--help", "--verbose..."].contains(word))
        .map(str::to_owned)
        .collect()
}

/// docs/cli.md's command table and the paragraph above it name the options each command takes,
/// and every option a command takes is in docs/cli.md.
#[test]
fn docs_cli_names_the_options_each_command_takes() {
    let project = Project::new(&tour());
    let cli = std::fs::read_to_string(root().join("docs/cli.md")).unwrap();
    let said: Vec<(Vec<&str>, Vec<&str>)> = cli
        .lines()
        .filter_map(|line| line.strip_prefix("| `subagent "))
        .map(|row| {
            let usage = row.split('`').next().unwrap();
            let words: Vec<&str> = usage.split_whitespace().collect();
            let command = words
                .iter()
                .take_while(|w| {
                    w.starts_with(|c: char| c.is_ascii_lowercase())
                        && w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                })
                .copied()
                .collect();
            let flags = words
                .iter()
                .map(|w| w.trim_matches(['[', ']']))
                .filter(|w| w.starts_with("--"))
                .collect();
            (command, flags)
        })
        .collect();
    let commands: Vec<&Vec<&str>> = said.iter().map(|(command, _)| command).collect();
    assert_eq!(
        commands,
        [
            &vec!["delegate"],
            &vec!["run"],
            &vec!["acp"],
            &vec!["serve"],
            &vec!["mcp"],
            &vec!["worker"],
            &vec!["providers"],
            &vec!["agents"],
            &vec!["skills"],
            &vec!["sessions"],
            &vec!["settings"],
            &vec!["trust"],
            &vec!["preset", "validate"],
            &vec!["preset", "schema"],
            &vec!["mcp-servers"],
            &vec!["doctor"],
            &vec!["ps"],
            &vec!["logs"],
            &vec!["ui"],
            &vec!["stop"],
            &vec!["completions"],
            &vec!["man"],
        ]
    );
    // "Every command that loads a preset takes `--preset FILE`; `delegate`, `run`, `acp`, `mcp`,
    // `worker`, `agents` and `doctor` take `--cwd DIR`; `delegate`, `run`, `acp`, `mcp` and
    // `worker` take `--offline`; `delegate`, `run`, `acp`, `serve`, `mcp` and `worker` take
    // … `--allowedTools RULES`, `--disallowedTools RULES` … and `--settings FILE|JSON`."
    let intro = |command: &[&str]| -> Vec<&'static str> {
        match command {
            ["delegate"] | ["run"] | ["acp"] | ["mcp"] | ["worker"] => vec![
                "--preset",
                "--cwd",
                "--offline",
                "--allowedTools",
                "--disallowedTools",
                "--settings",
            ],
            ["serve"] => vec!["--allowedTools", "--disallowedTools", "--settings"],
            ["agents"] | ["doctor"] | ["settings"] | ["mcp-servers"] => vec!["--preset", "--cwd"],
            ["providers"] => vec!["--preset"],
            _ => Vec::new(),
        }
    };
    for (command, flags) in &said {
        let taken = options(&project, command);
        for flag in flags.iter().chain(&intro(command)) {
            assert!(
                taken.iter().any(|t| t == flag),
                "{command:?} {flag}: {taken:?}"
            );
        }
        for flag in &taken {
            assert!(
                cli.contains(&format!("`{flag}"))
                    || cli.contains(&format!("[{flag}"))
                    || cli.contains(&format!("| {flag}")),
                "docs/cli.md does not name {command:?} {flag}"
            );
        }
    }
}
