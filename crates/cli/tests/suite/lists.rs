//! `subagent providers` and `subagent agents`.

use std::path::Path;
use std::process::Output;

use pretty_assertions::assert_eq;

use super::support::assert_refused;
use super::support::write_file;
use super::support::{preset, stderr, stdout, subagent};

/// `subagent ARGS --preset presets/offline.yaml` in `home`.
fn offline(home: &Path, args: &[&str]) -> Output {
    subagent(home)
        .args(args)
        .arg("--preset")
        .arg(preset("offline.yaml"))
        .output()
        .unwrap()
}

/// The stdout of `subagent ARGS --preset presets/PRESET` in `home`, asserted a success.
fn listed(home: &Path, args: &[&str], shipped: &str) -> String {
    let output = subagent(home)
        .args(args)
        .arg("--preset")
        .arg(preset(shipped))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    stdout(&output)
}

#[test]
fn providers_table_of_the_standard_preset() {
    let home = tempfile::tempdir().unwrap();
    let output = subagent(home.path()).arg("providers").output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    insta::assert_snapshot!(stdout(&output), @r"
    provider     kind         state     output_schema  depth_limit  tool_filter  persona  model_override  max_turns  resume  isolation  effort  permission_rules  mcp_servers  inherits_parent_context
    spawn        spawn        enabled   yes            yes          yes          yes      yes             yes        yes     yes        yes     yes               yes          -
    fork         fork         enabled   yes            yes          -            -        -               yes        yes     yes        -       yes               -            yes
    claude-code  claude-code  disabled  yes            yes          yes          yes      yes             yes        yes     yes        yes     yes               yes          -
    codex        codex        disabled  yes            yes          -            yes      yes             -          yes     yes        yes     -                 yes          -
    ");
}

#[test]
fn providers_json_marks_disabled_rows() {
    let home = tempfile::tempdir().unwrap();
    let listed = listed(home.path(), &["providers", "--json"], "cross-product.yaml");
    let rows: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let names: Vec<(&str, bool)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap(),
                r["disabled"].as_bool().unwrap(),
            )
        })
        .collect();
    assert!(
        names.iter().any(|(n, d)| *n == "claude-code" && !d),
        "{names:?}"
    );
    assert!(names.iter().any(|(n, d)| *n == "codex" && !d), "{names:?}");
}

#[test]
fn agents_lists_builtins_and_project_definitions_with_warnings() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    let agents = project.join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews diffs.\ntools: Read, Grep\n---\nReview carefully.\n",
    )
    .unwrap();
    std::fs::write(
        agents.join("broken.md"),
        "---\nname: [unclosed\n---\nbody\n",
    )
    .unwrap();
    let cwd = project.to_str().unwrap();
    let output = offline(home.path(), &["agents", "--cwd", cwd]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let out = stdout(&output);
    for name in ["general-purpose", "explore", "plan", "reviewer"] {
        assert!(out.contains(name), "{name} missing: {out}");
    }
    assert!(out.contains("reviewer.md"), "{out}");
    let err = stderr(&output);
    assert!(err.contains("warnings:"), "{err}");
    assert!(err.contains("broken.md:2:"), "a located warning: {err}");

    let output = offline(home.path(), &["agents", "--json", "--cwd", cwd]);
    let value: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(value["agents"].as_array().unwrap().len(), 4);
    assert_eq!(value["warnings"].as_array().unwrap().len(), 1);
}

/// The capability that a fork has is called what `--json` calls it, in the table, in
/// `--markdown` (docs/providers.md) and in the README.
#[test]
fn inherits_parent_context_has_one_name_everywhere() {
    let home = tempfile::tempdir().unwrap();
    let column = |args: &[&str]| {
        let output = subagent(home.path()).args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        stdout(&output)
    };
    let json: serde_json::Value = serde_json::from_str(&column(&["providers", "--json"])).unwrap();
    let capabilities = json[0]["capabilities"].as_object().unwrap();
    assert!(
        capabilities.contains_key("inherits_parent_context"),
        "{json}"
    );
    let table = column(&["providers"]);
    let markdown = column(&["providers", "--markdown"]);
    let readme = std::fs::read_to_string(super::support::root().join("README.md")).unwrap();
    for (what, text) in [
        ("table", &table),
        ("markdown", &markdown),
        ("README", &readme),
    ] {
        assert!(text.contains("inherits_parent_context"), "{what}: {text}");
        assert!(!text.contains("inherits context"), "{what}: {text}");
        assert!(!text.contains("inherits_context"), "{what}: {text}");
    }
}

/// The agents table says what its columns are.
#[test]
fn agents_table_has_a_header() {
    let home = tempfile::tempdir().unwrap();
    insta::assert_snapshot!(listed(home.path(), &["agents"], "offline.yaml"), @r"
    name               provider     source     description
    general-purpose    (default)    builtin    General-purpose agent for multi-step tasks: researching questions, searching co…
                       from builtin
    explore            (default)    builtin    Fast read-only agent for exploring a codebase: finding files, searching code, a…
                       from builtin
    plan               (default)    builtin    Read-only planning agent: studies the code and returns a step-by-step implement…
                       from builtin
    ");
}

/// Options that do nothing on a command are not offered there: `--offline` (no model runs) on
/// `providers` and `agents`, `--cwd` (no project is read) on `providers`, `--markdown` on
/// `agents`.
#[test]
fn list_commands_offer_only_options_that_do_something() {
    let home = tempfile::tempdir().unwrap();
    let help = |command: &str| {
        let output = subagent(home.path())
            .args([command, "--help"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        stdout(&output)
            .lines()
            .filter_map(|line| {
                let option = line.trim_start().split("  ").next()?;
                option.starts_with('-').then(|| option.to_owned())
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        help("providers"),
        [
            "-p, --preset <FILE>",
            "--json",
            "--markdown",
            "-v, --verbose...",
            "-h, --help"
        ]
    );
    assert_eq!(
        help("agents"),
        [
            "-p, --preset <FILE>",
            "--cwd <DIR>",
            "--json",
            "-v, --verbose...",
            "-h, --help"
        ]
    );
    for (command, option) in [
        ("providers", "--offline"),
        ("providers", "--cwd"),
        ("agents", "--offline"),
        ("agents", "--markdown"),
    ] {
        let output = subagent(home.path())
            .args([command, option])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{command} {option}");
    }
}

#[test]
fn docs_providers_table_is_generated_from_the_code() {
    let home = tempfile::tempdir().unwrap();
    let generated = listed(
        home.path(),
        &["providers", "--markdown"],
        "cross-product.yaml",
    );
    let doc = std::fs::read_to_string(super::support::root().join("docs/providers.md")).unwrap();
    let start = doc.find("<!-- capability-table:start -->\n").unwrap() + 32;
    let end = doc.find("<!-- capability-table:end -->").unwrap();
    assert_eq!(
        &doc[start..end],
        generated,
        "docs/providers.md is stale: paste the output of `subagent providers --markdown --preset presets/cross-product.yaml`"
    );
}

/// A provider name longer than any terminal (and than `format!`'s 65,535-character width
/// limit): the tables cut it with an ellipsis instead of panicking.
#[test]
fn a_huge_provider_name_is_cut_in_the_tables_not_a_panic() {
    let home = tempfile::tempdir().unwrap();
    let long = "a".repeat(70_000);
    let shown = format!("{}…", "a".repeat(39));
    let header = format!(
        "provider{pad}  kind   state    output_schema  depth_limit  tool_filter  persona  model_override  max_turns  resume  isolation  effort  permission_rules  mcp_servers  inherits_parent_context\n",
        pad = " ".repeat(32)
    );
    // `providers` shows the built row (spawn on the scripted model: no effort, and why);
    // `preset validate` what its kind can honour.
    let table = format!(
        "{header}{shown}  spawn  enabled  yes            yes          yes          yes      yes             yes        yes     yes        -       yes               yes          -\n\
         {shown}: no effort: its model, scripted:scripted-offline (offline), takes no reasoning effort\n"
    );
    let kind_table = format!(
        "{header}{shown}  spawn  enabled  yes            yes          yes          yes      yes             yes        yes     yes        yes     yes               yes          -\n"
    );
    // Written out, and through a `${VAR:-default}` of the same length.
    for (file, name) in [
        ("literal.yaml", long.clone()),
        ("default.yaml", format!("${{UNSET_NAME:-{long}}}")),
    ] {
        let path = write_file(
            home.path(),
            file,
            format!("version: 1\nproviders:\n  - name: \"{name}\"\n    kind: spawn\n"),
        );

        // `subagent ARGS PATH`: exit code, stdout, stderr.
        let on_path = |args: &[&str]| {
            let output = subagent(home.path())
                .args(args)
                .arg(&path)
                .output()
                .unwrap();
            (output.status.code(), stdout(&output), stderr(&output))
        };
        assert_eq!(
            on_path(&["providers", "--preset"]),
            (
                Some(0),
                table.clone(),
                format!("preset: {} (--preset)\n", path.display())
            ),
            "{file}: providers"
        );
        assert_eq!(
            on_path(&["preset", "validate"]),
            (
                Some(0),
                format!(
                    "{}: valid\n{kind_table}delegation tools: none\n",
                    path.display()
                ),
                String::new()
            ),
            "{file}: preset validate"
        );

        // Machines get the name whole.
        let (code, out, err) = on_path(&["providers", "--json", "--preset"]);
        assert_eq!(code, Some(0), "{err}");
        let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(rows[0]["name"].as_str(), Some(long.as_str()));
    }
}

/// A reader that stops reading (`subagent providers | head -1`) ends a listing quietly, exit 0,
/// as `ls` does: no panic (exit 101), no message. The pipe's read end is closed before the
/// command starts, so every write fails.
#[test]
fn listings_end_quietly_on_a_closed_pipe() {
    let home = tempfile::tempdir().unwrap();
    let offline = preset("offline.yaml");
    let offline = offline.to_str().unwrap();
    for args in [
        &["providers"][..],
        &["providers", "--json"],
        &["providers", "--markdown"],
        &["agents"],
        &["agents", "--json"],
        &["preset", "schema"],
        &["preset", "validate", offline],
        &["preset", "validate", "--json", offline],
        &[
            "delegate",
            "--preset",
            offline,
            "Say hello from the subagent",
        ],
        &[
            "delegate",
            "--json",
            "--preset",
            offline,
            "Say hello from the subagent",
        ],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let output = std::process::Command::new(assert_cmd::cargo::cargo_bin("subagent"))
            .env_clear()
            .env("HOME", home.path())
            .current_dir(home.path())
            .args(args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {said}");
        assert!(!said.contains("panicked"), "{args:?}: {said}");
        assert!(!said.contains("Broken pipe"), "{args:?}: {said}");
    }
}

/// The table is the built row's, not its kind's: spawn on the scripted model takes no effort,
/// says why under the table and in `--json`, and a delegation asking for it is refused with
/// that reason.
#[test]
fn providers_shows_what_each_built_row_declares_and_why_not() {
    let home = tempfile::tempdir().unwrap();
    let offline = preset("offline.yaml");
    let output = subagent(home.path())
        .arg("providers")
        .arg("--preset")
        .arg(&offline)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    let spawn: Vec<&str> = text.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(spawn[0], "spawn");
    assert_eq!(spawn[11], "-", "effort: {text}");
    let why = "its model, scripted:scripted-offline (offline), takes no reasoning effort";
    assert_eq!(
        text.lines().last(),
        Some(format!("spawn: no effort: {why}").as_str())
    );

    let output = subagent(home.path())
        .args(["providers", "--json", "--preset"])
        .arg(&offline)
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(rows[0]["capabilities"]["effort"], false);
    assert_eq!(rows[0]["reasons"], serde_json::json!({"effort": why}));
    assert!(rows[1].get("reasons").is_none(), "{rows}");

    let output = subagent(home.path())
        .args(["delegate", "--effort", "high", "--preset"])
        .arg(&offline)
        .arg("hi")
        .output()
        .unwrap();
    assert_refused(
        &output,
        &format!(
            "error[UNSUPPORTED_CAPABILITY]: subagent provider \"spawn\" does not support the \
             capability: \"effort\" (effort: {why})"
        ),
        "",
    );
}
