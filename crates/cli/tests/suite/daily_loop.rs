//! The seams between one command and the next (issue 25): the preset a project keeps is found
//! as git and cargo find theirs, every command says which preset it used, and the "continue it"
//! hint works pasted verbatim.

use std::path::Path;

use pretty_assertions::assert_eq;

use super::support::assert_refused;
use super::support::{Project, stderr, stdout};

/// The `preset: …` line a command prints on stderr.
fn preset_line(output: &std::process::Output) -> String {
    let text = stderr(output);
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("preset: ")).collect();
    assert_eq!(lines.len(), 1, "one preset line: {text}");
    lines[0].to_owned()
}

/// The first column of `providers`' table: the rows of the preset used.
fn rows(output: &std::process::Output) -> Vec<String> {
    stdout(output)
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        // The notes under the table (`spawn: no effort: …`).
        .filter(|name| !name.ends_with(':'))
        .collect()
}

const ONLY_SPAWN: &str = "version: 1\nmodel: {kind: scripted, name: demo}\nproviders:\n  - {name: mine, kind: spawn}\ntools:\n  - {name: subagent, provider: mine}\n";
const ONLY_FORK: &str =
    "version: 1\nmodel: {kind: scripted, name: demo}\nproviders:\n  - {name: theirs, kind: fork}\n";

#[test]
fn a_project_preset_is_found_walking_up_to_the_repository_root() {
    let project = Project::new();
    let found = project.write(".subagents/preset.yaml", ONLY_SPAWN);
    let deep = project.path.join("src/deeper");
    std::fs::create_dir_all(&deep).unwrap();
    let output = project
        .subagent()
        .current_dir(&deep)
        .arg("providers")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(rows(&output), ["mine"]);
    assert_eq!(
        preset_line(&output),
        format!(
            "preset: {} (found from the working directory)",
            found.display()
        )
    );
    // --cwd is where the walk starts, for the commands that take it.
    let output = project
        .subagent()
        .current_dir(project.outside())
        .args(["agents", "--cwd"])
        .arg(&deep)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        preset_line(&output),
        format!("preset: {} (found from --cwd)", found.display())
    );
}

#[test]
fn the_flag_beats_the_variable_which_beats_the_project() {
    let project = Project::new();
    project.write(".subagents/preset.yaml", ONLY_SPAWN);
    let theirs = project.write("theirs.yaml", ONLY_FORK);
    let output = project
        .subagent()
        .env("SUBAGENT_PRESET", &theirs)
        .arg("providers")
        .output()
        .unwrap();
    assert_eq!(rows(&output), ["theirs"]);
    assert_eq!(
        preset_line(&output),
        format!("preset: {} (SUBAGENT_PRESET)", theirs.display())
    );
    let output = project
        .subagent()
        .env("SUBAGENT_PRESET", &theirs)
        .args(["providers", "--preset", "presets/offline.yaml"])
        .output()
        .unwrap();
    assert_eq!(rows(&output), ["spawn", "fork"]);
    assert_eq!(
        preset_line(&output),
        "preset: presets/offline.yaml (--preset)"
    );
    // A variable naming no file is an error, not a silent fallback.
    let output = project
        .subagent()
        .env("SUBAGENT_PRESET", "missing.yaml")
        .arg("providers")
        .output()
        .unwrap();
    assert_refused(&output, "SUBAGENT_PRESET", "");
}

#[test]
fn no_preset_anywhere_is_the_built_in_standard_one_and_the_walk_stops_at_the_repository() {
    let project = Project::new();
    // Above the repository: never read.
    std::fs::create_dir_all(project.outside().join(".subagents")).unwrap();
    std::fs::write(project.outside().join(".subagents/preset.yaml"), ONLY_FORK).unwrap();
    let output = project.subagent().arg("providers").output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(rows(&output)[..2], ["spawn", "fork"]);
    assert_eq!(
        preset_line(&output),
        "preset: built-in standard (no --preset, SUBAGENT_PRESET or .subagents/preset.yaml up to the repository root)"
    );
    // Outside any repository only the working directory itself counts, also beside an empty
    // `.git` directory (codex's workspace-write sandbox leaves one in `/tmp`): not a repository.
    std::fs::create_dir_all(project.outside().join(".git")).unwrap();
    let plain = project.outside().join("plain/sub");
    std::fs::create_dir_all(&plain).unwrap();
    let output = project
        .subagent()
        .current_dir(&plain)
        .arg("providers")
        .output()
        .unwrap();
    assert_eq!(rows(&output)[..2], ["spawn", "fork"]);
}

/// The hint at the end of a run, and the command in it.
fn hint(output: &std::process::Output) -> (String, String) {
    let text = stderr(output);
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix("session: "))
        .unwrap_or_else(|| panic!("no session line: {text}"));
    let (id, rest) = line.split_once(' ').unwrap();
    let command = rest
        .strip_prefix("(continue it: ")
        .and_then(|c| c.strip_suffix(')'))
        .unwrap();
    (id.to_owned(), command.to_owned())
}

/// `line` pasted into bash in `dir` with `env`, asserted a success: the session id and the
/// command of its continue hint.
fn pasted(project: &Project, dir: &Path, line: &str, env: &[(&str, &str)]) -> (String, String) {
    let output = project.shell(dir, line, env);
    assert_eq!(output.status.code(), Some(0), "{line}: {}", stderr(&output));
    hint(&output)
}

#[test]
fn the_continue_hint_of_run_works_pasted_verbatim() {
    let project = Project::new();
    let line =
        "subagent run --preset presets/offline.yaml \"Please delegate a hello to a subagent\"";
    let (id, command) = pasted(&project, &project.path, line, &[]);
    assert_eq!(
        command,
        format!("subagent run --preset presets/offline.yaml --resume {id} PROMPT")
    );
    let again = pasted(&project, &project.path, &command, &[]);
    assert_eq!(again, (id, command));
}

#[test]
fn the_continue_hint_of_delegate_keeps_cwd_and_offline() {
    let project = Project::new();
    // A key and an endpoint that must never be reached: --offline has to survive the hint.
    let never = [
        ("ANTHROPIC_API_KEY", "sk-never"),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
    ];
    let line = "subagent delegate --cwd project --offline --provider spawn \"Say hello from the subagent\"";
    let (id, command) = pasted(&project, project.outside(), line, &never);
    assert_eq!(
        command,
        format!("subagent delegate --cwd project --offline --provider spawn --resume {id} PROMPT")
    );
    assert_eq!(pasted(&project, project.outside(), &command, &never).0, id);
}

#[test]
fn hint_arguments_are_quoted_for_the_shell() {
    let project = Project::new();
    let spaced = project.path.join("my presets");
    std::fs::create_dir_all(&spaced).unwrap();
    std::fs::copy(
        project.path.join("presets/offline.yaml"),
        spaced.join("it's.yaml"),
    )
    .unwrap();
    let line =
        "subagent delegate --preset \"my presets/it's.yaml\" \"Say hello from the subagent\"";
    let (id, command) = pasted(&project, &project.path, line, &[]);
    assert_eq!(
        command,
        format!(
            "subagent delegate --preset 'my presets/it'\\''s.yaml' --provider spawn --resume {id} PROMPT"
        )
    );
    pasted(&project, &project.path, &command, &[]);
}

#[test]
fn a_missing_key_is_an_error_unless_the_model_is_scripted_or_offline() {
    let project = Project::new();
    let refused = "error[MISSING_API_KEY]: ANTHROPIC_API_KEY is not set: the preset's model \
                   (anthropic claude-sonnet-4-5) needs it. Set it, or give --offline to use the \
                   scripted offline model (no network)";
    for args in [
        &["run", "Summarise src/"][..],
        &["delegate", "--provider", "spawn", "Summarise src/"],
    ] {
        let output = project.subagent().args(args).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert_eq!(stdout(&output), "");
        assert_eq!(
            stderr(&output).lines().nth(1),
            Some(refused),
            "{args:?}: {}",
            stderr(&output)
        );
        let mut json = args.to_vec();
        json.insert(1, "--json");
        let output = project.subagent().args(&json).output().unwrap();
        assert_eq!(output.status.code(), Some(2));
        let line: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
        assert_eq!(line["type"], "error");
        assert_eq!(line["code"], "MISSING_API_KEY");
        // --offline: the scripted model, said so.
        let mut offline = args.to_vec();
        offline.insert(1, "--offline");
        let output = project.subagent().args(&offline).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{offline:?}: {}",
            stderr(&output)
        );
        assert!(stdout(&output).starts_with("[offline scripted model] "));
    }
    // A scripted preset needs no key.
    let output = project.output([
        "delegate",
        "--preset",
        "presets/offline.yaml",
        "Say hello from the subagent",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // A product child needs no model key of ours: refused only for not being enabled.
    let output = project.output(["delegate", "--provider", "codex", "hi"]);
    assert_refused(&output, "error[UNKNOWN_PROVIDER]", "");
}

const ANSWER: &str =
    "- name: answer\n  match: \"base url\"\n  steps:\n    - text: \"answered at the endpoint\"\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_standard_base_url_variables_are_the_default_endpoint() {
    let server = subagent_test_support::FakeServer::from_yaml(ANSWER)
        .await
        .unwrap();
    let project = Project::new();
    let openai = project.write(
        "openai.yaml",
        "version: 1\nmodel: {kind: openai-responses, name: gpt-fake}\nproviders:\n  - {name: spawn, kind: spawn}\n",
    );
    for (key, url, preset) in [
        ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", None),
        ("OPENAI_API_KEY", "OPENAI_BASE_URL", Some(&openai)),
    ] {
        let mut command = project.subagent();
        command
            .env(key, "test-key")
            .env(url, server.url())
            .args(["run", "--max-turns", "2"]);
        if let Some(preset) = preset {
            command.arg("--preset").arg(preset);
        }
        let output =
            tokio::task::block_in_place(|| command.arg("the base url decides").output().unwrap());
        assert_eq!(output.status.code(), Some(0), "{url}: {}", stderr(&output));
        assert_eq!(stdout(&output), "answered at the endpoint\n");
        let said = stderr(&output);
        assert!(
            said.lines().any(|line| line.starts_with("model: ")
                && line.ends_with(&format!("at {} ({url})", server.url()))),
            "the notice names the endpoint: {said}"
        );
    }
    assert_eq!(server.model_requests().len(), 2);
    assert_eq!(server.violations(), Vec::<String>::new());
}

/// The servers run the preset's model as written: a key in the environment their client starts
/// them with does not move a scripted preset onto the real API, and a real model without its
/// key does not start them.
#[test]
fn a_servers_client_environment_does_not_switch_the_model() {
    let project = Project::new();
    for server in ["mcp", "acp"] {
        // stdin empty: the server starts, says what it runs on, and ends.
        let output = project
            .subagent()
            .env("ANTHROPIC_API_KEY", "from-the-client")
            .args([server, "--preset", "presets/offline.yaml"])
            .write_stdin("")
            .output()
            .unwrap();
        // (mcp ends 1 for the handshake it never got; nothing was refused.)
        assert_ne!(
            output.status.code(),
            Some(2),
            "{server}: {}",
            stderr(&output)
        );
        let said = stderr(&output);
        assert!(
            said.lines().any(|line| line
                == "offline: the scripted model answers from the built-in offline demo scenario (no network)"),
            "{server}: {said}"
        );
        assert!(
            !said.contains("ANTHROPIC_API_KEY is set"),
            "{server}: {said}"
        );

        let output = project
            .subagent()
            .arg(server)
            .write_stdin("")
            .output()
            .unwrap();
        assert_refused(
            &output,
            "error[MISSING_API_KEY]: ANTHROPIC_API_KEY is not set",
            server,
        );
    }
}

/// An unknown provider gets a did-you-mean that looks at every row, disabled ones too, and
/// says where a disabled one is.
#[test]
fn an_unknown_provider_suggests_the_row_meant_even_a_disabled_one() {
    let project = Project::new();
    let output = project.output(["delegate", "--provider", "claude", "hi"]);
    assert_eq!(output.status.code(), Some(2));
    let said = stderr(&output);
    let refusal = said
        .lines()
        .find(|l| l.starts_with("error["))
        .unwrap_or_default();
    assert_eq!(
        refusal,
        "error[UNKNOWN_PROVIDER]: no subagent provider named \"claude\" (known: \"spawn\", \"fork\"): did \
         you mean \"claude-code\"? It is disabled in the built-in standard preset \
         (presets/standard.yaml:29): set `disabled: false` on its row in a copy of it to use it"
    );
    let output = project.output(["delegate", "--offline", "--provider", "spwan", "hi"]);
    assert_refused(
        &output,
        "error[UNKNOWN_PROVIDER]: no subagent provider named \"spwan\" (known: \"spawn\", \"fork\"): did you mean \"spawn\"?\n",
        "spwan",
    );
}

/// `--max-turns 0` would end every child before its first turn: refused up front as a usage
/// error, on every command that takes it.
#[test]
fn max_turns_zero_is_refused_up_front() {
    let project = Project::new();
    for command in ["delegate", "run", "acp"] {
        let output = project
            .subagent()
            .args([command, "--offline", "--max-turns", "0"])
            .args((command != "acp").then_some("hi"))
            .output()
            .unwrap();
        assert_refused(
            &output,
            "invalid value '0' for '--max-turns <MAX_TURNS>'",
            command,
        );
    }
}

/// Every state file the project writes is private to the user, whatever the umask: the
/// directories 0700, the files 0600 (sessions of the parent and of its child here; teams are
/// held to it in subagent-teams' own tests).
#[test]
fn the_state_it_writes_is_private_to_the_user() {
    use std::os::unix::fs::PermissionsExt;
    let project = Project::new();
    let output = project
        .shell(
            &project.path,
            "umask 022 && subagent run --preset presets/offline.yaml \"Please delegate a hello to a subagent\"",
            &[],
        );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let state = project.home.join(".local/state/subagents");
    let mut seen = (0, 0);
    let mut stack = vec![state.clone()];
    while let Some(dir) = stack.pop() {
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", dir.display());
        seen.0 += 1;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, 0o600, "{}", path.display());
                seen.1 += 1;
            }
        }
    }
    // subagents/, sessions/, the project's; the parent's transcript and its child's.
    assert!(
        seen.0 >= 3 && seen.1 >= 2,
        "{seen:?} under {}",
        state.display()
    );
}

/// `--json` names the provider one way across events, outcome and session, gives a child's
/// session id and usage as fields, names what each delegation ran on, and says a usage error
/// as JSON too; `-v` logs values as people read them.
#[test]
fn json_says_it_one_way_with_the_childs_session_and_usage_as_fields() {
    let project = Project::new();
    let output = project
        .subagent()
        .args(["run", "--json", "--preset", "presets/offline.yaml"])
        .arg("Please delegate a hello to a subagent")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines = super::support::json_lines(&output);
    let started = lines.iter().find(|l| l["type"] == "started").unwrap();
    let outcome = lines.last().unwrap();
    assert_eq!(
        [
            &started["provider"],
            &outcome["provider"],
            &outcome["session"]["provider"]
        ],
        ["parent", "parent", "parent"]
    );
    let result = lines
        .iter()
        .find(|l| l["type"] == "tool_result" && l.get("parent_tool_use_id").is_none())
        .unwrap();
    let child = &result["child"];
    assert_eq!(child["usage"]["input_tokens"], 10, "{result}");
    let session = child["session_id"].as_str().unwrap();
    assert_eq!(session.len(), 36, "{result}");
    let delegation = &outcome["delegations"][0];
    assert_eq!(
        [
            &delegation["provider"],
            &delegation["agent_type"],
            &delegation["child"]["session_id"]
        ],
        ["spawn", "general-purpose", session]
    );
    // A usage error, with --json: one error object on stdout, exit 2.
    let output = project.output(["delegate", "--json", "--max-turns", "0", "hi"]);
    assert_eq!(output.status.code(), Some(2));
    let line: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(
        line,
        serde_json::json!({
            "type": "error",
            "code": "INVALID_ARGUMENTS",
            "message": "invalid value '0' for '--max-turns <MAX_TURNS>': 0 is not in 1..=4294967295"
        })
    );
    // -v: lists and counts as people write them, not Rust's Debug.
    let output = project.output([
        "-v",
        "delegate",
        "--preset",
        "presets/offline.yaml",
        "Say hello from the subagent",
    ]);
    let said = stderr(&output);
    assert!(said.contains("providers=spawn, fork"), "{said}");
    assert!(said.contains("input_tokens=10"), "{said}");
    assert!(!said.contains("[\"spawn\""), "{said}");
}
