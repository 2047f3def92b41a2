//! The README's main-job command, run verbatim: `cargo xtask test` ends by running the `cargo run
//! …` line of the README's "Set up" section through `bash`, exactly as a reader pastes it on a
//! fresh clone (no API key, a fresh state dir), and fails if it does not answer. The test suite
//! checks what the command runs (`crates/cli/tests/suite/readme_tour.rs`); this checks that cargo
//! runs it as written (a second binary without `default-run` once made it fail).

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The heading of the section whose first `cargo run` line is the main job.
const SET_UP: &str = "## Set up";

/// The first `cargo run …` line inside a fenced block of the README's set-up section.
pub(crate) fn main_job(readme: &str) -> Option<String> {
    let mut in_section = false;
    let mut fenced = false;
    for line in readme.lines() {
        if line.starts_with("## ") {
            in_section = line.starts_with(SET_UP);
            continue;
        }
        if !in_section {
            continue;
        }
        if line.starts_with("```") {
            fenced = !fenced;
        } else if fenced && line.starts_with("cargo run ") {
            return Some(line.to_owned());
        }
    }
    None
}

/// Runs the main job as written, in `root`, with no key and a fresh state dir.
pub(crate) fn run_main_job(root: &Path) -> Result<()> {
    let readme = std::fs::read_to_string(root.join("README.md")).context("reading README.md")?;
    let Some(line) = main_job(&readme) else {
        bail!("README.md's set-up section shows no `cargo run` command");
    };
    let state = root.join("target").join("readme-main-job");
    // A fresh state dir each time: the run writes its session there.
    let _ = std::fs::remove_dir_all(&state);
    std::fs::create_dir_all(&state).context("creating target/readme-main-job")?;
    eprintln!("xtask: the README's main job, as written: {line}");
    let output = Command::new("bash")
        .args(["-c", &line])
        .current_dir(root)
        .env("XDG_STATE_HOME", &state)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("SUBAGENT_PRESET")
        .output()
        .context("running bash")?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() || !stdout.starts_with("[offline scripted model] ") {
        bail!(
            "the README's main job failed as written ({}):\n{line}\nstdout:\n{stdout}\nstderr:\n{stderr}",
            output.status
        );
    }
    eprintln!("xtask: it answered: {}", stdout.trim());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_main_job_is_the_first_cargo_run_line_of_the_set_up_section() {
        let readme = "# x\n\n```sh\ncargo run -p other\n```\n\n## Set up (fresh)\n\nRun it:\n\n```sh\ncargo run -p subagent-cli -- run \"hi\"\n```\n\n```sh\ncargo xtask test\n```\n\n## Later\n\n```sh\ncargo run -p later\n```\n";
        assert_eq!(
            main_job(readme).as_deref(),
            Some("cargo run -p subagent-cli -- run \"hi\"")
        );
        assert_eq!(main_job("## Set up\n\nnothing\n"), None);
    }
}
