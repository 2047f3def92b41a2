//! A task's output file.

use std::path::{Path, PathBuf};

use serde_json::Value;
use subagent_core::RunId;
use subagent_process::Secrets;
use tokio::io::AsyncWriteExt;

/// A task's output file, buffered; flushed at each turn end and at the end.
pub(super) struct OutputFile {
    pub(super) path: PathBuf,
    writer: tokio::io::BufWriter<tokio::fs::File>,
    failed: bool,
}

impl OutputFile {
    /// Creates `<dir>/<id>.jsonl` (and `dir`, mode 0700); `None` (with a warning) when it
    /// cannot: the task runs without one.
    pub(super) fn create(dir: &Path, id: RunId) -> Option<Self> {
        use subagent_session::private;
        let path = dir.join(format!("{id}.jsonl"));
        let created = private::create_dir_all(dir).and_then(|()| private::create_file(&path));
        match created {
            Ok(file) => Some(Self {
                writer: tokio::io::BufWriter::new(tokio::fs::File::from_std(file)),
                path,
                failed: false,
            }),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot create a task's output file");
                None
            }
        }
    }

    pub(super) async fn write(&mut self, secrets: &Secrets, line: &Value, flush: bool) {
        if self.failed {
            return;
        }
        let line = format!("{line}\n");
        let line = secrets.redact(&line);
        let mut result = self.writer.write_all(line.as_bytes()).await;
        if flush && result.is_ok() {
            result = self.writer.flush().await;
        }
        if let Err(error) = result {
            tracing::warn!(path = %self.path.display(), %error, "cannot write a task's output file");
            self.failed = true;
        }
    }
}
