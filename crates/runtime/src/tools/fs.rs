//! File tools: ls, read_file, write_file, edit_file, delete. All confined to the run's roots.
//! write_file and edit_file replace a file whole (a temporary file renamed over it) under a lock
//! on its directory (`replace.rs`).
//! What they read is a regular file of at most [`MAX_READ_BYTES`]: a FIFO, a device or a larger
//! file is a tool error, never a blocked call or an unbounded allocation.

use async_trait::async_trait;
use serde_json::{Value, json};
use subagent_model::ToolSpec;

use super::replace::{lock_dir, replace_file};
use super::{
    Tool, ToolContext, ToolKind, ToolOutput, blocking, opt_bool, opt_str, opt_u64, str_arg,
};
use crate::{Error, Result};

fn spec(name: &str, description: &str, schema: Value) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        input_schema: schema,
    }
}

/// Lists a directory.
#[derive(Debug)]
pub struct LsTool;

#[async_trait]
impl Tool for LsTool {
    fn spec(&self) -> ToolSpec {
        spec(
            "ls",
            "List the entries of a directory (default: the working directory). Directories end with '/'.",
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "Directory to list, relative to the working directory or absolute."}
            }}),
        )
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    fn cut_hint(&self) -> &str {
        "list a subdirectory, or find files with glob and a narrower pattern"
    }

    fn path_argument(&self) -> Option<&'static str> {
        Some("path")
    }

    async fn call(&self, input: Value, context: &ToolContext) -> Result<ToolOutput> {
        let given = opt_str(&input, "path")?.unwrap_or(".").to_owned();
        let path = context.env.roots.resolve_read(&given)?;
        blocking(move || {
            let mut entries = Vec::new();
            for entry in std::fs::read_dir(&path).map_err(|e| Error::io(&given, e))? {
                let entry = entry.map_err(|e| Error::io(&given, e))?;
                let mut name = entry.file_name().to_string_lossy().into_owned();
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    name.push('/');
                }
                entries.push(name);
            }
            entries.sort();
            Ok(ToolOutput::ok(if entries.is_empty() {
                "(empty directory)".to_owned()
            } else {
                entries.join("\n")
            }))
        })
        .await
    }
}

/// The most lines `read_file` returns by default.
pub(super) const READ_DEFAULT_LIMIT: u64 = 2000;

/// The largest file `read_file`, `edit_file` and `grep` read, in bytes (16 MiB). Reading stops
/// after it: a larger file is a tool error (grep skips it and says so).
pub const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;

/// Reads a file for `read_file` and `edit_file`: at most [`MAX_READ_BYTES`], a regular file only
/// (a FIFO would block the call, a device never end), as a tool error naming the path as given.
fn read_bounded(path: &std::path::Path, given: &str) -> Result<Vec<u8>> {
    subagent_session::read_user_file(path, MAX_READ_BYTES).map_err(|e| {
        if e.kind() == std::io::ErrorKind::FileTooLarge {
            Error::Tool(format!(
                "{given}: {e} (read part of it with bash, e.g. `head -c` or `sed -n`)"
            ))
        } else {
            Error::io(given, e)
        }
    })
}

/// Reads a text file with numbered lines.
#[derive(Debug)]
pub struct ReadFileTool;

#[async_trait]
impl Tool for ReadFileTool {
    fn spec(&self) -> ToolSpec {
        spec(
            "read_file",
            "Read a text file. Lines are numbered from 1 (`number<TAB>line`). Use offset (1-based first line) and limit (number of lines, default 2000) for long files.",
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "The file, relative to the working directory or absolute."},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)."},
                "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read."}
            }, "required": ["path"]}),
        )
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    fn cut_hint(&self) -> &str {
        "read fewer lines at a time with offset and limit"
    }

    fn path_argument(&self) -> Option<&'static str> {
        Some("path")
    }

    async fn call(&self, input: Value, context: &ToolContext) -> Result<ToolOutput> {
        let given = str_arg(&input, "path")?.to_owned();
        let offset = opt_u64(&input, "offset")?.unwrap_or(1).max(1);
        let limit = opt_u64(&input, "limit")?.unwrap_or(READ_DEFAULT_LIMIT);
        let path = context.env.roots.resolve_read(&given)?;
        blocking(move || {
            let bytes = read_bounded(&path, &given)?;
            let text = String::from_utf8_lossy(&bytes);
            let total = text.lines().count();
            let mut out = String::new();
            let start = usize::try_from(offset - 1).unwrap_or(usize::MAX);
            let take = usize::try_from(limit).unwrap_or(usize::MAX);
            for (index, line) in text.lines().enumerate().skip(start).take(take) {
                out.push_str(&format!("{:>6}\t{line}\n", index + 1));
            }
            if out.is_empty() {
                out = if total == 0 {
                    "(empty file)".to_owned()
                } else {
                    format!("(no lines from {offset}: the file has {total} lines)")
                };
            } else if start.saturating_add(take) < total {
                out.push_str(&format!(
                    "(showing lines {offset}-{} of {total}; use offset to read more)\n",
                    start.saturating_add(take)
                ));
            }
            Ok(ToolOutput::ok(out))
        })
        .await
    }
}

/// Writes a whole file.
#[derive(Debug)]
pub struct WriteFileTool;

#[async_trait]
impl Tool for WriteFileTool {
    fn spec(&self) -> ToolSpec {
        spec(
            "write_file",
            "Create or overwrite a file with the given content. Parent directories are created.",
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "The file, relative to the working directory or absolute."},
                "content": {"type": "string", "description": "The whole new content."}
            }, "required": ["path", "content"]}),
        )
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    fn path_argument(&self) -> Option<&'static str> {
        Some("path")
    }

    async fn call(&self, input: Value, context: &ToolContext) -> Result<ToolOutput> {
        let given = str_arg(&input, "path")?.to_owned();
        let content = str_arg(&input, "content")?.to_owned();
        let path = context.env.roots.resolve(&given)?;
        let private = context.env.roots.is_private(&path);
        blocking(move || {
            let parent = path.parent().unwrap_or(&path);
            if private {
                subagent_session::private::create_dir_all(parent)
            } else {
                std::fs::create_dir_all(parent)
            }
            .map_err(|e| Error::io(&given, e))?;
            let _lock = lock_dir(parent).map_err(|e| Error::io(&given, e))?;
            replace_file(&path, content.as_bytes(), private).map_err(|e| Error::io(&given, e))?;
            Ok(ToolOutput::ok(format!(
                "Wrote {} bytes to {given}",
                content.len()
            )))
        })
        .await
    }
}

/// Replaces an exact, unique string in a file (or every occurrence with `replace_all`).
#[derive(Debug)]
pub struct EditFileTool;

#[async_trait]
impl Tool for EditFileTool {
    fn spec(&self) -> ToolSpec {
        spec(
            "edit_file",
            "Replace old_string with new_string in a file. old_string must match exactly and occur once, unless replace_all is true.",
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "The file, relative to the working directory or absolute."},
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The replacement."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."}
            }, "required": ["path", "old_string", "new_string"]}),
        )
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    fn path_argument(&self) -> Option<&'static str> {
        Some("path")
    }

    async fn call(&self, input: Value, context: &ToolContext) -> Result<ToolOutput> {
        let given = str_arg(&input, "path")?.to_owned();
        let old = str_arg(&input, "old_string")?.to_owned();
        let new = str_arg(&input, "new_string")?.to_owned();
        let replace_all = opt_bool(&input, "replace_all")?.unwrap_or(false);
        if old.is_empty() {
            return Err(Error::Arguments("\"old_string\" must not be empty".into()));
        }
        let path = context.env.roots.resolve(&given)?;
        let private = context.env.roots.is_private(&path);
        blocking(move || {
            // Read, change and write under the directory's lock: another run's edit of the
            // same file waits, and lands after this one rather than over it.
            let _lock = match path.parent() {
                Some(parent) => Some(lock_dir(parent).map_err(|e| Error::io(&given, e))?),
                None => None,
            };
            let text = String::from_utf8(read_bounded(&path, &given)?).map_err(|_| {
                Error::io(
                    &given,
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        "stream did not contain valid UTF-8",
                    ),
                )
            })?;
            let count = text.matches(old.as_str()).count();
            let updated = match count {
                0 => {
                    return Err(Error::Tool(format!(
                        "old_string was not found in {given}; nothing changed"
                    )));
                }
                1 => text.replacen(old.as_str(), &new, 1),
                _ if replace_all => text.replace(old.as_str(), &new),
                n => {
                    return Err(Error::Tool(format!(
                        "old_string occurs {n} times in {given}; give more context to make it unique, or set replace_all; nothing changed"
                    )));
                }
            };
            replace_file(&path, updated.as_bytes(), private).map_err(|e| Error::io(&given, e))?;
            Ok(ToolOutput::ok(format!(
                "Replaced {count} occurrence{} in {given}",
                if count == 1 { "" } else { "s" }
            )))
        })
        .await
    }
}

/// Deletes a file, or a directory with `recursive`.
#[derive(Debug)]
pub struct DeleteTool;

#[async_trait]
impl Tool for DeleteTool {
    fn spec(&self) -> ToolSpec {
        spec(
            "delete",
            "Delete a file. A directory is deleted only with recursive: true.",
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "The file or directory."},
                "recursive": {"type": "boolean", "description": "Delete a directory and everything in it."}
            }, "required": ["path"]}),
        )
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    fn path_argument(&self) -> Option<&'static str> {
        Some("path")
    }

    async fn call(&self, input: Value, context: &ToolContext) -> Result<ToolOutput> {
        let given = str_arg(&input, "path")?.to_owned();
        let recursive = opt_bool(&input, "recursive")?.unwrap_or(false);
        let path = context.env.roots.resolve(&given)?;
        if context.env.roots.dirs().contains(&path) {
            return Err(Error::Tool(format!(
                "{given} is a root directory; not deleted"
            )));
        }
        blocking(move || {
            let meta = path.symlink_metadata().map_err(|e| Error::io(&given, e))?;
            if meta.is_dir() {
                if !recursive {
                    return Err(Error::Tool(format!(
                        "{given} is a directory; set recursive: true to delete it"
                    )));
                }
                std::fs::remove_dir_all(&path).map_err(|e| Error::io(&given, e))?;
            } else {
                std::fs::remove_file(&path).map_err(|e| Error::io(&given, e))?;
            }
            Ok(ToolOutput::ok(format!("Deleted {given}")))
        })
        .await
    }
}
