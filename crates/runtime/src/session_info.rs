//! What a session is, for people listing them: a small JSON file beside its transcript
//! (`<session id>.json`, private to the user like the transcript), written when each run of the
//! session ends — which provider ran it (the `run` parent is `parent`), its first prompt, when
//! it began and last ran, how its last run ended, the tokens all its runs used. A transcript
//! without one is a session whose first run has not ended (it is being written) or was killed.
//!
//! It is also what refuses a resume by the wrong kind of run: a session recorded as one
//! provider's is not continued by another ([`SessionStore::resume`](crate::SessionStore::resume)).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use subagent_core::Outcome;
use subagent_core::text::{Limit, truncate};
use subagent_core::time::now_ms;

/// The longest first prompt kept, in characters.
const PROMPT_CHARS: usize = 200;

/// What is recorded of a session (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// The provider that runs it (`spawn`, `fork`, …; `parent` for `subagent run`).
    pub provider: String,
    /// What its first run was asked to do, as the delegation described it (`explore: …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its first prompt (at most 200 characters, on one line).
    pub prompt: String,
    /// When its first run began, in milliseconds since the Unix epoch.
    pub started_ms: u64,
    /// When its last run ended.
    pub updated_ms: u64,
    /// How its last run ended (`completed`, `failed`, `cancelled`, …).
    pub status: String,
    /// How many runs it has had (the first, then each resume).
    pub runs: u32,
    /// Input tokens of all its runs.
    pub input_tokens: u64,
    /// Output tokens of all its runs.
    pub output_tokens: u64,
    /// The directory its runs worked in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
}

/// Who runs a session and what it was asked, known when its run starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SessionLabel {
    pub provider: String,
    pub description: Option<String>,
    pub prompt: String,
    pub started_ms: u64,
}

impl SessionLabel {
    pub(crate) fn new(provider: &str, description: Option<String>, prompt: &str) -> Self {
        let flat: String = prompt.split_whitespace().collect::<Vec<_>>().join(" ");
        let prompt = truncate(&flat, Limit::Chars(PROMPT_CHARS)).into_owned();
        Self {
            provider: provider.to_owned(),
            description,
            prompt,
            started_ms: now_ms(),
        }
    }
}

/// The most bytes an info file may hold to be read.
const MAX_INFO: u64 = 64 * 1024;

/// The info file of the transcript at `transcript`.
pub(crate) fn info_path(transcript: &Path) -> PathBuf {
    transcript.with_extension("json")
}

/// Reads the info of the transcript at `transcript`; `None` when there is none (or it does not
/// parse: it is rewritten when the session next ends).
pub(crate) fn read(transcript: &Path) -> Option<SessionInfo> {
    let text = subagent_session::read_user_file(&info_path(transcript), MAX_INFO).ok()?;
    serde_json::from_slice(&text).ok()
}

/// Records that a run of the session at `transcript` ended with `outcome`: the first run's
/// label, or the earlier info with this run added. A failure is logged; nothing else depends
/// on it.
pub(crate) fn record(
    transcript: &Path,
    label: Option<&SessionLabel>,
    outcome: &Outcome,
    cwd: &Path,
) {
    let earlier = read(transcript);
    let (provider, description, prompt, started_ms, runs, input, output) = match (&earlier, label) {
        (Some(info), _) => (
            info.provider.clone(),
            info.description.clone(),
            info.prompt.clone(),
            info.started_ms,
            info.runs,
            info.input_tokens,
            info.output_tokens,
        ),
        (None, Some(label)) => (
            label.provider.clone(),
            label.description.clone(),
            label.prompt.clone(),
            label.started_ms,
            0,
            0,
            0,
        ),
        (None, None) => return,
    };
    let info = SessionInfo {
        provider,
        description,
        prompt,
        started_ms,
        updated_ms: now_ms(),
        status: outcome.status.to_string(),
        runs: runs + 1,
        input_tokens: input + outcome.usage.input_tokens,
        output_tokens: output + outcome.usage.output_tokens,
        cwd: Some(cwd.to_path_buf()),
    };
    let written = serde_json::to_vec_pretty(&info)
        .map_err(std::io::Error::other)
        .and_then(|bytes| {
            let path = info_path(transcript);
            let mut tmp = path.clone().into_os_string();
            tmp.push(".tmp");
            let tmp = PathBuf::from(tmp);
            subagent_session::private::write(&tmp, &bytes)?;
            std::fs::rename(&tmp, &path)
        });
    if let Err(error) = written {
        tracing::warn!(path = %transcript.display(), %error, "session info not written");
    }
}
