//! Bad presets: each error with its exact file:line:column, key and message.

use pretty_assertions::assert_eq;
use std::path::Path;
use subagent_core::ErrorCode;

use subagent_preset::{Error, MAX_PRESET_BYTES, Preset, Site};

use super::support::{env, factories, no_env};

fn error(text: &str) -> Error {
    match Preset::parse(text, "dir/p.yaml", &factories(), &no_env) {
        Ok(preset) => panic!("loaded: {preset:?}"),
        Err(error) => error,
    }
}

const PROVIDERS: &str = "version: 1\nproviders:\n  - name: a\n    kind: spawn\n  - name: c\n    kind: codex\n  - name: off\n    kind: fork\n    disabled: true\n";

#[test]
fn bad_presets() {
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "unknown top-level key (typo)",
            "version: 1\nverison: 2\n".into(),
            "dir/p.yaml:2:1: verison: unknown field `verison`, expected one of version, max_depth, max_tool_result_bytes, settings, mcp_servers, model, model_aliases, builtin_models, agents, providers, tools",
        ),
        (
            "unknown row key (typo)",
            "version: 1\nproviders:\n  - name: a\n    kidn: spawn\n".into(),
            "dir/p.yaml:4:5: providers[0].kidn: unknown field `kidn`, expected one of name, kind, disabled, config",
        ),
        (
            "unknown model key",
            "version: 1\nmodel:\n  kind: anthropic\n  name: m\n  api_key: sk\n".into(),
            "dir/p.yaml:5:3: model.api_key: unknown field `api_key`, expected one of kind, name, base_url, api_key_env, scenario, timeouts, retry, max_answer_bytes, reasoning_effort, price",
        ),
        (
            "a tool result of no bytes",
            "version: 1\nmax_tool_result_bytes: 0\n".into(),
            "dir/p.yaml:2:1: max_tool_result_bytes: a tool result keeps at least 1 byte (max_tool_result_bytes: 0 would leave only the marker)",
        ),
        (
            "an answer of no bytes",
            "version: 1\nmodel:\n  kind: anthropic\n  name: m\n  max_answer_bytes: 0\n".into(),
            "dir/p.yaml:5:3: model.max_answer_bytes: an answer needs at least 1 byte (max_answer_bytes: 0 would fail every answer)",
        ),
        (
            "a negative cap",
            "version: 1\nmax_tool_result_bytes: -5\n".into(),
            "dir/p.yaml:2:24: max_tool_result_bytes: invalid u64",
        ),
        (
            "a blank model alias",
            "version: 1\nmodel_aliases:\n  fast: ' '\n".into(),
            "dir/p.yaml:3:3: model_aliases.fast: the model id of alias `fast` must not be empty",
        ),
        (
            "inherit is not an alias",
            "version: 1\nmodel_aliases: {inherit: m}\n".into(),
            "dir/p.yaml:2:17: model_aliases.inherit: `inherit` always means the parent's model and cannot be an alias",
        ),
        (
            "missing version",
            "max_depth: 3\n".into(),
            "dir/p.yaml:1:1: max_depth: missing field `version`",
        ),
        (
            "unsupported version",
            "version: 2\n".into(),
            "dir/p.yaml:1:10: version: unsupported preset version 2 (this build reads version 1)",
        ),
        (
            "wrong type",
            "version: 1\nmax_depth: -1\n".into(),
            "dir/p.yaml:2:12: max_depth: invalid u32",
        ),
        (
            "strict booleans",
            "version: 1\nproviders:\n  - name: a\n    kind: spawn\n    disabled: yes\n".into(),
            "dir/p.yaml:5:15: providers[0].disabled: invalid boolean (strict mode expects true/false)",
        ),
        (
            "unknown model kind",
            "version: 1\nmodel:\n  kind: gemini\n  name: m\n".into(),
            "dir/p.yaml:3:9: model.kind: unknown variant `gemini`, expected one of anthropic, openai-responses, openai-chat, scripted",
        ),
        (
            "unknown provider kind lists the known kinds",
            "version: 1\nproviders:\n  - name: a\n    kind: spwan\n".into(),
            "dir/p.yaml:4:5: providers[0].kind: unknown provider kind \"spwan\" (known kinds: \"spawn\", \"fork\", \"claude-code\", \"codex\")",
        ),
        (
            "config schema violation",
            "version: 1\nproviders:\n  - name: a\n    kind: spawn\n    config:\n      max_turns: 0\n      bogus: 1\n".into(),
            "dir/p.yaml:6:7: providers[0].config.max_turns: invalid config for provider \"a\" (kind spawn): /max_turns: value is less than the minimum of 1; /: Additional properties are not allowed ('bogus' was unexpected)",
        ),
        (
            "config schema violation, nested, value masked",
            "version: 1\nproviders:\n  - name: cc\n    kind: claude-code\n    config:\n      env:\n        TOKEN: 42\n".into(),
            "dir/p.yaml:7:9: providers[0].config.env.TOKEN: invalid config for provider \"cc\" (kind claude-code): /env/TOKEN: value is not of type \"string\"",
        ),
        (
            "config on a disabled row is checked too",
            "version: 1\nproviders:\n  - name: a\n    kind: claude-code\n    disabled: true\n    config: {x: 1}\n".into(),
            "dir/p.yaml:6:5: providers[0].config: invalid config for provider \"a\" (kind claude-code): /: Additional properties are not allowed ('x' was unexpected)",
        ),
        (
            "duplicate provider name",
            "version: 1\nproviders:\n  - name: a\n    kind: spawn\n  - name: a\n    kind: fork\n".into(),
            "dir/p.yaml:5:5: providers[1].name: duplicate provider name \"a\" (first defined at 3:5)",
        ),
        (
            "empty provider name",
            "version: 1\nproviders:\n  - name: ''\n    kind: spawn\n".into(),
            "dir/p.yaml:3:5: providers[0].name: a provider name must not be empty",
        ),
        (
            "duplicate key",
            "version: 1\nversion: 1\n".into(),
            "dir/p.yaml:2:1: version: duplicate mapping key: version",
        ),
        (
            "tool on an unknown provider lists the providers",
            format!("{PROVIDERS}tools:\n  - provider: x\n"),
            "dir/p.yaml:11:5: tools[0].provider: tool \"subagent\" refers to unknown provider \"x\" (providers: \"a\", \"c\", \"off\")",
        ),
        (
            "tool on a disabled provider",
            format!("{PROVIDERS}tools:\n  - name: t\n    provider: off\n"),
            "dir/p.yaml:12:5: tools[0].provider: tool \"t\" refers to provider \"off\", which is disabled (set disabled: false on its row at 7:5)",
        ),
        (
            "fork on an unknown provider",
            format!("{PROVIDERS}tools:\n  - provider: a\n    fork: nope\n"),
            "dir/p.yaml:12:5: tools[0].fork: tool \"subagent\" refers to unknown provider \"nope\" (providers: \"a\", \"c\", \"off\")",
        ),
        (
            "fork on a disabled provider",
            format!("{PROVIDERS}tools:\n  - provider: a\n    fork: off\n"),
            "dir/p.yaml:12:5: tools[0].fork: tool \"subagent\" refers to provider \"off\", which is disabled (set disabled: false on its row at 7:5)",
        ),
        (
            "fork on a provider that does not continue the conversation",
            format!("{PROVIDERS}tools:\n  - provider: a\n    fork: c\n"),
            "dir/p.yaml:12:5: tools[0].fork: tool \"subagent\": fork provider \"c\" (kind codex) does not continue the parent's conversation; name a provider of kind fork",
        ),
        (
            "max_depth on a provider without depth_limit",
            format!("{PROVIDERS}tools:\n  - provider: c\n    max_depth: 2\n"),
            "dir/p.yaml:12:5: tools[0].max_depth: tool \"subagent\" sets max_depth but provider \"c\" (kind codex) does not support depth_limit (remove max_depth; the preset's top-level max_depth still caps every provider)",
        ),
        (
            "tool_filter on a provider without tool_filter",
            format!("{PROVIDERS}tools:\n  - provider: c\n    tool_filter: {{deny: [bash]}}\n"),
            "dir/p.yaml:12:5: tools[0].tool_filter: tool \"subagent\" sets tool_filter but provider \"c\" (kind codex) does not support tool_filter (remove tool_filter)",
        ),
        (
            "max_depth above the preset's cap",
            format!("{PROVIDERS}max_depth: 2\ntools:\n  - provider: a\n    max_depth: 3\n"),
            "dir/p.yaml:13:5: tools[0].max_depth: tool \"subagent\" sets max_depth 3, above the preset's max_depth 2 (a tool row can only lower the cap)",
        ),
        (
            "duplicate tool name",
            format!("{PROVIDERS}tools:\n  - provider: a\n  - provider: a\n"),
            "dir/p.yaml:12:5: tools[1].name: duplicate tool name \"subagent\" (first defined at 11:5)",
        ),
        (
            "unknown background mode",
            format!("{PROVIDERS}tools:\n  - provider: a\n    background: sometimes\n"),
            "dir/p.yaml:12:17: tools[0].background: unknown variant `sometimes`, expected one of allowed, always, never",
        ),
        (
            "scenario on a non-scripted model",
            "version: 1\nmodel:\n  kind: anthropic\n  name: m\n  scenario: s.yaml\n".into(),
            "dir/p.yaml:5:3: model.scenario: scenario is only for kind scripted (this model is anthropic)",
        ),
        (
            "missing scenario file",
            "version: 1\nmodel:\n  kind: scripted\n  name: m\n  scenario: nowhere.yaml\n".into(),
            "dir/p.yaml:5:3: model.scenario: scenario file dir/nowhere.yaml not found",
        ),
        (
            "unset variable",
            "version: 1\nmodel:\n  kind: scripted\n  name: ${NAME}\n".into(),
            "dir/p.yaml:4:9: model.name: environment variable NAME is not set (referenced as ${NAME}; set it, give a default with ${NAME:-…}, or write $${ for a literal ${)",
        ),
        (
            "unset variable deep in a config",
            "version: 1\nproviders:\n  - name: cc\n    kind: claude-code\n    config:\n      env:\n        - x\n        - \"key ${API_TOKEN}\"\n".into(),
            "dir/p.yaml:8:11: providers[0].config.env[1]: environment variable API_TOKEN is not set (referenced as ${API_TOKEN}; set it, give a default with ${API_TOKEN:-…}, or write $${ for a literal ${)",
        ),
        (
            "malformed variable",
            "version: 1\nagents: [\"${1DIR}/x\"]\n".into(),
            "dir/p.yaml:2:10: agents[0]: malformed variable reference \"${1DIR}/x\" (expected ${NAME} or ${NAME:-default}; write $${ for a literal ${)",
        ),
        (
            "a row that is not a mapping",
            "version: 1\nproviders: [a, b]\n".into(),
            "dir/p.yaml:2:13: providers[0]: expected mapping start",
        ),
        (
            "syntax error",
            "version: 1\nmodel: {kind: scripted, name: m\n".into(),
            "dir/p.yaml:2:8: model: unclosed bracket '{'",
        ),
    ];
    let mut failures = Vec::new();
    for (name, text, expected) in &cases {
        let got = error(text).to_string();
        if got != *expected {
            failures.push(format!(
                "{name}:\n  expected: {expected}\n  got:      {got}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A `{…}` or `[…]` left open is reported where it opens, not where the parser gave up (lines
/// later); an unquoted `${VAR}` inside a `{…}` mapping (where `{` and `}` are YAML's) is
/// reported with the quoted spelling that works.
#[test]
fn flow_collections_are_reported_where_they_go_wrong() {
    let cases = [
        (
            "version: 1\nmax_depth: 3\nmodel: {kind: anthropic, name: m, api_key_env: KEY\nproviders:\n  - {name: spawn, kind: spawn}\n",
            "dir/p.yaml:3:8: model: this `{` is not closed: add the missing `}` (or a missing `,` between its entries); the parser stopped at 4:10: while parsing a flow mapping, did not find expected ',' or '}'",
        ),
        (
            "version: 1\nproviders:\n  - {name: spawn, kind: spawn\n  - {name: fork, kind: fork}\ntools:\n  - {name: subagent, provider: spawn}\n",
            "dir/p.yaml:3:5: providers: this `{` is not closed: add the missing `}` (or a missing `,` between its entries); the parser stopped at 6:3: \"-\" is only valid inside a block",
        ),
        (
            "version: 1\nagents: [one, two\nproviders: []\n",
            "dir/p.yaml:2:9: agents: this `[` is not closed: add the missing `]` (or a missing `,` between its entries); the parser stopped at 3:10: illegal placement of ':' indicator",
        ),
        (
            "version: 1\nmodel: {kind: anthropic, name: ${MODEL:-m}}\n",
            "dir/p.yaml:2:32: model.name: inside a `{…}` or `[…]`, a `${…}` reference must be quoted: write \"${MODEL:-m}\" (the parser: while parsing a flow mapping, did not find expected ',' or '}')",
        ),
    ];
    let got: Vec<String> = cases
        .iter()
        .map(|(text, _)| error(text).to_string())
        .collect();
    let expected: Vec<&str> = cases.iter().map(|(_, message)| *message).collect();
    assert_eq!(got, expected);
}

#[test]
fn yaml_bomb_is_refused_by_budget() {
    let mut text = String::from(
        "version: 1\nproviders:\n- name: a\n  kind: spawn\n  config:\n    x0: &a0 [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n",
    );
    for level in 1..10 {
        let prev = level - 1;
        text.push_str(&format!(
            "    x{level}: &a{level} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
        ));
    }
    let error = error(&text);
    assert!(matches!(error, Error::Budget { .. }), "{error}");
    assert!(error.to_string().starts_with("dir/p.yaml:"), "{error}");
}

#[test]
fn oversized_text_is_refused_unparsed() {
    let text = format!("version: 1\n#{}\n", "x".repeat(MAX_PRESET_BYTES));
    let error = error(&text);
    assert_eq!(
        error.to_string(),
        format!("dir/p.yaml: the preset is larger than the limit of {MAX_PRESET_BYTES} bytes")
    );
}

#[test]
fn oversized_file_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.yaml");
    std::fs::write(&path, vec![b'#'; 2 * MAX_PRESET_BYTES]).unwrap();
    let error = Preset::load(&path, &factories(), &no_env).unwrap_err();
    assert_eq!(
        error,
        Error::TooLarge {
            site: Box::new(Site {
                file: path.clone(),
                ..Site::default()
            }),
            size: MAX_PRESET_BYTES + 1,
            limit: MAX_PRESET_BYTES,
        }
    );
    assert_eq!(
        error.to_string(),
        format!(
            "{}: the preset is larger than the limit of {MAX_PRESET_BYTES} bytes",
            path.display()
        )
    );
}

/// Loads on another thread: a load that blocks (a FIFO opened for reading) fails the test
/// instead of hanging it.
fn load_within_bound(path: &Path) -> Error {
    let (tx, rx) = std::sync::mpsc::channel();
    let path = path.to_owned();
    std::thread::spawn(move || {
        let _ = tx.send(Preset::load(&path, &factories(), &no_env));
    });
    match rx.recv_timeout(std::time::Duration::from_secs(30)) {
        Ok(Ok(preset)) => panic!("loaded: {preset:?}"),
        Ok(Err(error)) => error,
        Err(_) => panic!("loading the preset blocked"),
    }
}

/// `/dev/zero` has size 0 and never ends; a FIFO blocks the reader until someone writes. Both
/// (and a symlink to either) are refused before anything is read, naming the path.
#[test]
fn special_files_are_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.yaml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let zero_link = dir.path().join("zero.yaml");
    std::os::unix::fs::symlink("/dev/zero", &zero_link).unwrap();
    let fifo_link = dir.path().join("fifo-link.yaml");
    std::os::unix::fs::symlink(&fifo, &fifo_link).unwrap();
    for (path, what) in [
        (Path::new("/dev/zero"), "a character device"),
        (zero_link.as_path(), "a character device"),
        (fifo.as_path(), "a FIFO (named pipe)"),
        (fifo_link.as_path(), "a FIFO (named pipe)"),
        (dir.path(), "a directory"),
    ] {
        let error = load_within_bound(path);
        assert_eq!(
            (error.code(), error.to_string()),
            (
                ErrorCode::InvalidArguments,
                format!(
                    "{}: cannot read the preset: {what}, not a regular file; refused without reading it",
                    path.display()
                )
            )
        );
    }
}

#[test]
fn missing_file() {
    let error = Preset::load("/nonexistent/p.yaml", &factories(), &no_env).unwrap_err();
    assert!(matches!(error, Error::Io { .. }), "{error}");
    assert!(error.site().is_none());
}

#[test]
fn errors_as_json_carry_code_and_location() {
    let error = error("version: 1\nverison: 2\n");
    assert_eq!(error.code(), ErrorCode::InvalidArguments);
    assert_eq!(
        error.to_json(),
        serde_json::json!({
            "code": "INVALID_ARGUMENTS",
            "message": error.to_string(),
            "file": "dir/p.yaml",
            "line": 2,
            "column": 1,
            "key": "verison",
        })
    );
}

#[test]
fn variable_values_are_not_expanded_again_nor_parsed_as_yaml() {
    let preset = Preset::parse(
        "version: 1\nmodel:\n  kind: scripted\n  name: ${NAME}\n",
        "p.yaml",
        &factories(),
        &env(&[("NAME", "${OTHER}\nkind: x")]),
    )
    .unwrap();
    assert_eq!(preset.model.unwrap().name, "${OTHER}\nkind: x");
}
