//! Running the `subagent` binary as a user would.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The workspace root (presets live there).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .to_path_buf()
}

/// A shipped preset.
pub fn preset(name: &str) -> PathBuf {
    root().join("presets").join(name)
}

/// The binary with a clean, offline environment: no API keys, HOME in `home`.
pub fn subagent(home: &Path) -> Command {
    let mut command = Command::cargo_bin("subagent").unwrap();
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .current_dir(home);
    command
}

/// Stdout as text.
pub fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Stderr as text.
pub fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The JSON lines of stdout.
pub fn json_lines(output: &std::process::Output) -> Vec<serde_json::Value> {
    stdout(output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// Replaces run ids and durations so snapshots are stable.
pub fn redact(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                match key.as_str() {
                    "run_id" => *item = "[run_id]".into(),
                    "duration_ms" => *item = "[duration]".into(),
                    _ => redact(item),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(redact),
        _ => {}
    }
}

/// A preset in `dir` whose model is the fake server at `url` (Anthropic protocol, key from
/// `FAKE_KEY`).
pub fn fake_preset(dir: &Path, url: &str, extra: &str) -> PathBuf {
    let path = dir.join("fake.yaml");
    std::fs::write(
        &path,
        format!(
            "version: 1\nmax_depth: 2\nmodel:\n  kind: anthropic\n  name: fake-model\n  base_url: {url}\n  api_key_env: FAKE_KEY\n  retry:\n    max_retries: 0\nproviders:\n  - name: spawn\n    kind: spawn\n  - name: fork\n    kind: fork\n{extra}tools:\n  - name: subagent\n    provider: spawn\n"
        ),
    )
    .unwrap();
    path
}
