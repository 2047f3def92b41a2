//! The tour's commands that need a model key or a product CLI, against the fake model server.

use pretty_assertions::assert_eq;
use subagent_test_support::FakeServer;

#[cfg(feature = "e2e")]
use super::super::support::root;
use super::super::support::{stderr, stdout};
use super::{Project, Step, assert_exit, tour};

/// What the fake model answers the tour's commands that need a key.
const KEYED: &str = r##"
- name: summarise
  match: "(?i)summarise src/ in three bullets"
  steps:
    - tool_calls:
        - name: glob
          input: {pattern: "src/**/*.rs"}
    - text: "- main.rs prints the parsed config\n- config.rs parses key=value lines\n- lib.rs answers 42"
- name: count
  match: "(?i)count the rust files"
  steps:
    - tool_calls:
        - name: glob
          input: {pattern: "**/*.rs"}
    - tool_calls:
        - name: structured_output
          input: {count: 3}
- name: write-tests
  match: "WRITE-TESTS"
  steps:
    - tool_calls:
        - name: write_file
          input: {path: src/config_tests.rs, content: "#[test]\nfn parses_a_pair() {}\n"}
    - text: "Tests written where allowed."
- name: parent
  match: "(?i)find where the config is parsed"
  steps:
    - tool_calls:
        - name: grep
          input: {pattern: "fn parse_config"}
    - tool_calls:
        - name: subagent
          input:
            subagent_type: general-purpose
            description: write config tests
            prompt: "WRITE-TESTS for parse_config in src/config.rs"
    - text: "The config is parsed in src/config.rs; a subagent took the tests."
"##;

/// The standard preset (what runs without `--preset`) with its model at `url`: the key then
/// reaches the fake server, not Anthropic.
fn keyed_preset(project: &Project, url: &str) -> String {
    let standard = std::fs::read_to_string(project.path.join("presets/standard.yaml")).unwrap();
    let key_line = "  api_key_env: ANTHROPIC_API_KEY\n";
    assert_eq!(standard.matches(key_line).count(), 1);
    let keyed = standard.replace(
        key_line,
        &format!("{key_line}  base_url: {url}\n  retry: {{max_retries: 0}}\n"),
    );
    std::fs::write(project.path.join("keyed.yaml"), keyed).unwrap();
    "keyed.yaml".to_owned()
}

/// The text of every request the fake server answered with `scenario`'s step `step`.
fn asked(server: &FakeServer, scenario: &str, step: usize) -> Vec<String> {
    server
        .model_requests()
        .into_iter()
        .filter(|r| r.scenario == Some((scenario.to_owned(), step)))
        .map(|r| r.body.unwrap_or_default().to_string())
        .collect()
}

/// The tour's commands that need a model key, with one pointed at the fake server: the
/// summary reads `src/`, the `--output-schema` one prints its structured output, the parent's
/// subagent may write only once edits are allowed, and `--offline` keeps the scripted model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tour_walks_with_a_key_against_the_fake_server() {
    let server = FakeServer::from_yaml(KEYED).await.unwrap();
    let tour = tour();
    let project = std::sync::Arc::new(Project::new(&tour));
    let preset = keyed_preset(&project, &server.url());
    let run = |step: Step, extra: &[&str]| {
        let command = tour.command(step).clone();
        let project = std::sync::Arc::clone(&project);
        let mut extra: Vec<String> = extra.iter().map(|a| (*a).to_owned()).collect();
        extra.extend(["--preset".to_owned(), preset.clone()]);
        tokio::task::spawn_blocking(move || {
            let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
            let output = project.tour(&command, &extra, &[("ANTHROPIC_API_KEY", "tour-key")]);
            (command, output)
        })
    };

    let (command, output) = run(Step::DelegateSpawn, &[]).await.unwrap();
    assert_exit(&output, 0, &command);
    assert_eq!(
        stdout(&output),
        "- main.rs prints the parsed config\n- config.rs parses key=value lines\n- lib.rs answers \
         42\n"
    );
    assert!(!stderr(&output).contains("offline"), "{}", stderr(&output));
    let listed = asked(&server, "summarise", 1);
    assert!(
        listed.len() == 1
            && ["src/main.rs", "src/config.rs", "src/lib.rs"]
                .iter()
                .all(|file| listed[0].contains(file)),
        "the glob ran in the project: {listed:?}"
    );

    let (command, output) = run(Step::DelegateSchema, &[]).await.unwrap();
    assert_exit(&output, 0, &command);
    assert_eq!(stdout(&output), "{\n  \"count\": 3\n}\n");

    let written = project.path.join("src/config_tests.rs");
    let answer = "The config is parsed in src/config.rs; a subagent took the tests.\n";
    let (command, output) = run(Step::Run, &[]).await.unwrap();
    assert_exit(&output, 0, &command);
    assert_eq!(stdout(&output), answer);
    assert!(
        !written.exists(),
        "no terminal to ask: the subagent's edit is denied"
    );
    let denied = asked(&server, "write-tests", 1);
    assert!(
        denied.len() == 1
            && denied[0]
                .contains("permission denied: write_file needs approval and no one can be asked"),
        "the model is told why: {denied:?}"
    );

    let (command, output) = run(Step::Run, &["--permission-mode", "accept-edits"])
        .await
        .unwrap();
    assert_exit(&output, 0, &command);
    assert_eq!(stdout(&output), answer);
    assert_eq!(
        std::fs::read_to_string(&written).unwrap(),
        "#[test]\nfn parses_a_pair() {}\n"
    );

    let before = server.model_requests().len();
    let (command, output) = run(Step::Run, &["--offline"]).await.unwrap();
    assert_exit(&output, 0, &command);
    assert_eq!(
        stderr(&output).lines().nth(1),
        Some("offline: --offline given, the scripted model answers (no network)")
    );
    assert!(
        stdout(&output).starts_with("[offline scripted model] "),
        "{}",
        stdout(&output)
    );
    assert_eq!(
        server.model_requests().len(),
        before,
        "--offline asked the server"
    );
    assert_eq!(server.violations(), Vec::<String>::new());
}

/// The Claude Code and Codex commands of the tour, on the shipped cross-product preset, each
/// product's own settings pointing it at the fake server the way a user points it anywhere
/// (`ANTHROPIC_BASE_URL` for claude, a model provider in `~/.codex/config.toml` for codex), the
/// pinned CLIs first on `PATH` where `cargo xtask install-clis` puts them.
#[cfg(feature = "e2e")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tour_runs_claude_code_and_codex() {
    let server = FakeServer::from_yaml(
        r#"
- name: review
  match: "Review the last commit"
  steps: [{text: "The last commit adds a config parser; nothing risky."}]
- name: main-rs
  match: "What does main.rs do"
  steps: [{text: "main.rs parses a config and prints it."}]
"#,
    )
    .await
    .unwrap();
    let tour = tour();
    let project = std::sync::Arc::new(Project::new(&tour));
    let bin = root().join("target/clis/node_modules/.bin");
    for cli in ["claude", "codex"] {
        assert!(
            bin.join(cli).is_file(),
            "{} is missing: run `cargo xtask install-clis`",
            bin.join(cli).display()
        );
    }
    let codex_home = project.home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model_provider = \"tour\"\n\n[model_providers.tour]\nname = \"tour\"\nbase_url = \
             \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\n\
             request_max_retries = 0\nstream_max_retries = 0\n",
            server.url()
        ),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let url = server.url();
    for (step, answer, from) in [
        (
            Step::DelegateClaudeCode,
            "The last commit adds a config parser; nothing risky.\n",
            "review",
        ),
        (
            Step::DelegateCodex,
            "main.rs parses a config and prints it.\n",
            "main-rs",
        ),
    ] {
        let command = tour.command(step).clone();
        let (runner, path, url) = (std::sync::Arc::clone(&project), path.clone(), url.clone());
        let output = tokio::task::spawn_blocking(move || {
            let env = [
                ("PATH", path.as_str()),
                ("ANTHROPIC_API_KEY", "tour-key"),
                ("ANTHROPIC_BASE_URL", url.as_str()),
                ("OPENAI_API_KEY", "tour-key"),
            ];
            (runner.tour(&command, &[], &env), command)
        })
        .await
        .unwrap();
        let (output, command) = output;
        assert_exit(&output, 0, &command);
        assert_eq!(stdout(&output), answer, "{}", command.line);
        // The product ran in the project's directory: it tells its model so.
        let asked = asked(&server, from, 0);
        assert!(
            !asked.is_empty()
                && asked
                    .iter()
                    .all(|body| body.contains(&project.path.display().to_string())),
            "{}: {asked:?}",
            command.line
        );
    }
    assert!(
        server.model_requests().iter().any(|r| r
            .header("user-agent")
            .is_some_and(|ua| ua.starts_with("claude-cli/"))),
        "no request from claude"
    );
    assert!(
        server
            .model_requests()
            .iter()
            .any(|r| r.path.starts_with("/v1/responses")),
        "no request from codex"
    );
}
