//! Workspace trust: whether a project's `allow` rules count.
//!
//! Trusted when Claude Code's `~/.claude.json` has `projects["<dir>"].hasTrustDialogAccepted`
//! true for the project directory or a directory above it, or when our own record,
//! `~/.subagents/trusted-projects.json` (a JSON array of absolute paths the user can read and
//! edit), lists it or a directory above it. `subagent trust` writes our record; nothing here
//! ever writes `~/.claude.json`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::pattern::normalize;

/// The most `~/.claude.json` may hold (it keeps history and grows).
const MAX_CLAUDE_JSON_BYTES: u64 = 64 << 20;
/// The most our record may hold.
const MAX_RECORD_BYTES: u64 = 4 << 20;

/// Whether a project is trusted, and by what.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TrustState {
    /// Whether the project's `allow` rules count.
    pub trusted: bool,
    /// What trusts it (`~/.claude.json projects["/p"].hasTrustDialogAccepted`,
    /// `~/.subagents/trusted-projects.json "/p"`); `None` when untrusted.
    pub by: Option<String>,
    /// Trust files that exist but could not be read (the project counts as untrusted by them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Checking and recording trust.
#[derive(Clone, Copy, Debug)]
pub struct Trust;

impl Trust {
    /// Our record: `<home>/.subagents/trusted-projects.json`.
    pub fn record_path(home: &Path) -> PathBuf {
        home.join(".subagents").join("trusted-projects.json")
    }

    /// Whether `project` (absolute) is trusted for the user whose home is `home`.
    pub fn check(project: &Path, home: &Path) -> TrustState {
        let project = normalize(project);
        let mut state = TrustState::default();
        let claude = home.join(".claude.json");
        match read_json(&claude, MAX_CLAUDE_JSON_BYTES) {
            Ok(Some(value)) => {
                let projects = value.get("projects").and_then(Value::as_object);
                for dir in project.ancestors() {
                    let key = dir.to_string_lossy();
                    let accepted = projects
                        .and_then(|p| p.get(key.as_ref()))
                        .and_then(|p| p.get("hasTrustDialogAccepted"))
                        .and_then(Value::as_bool)
                        == Some(true);
                    if accepted {
                        state.trusted = true;
                        state.by = Some(format!(
                            "~/.claude.json projects[{key:?}].hasTrustDialogAccepted"
                        ));
                        return state;
                    }
                }
            }
            Ok(None) => {}
            Err(message) => state
                .warnings
                .push(format!("{}: {message}", claude.display())),
        }
        let record = Self::record_path(home);
        match read_record(&record) {
            Ok(list) => {
                if let Some(dir) = project
                    .ancestors()
                    .find(|dir| list.iter().any(|p| normalize(Path::new(p)) == *dir))
                {
                    state.trusted = true;
                    state.by = Some(format!(
                        "~/.subagents/trusted-projects.json {:?}",
                        dir.display().to_string()
                    ));
                }
            }
            Err(message) => state
                .warnings
                .push(format!("{}: {message}", record.display())),
        }
        state
    }

    /// Adds `project` to our record (creating `~/.subagents/`), written atomically (a temporary
    /// file, then a rename). Returns whether it was not listed before.
    ///
    /// # Errors
    /// [`Error::TrustWrite`] (`TRUST_WRITE_FAILED`) when the record cannot be read or written.
    pub fn record(project: &Path, home: &Path) -> Result<bool> {
        let path = Self::record_path(home);
        let mut list = read_record(&path).map_err(|message| trust_error(&path, message))?;
        let project = normalize(project).to_string_lossy().into_owned();
        if list.contains(&project) {
            return Ok(false);
        }
        list.push(project);
        write_record(&path, &list)?;
        Ok(true)
    }

    /// The projects our record lists, as written.
    ///
    /// # Errors
    /// [`Error::TrustWrite`] (`TRUST_WRITE_FAILED`) when the record cannot be read.
    pub fn list(home: &Path) -> Result<Vec<String>> {
        let path = Self::record_path(home);
        read_record(&path).map_err(|message| trust_error(&path, message))
    }

    /// Removes `project` from our record. Returns whether it was listed. A directory above it
    /// that is listed, or `~/.claude.json`, may still trust it: [`Trust::check`] says.
    ///
    /// # Errors
    /// [`Error::TrustWrite`] (`TRUST_WRITE_FAILED`) when the record cannot be read or written.
    pub fn revoke(project: &Path, home: &Path) -> Result<bool> {
        let path = Self::record_path(home);
        let mut list = read_record(&path).map_err(|message| trust_error(&path, message))?;
        let project = normalize(project);
        let before = list.len();
        list.retain(|p| normalize(Path::new(p)) != project);
        if list.len() == before {
            return Ok(false);
        }
        write_record(&path, &list)?;
        Ok(true)
    }
}

fn trust_error(path: &Path, message: impl Into<String>) -> Error {
    Error::TrustWrite {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// The JSON at `path`; `Ok(None)` when missing.
fn read_json(path: &Path, limit: u64) -> std::result::Result<Option<Value>, String> {
    match subagent_session::read_user_text(path, limit) {
        Ok(text) if text.trim().is_empty() => Ok(Some(Value::Null)),
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| e.to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// Our record's paths; empty when it does not exist.
fn read_record(path: &Path) -> std::result::Result<Vec<String>, String> {
    match read_json(path, MAX_RECORD_BYTES)? {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|item| match item {
                Value::String(path) => Ok(path),
                other => Err(format!("not a path: {other}")),
            })
            .collect(),
        Some(_) => Err("must be a JSON array of absolute paths".to_owned()),
    }
}

fn write_record(path: &Path, list: &[String]) -> Result<()> {
    let fail = |e: std::io::Error| trust_error(path, e.to_string());
    let dir = path.parent().unwrap_or(Path::new("."));
    subagent_session::private::create_dir_all(dir).map_err(fail)?;
    let mut text =
        serde_json::to_string_pretty(list).map_err(|e| trust_error(path, e.to_string()))?;
    text.push('\n');
    // Unique per process, thread and instant: two writers never share a temporary file.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let thread = format!("{:?}", std::thread::current().id());
    let thread: String = thread.chars().filter(char::is_ascii_digit).collect();
    let temp = dir.join(format!(
        ".trusted-projects.json.{}.{thread}.{nanos}.tmp",
        std::process::id()
    ));
    subagent_session::private::write(&temp, text.as_bytes()).map_err(fail)?;
    std::fs::rename(&temp, path).map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        fail(e)
    })
}
