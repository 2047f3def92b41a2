//! The pinned product CLIs (`cargo xtask install-clis` puts them in `target/clis`) and the
//! preset rows that run them against a fake model server, for the tests that drive the real
//! `claude`, `codex` and `codex-acp`.

use std::path::{Path, PathBuf};

use super::support::root;

/// A file of the pinned CLIs' install (`target/clis/node_modules/PATH`), asserted present.
pub(super) fn pinned(path: &str) -> PathBuf {
    let path = root().join("target/clis/node_modules").join(path);
    assert!(
        path.is_file(),
        "{} is missing: run `cargo xtask install-clis`",
        path.display()
    );
    path
}

/// `dir/name`, made (with its parents); its path as text, for a preset.
pub(super) fn made(dir: &Path, name: &str) -> String {
    let path = dir.join(name);
    std::fs::create_dir_all(&path).unwrap();
    path.display().to_string()
}

/// `PATH` with the directory of the pinned codex's `bwrap` first (its sandbox runs commands
/// through it).
pub(super) fn path_with_bwrap() -> String {
    let bwrap =
        pinned("@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex-resources/bwrap");
    format!(
        "{}:{}",
        bwrap.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// A `claude-code` row (under `providers:`) running the pinned `claude` against the fake
/// model at `url`, its HOME and temp dir made in `dir`, `extra` lines (indented six spaces)
/// added to its `config:`.
pub(super) fn claude_code_row(dir: &Path, url: &str, extra: &str) -> String {
    format!(
        r#"  - name: claude-code
    kind: claude-code
    config:
      binary: "{claude}"
{extra}      timeout_secs: 120
      env: {{HOME: "{home}", CLAUDE_CONFIG_DIR: "{home}/.claude", CLAUDE_CODE_TMPDIR: "{tmp}", ANTHROPIC_BASE_URL: "{url}", ANTHROPIC_API_KEY: dummy, IS_SANDBOX: "1"}}
"#,
        claude = pinned(".bin/claude").display(),
        home = made(dir, "home"),
        tmp = made(dir, "tmp"),
    )
}

/// A parity test's preset, written in `home`: the fake model at `url`, a `spawn` row, the
/// pinned `claude` as row `claude-code` in `bypassPermissions`, then `rows` (more rows under
/// `providers:`), the delegation tool on spawn, and `extra` top-level lines.
#[cfg(feature = "e2e")]
pub(super) fn parity_preset(home: &Path, url: &str, rows: &str, extra: &str) -> PathBuf {
    let claude = claude_code_row(home, url, "      permission_mode: bypassPermissions\n");
    let preset = home.join("preset.yaml");
    std::fs::write(
        &preset,
        format!(
            "version: 1\nmodel: {{kind: anthropic, name: m, base_url: \"{url}\", api_key_env: FAKE_KEY}}\nproviders:\n  - {{name: spawn, kind: spawn}}\n{claude}{rows}tools: [{{name: subagent, provider: spawn}}]\n{extra}"
        ),
    )
    .unwrap();
    preset
}

/// A `codex` row running the pinned `codex` against the fake model at `url` (Responses), its
/// HOME, temp dir and `CODEX_HOME` made in `dir`, `extra` lines added to its `config:` and
/// `env_extra` (`, NAME: value`…) to its `env:`.
pub(super) fn codex_row(dir: &Path, url: &str, extra: &str, env_extra: &str) -> String {
    format!(
        r#"  - name: codex
    kind: codex
    config:
      binary: "{codex}"
{extra}      model: gpt-5.5
      model_provider: {{id: fake, base_url: "{url}/v1", env_key: OPENAI_API_KEY}}
      codex_home: "{codex_home}"
      timeout_secs: 120
      env: {{HOME: "{home}", TMPDIR: "{tmp}", OPENAI_API_KEY: dummy{env_extra}}}
"#,
        codex = pinned(".bin/codex").display(),
        home = made(dir, "home"),
        tmp = made(dir, "tmp"),
        codex_home = made(dir, "codex-home"),
    )
}

/// An `acp` row named `name` running the pinned `codex-acp` against the fake model at `url`,
/// its HOME, temp dir and `CODEX_HOME` made in `dir`, the pinned `bwrap` on its `PATH`.
pub(super) fn codex_acp_row(dir: &Path, url: &str, name: &str) -> String {
    format!(
        r#"  - name: {name}
    kind: acp
    config:
      command: "{codex_acp}"
      args: [-c, 'model_provider="fake"', -c, 'model_providers.fake={{name="fake",base_url="{url}/v1",wire_api="responses",env_key="OPENAI_API_KEY",request_max_retries=0,stream_max_retries=0}}', -c, 'model="gpt-5.5"', -c, analytics.enabled=false, -c, features.plugins=false]
      modes: {{plan: read-only, default: read-only, accept-edits: auto}}
      timeout_secs: 120
      env: {{HOME: "{home}", TMPDIR: "{tmp}", CODEX_HOME: "{codex_home}", OPENAI_API_KEY: dummy, PATH: "{path}"}}
"#,
        codex_acp = pinned("@zed-industries/codex-acp-linux-x64/bin/codex-acp").display(),
        home = made(dir, "home"),
        tmp = made(dir, "tmp"),
        codex_home = made(dir, "codex-home"),
        path = path_with_bwrap(),
    )
}

/// Whether the pinned `claude` sent one of `requests` (its user agent names it and its version).
#[cfg(feature = "e2e")]
pub(super) fn claude_asked(requests: &[subagent_test_support::RecordedRequest]) -> bool {
    requests.iter().any(|r| {
        r.header("user-agent")
            .is_some_and(|ua| ua.starts_with("claude-cli/2.1.197"))
    })
}
