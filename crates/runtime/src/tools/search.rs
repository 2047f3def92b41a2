//! Search tools: glob and grep, gitignore-aware (ripgrep's `ignore` and `globset` crates; grep
//! matches lines with `regex`).

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde_json::{Value, json};
use subagent_model::ToolSpec;

use super::fs::MAX_READ_BYTES;
use super::{Roots, Tool, ToolContext, ToolKind, ToolOutput, blocking, opt_bool, opt_str, str_arg};
use crate::{Error, Result};
use subagent_core::text::{Limit, truncate_marked};

/// The most paths glob and grep return.
pub(super) const SEARCH_RESULT_LIMIT: usize = 500;

/// The most bytes of one matching line grep shows (a minified file is one huge line).
pub(super) const MAX_LINE_BYTES: usize = 2000;

/// What follows a matching line cut past [`MAX_LINE_BYTES`].
const LINE_CUT: &str = "… (line cut)";

/// `line`, cut to whole characters: at most [`MAX_LINE_BYTES`] of it, then [`LINE_CUT`].
fn cut_line(line: &str) -> std::borrow::Cow<'_, str> {
    truncate_marked(
        line,
        Limit::Bytes(MAX_LINE_BYTES + LINE_CUT.len()),
        LINE_CUT,
    )
}

fn walker(root: &Path) -> ignore::Walk {
    ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .git_global(false)
        .git_exclude(true)
        .require_git(false)
        .sort_by_file_path(|a, b| a.cmp(b))
        .build()
}

fn base(roots: &Roots, input: &Value) -> Result<(String, PathBuf)> {
    let given = opt_str(input, "path")?.unwrap_or(".").to_owned();
    let path = roots.resolve_read(&given)?;
    Ok((given, path))
}

fn finish(mut lines: Vec<String>, empty: &str) -> ToolOutput {
    if lines.is_empty() {
        return ToolOutput::ok(empty);
    }
    let more = lines.len().saturating_sub(SEARCH_RESULT_LIMIT);
    lines.truncate(SEARCH_RESULT_LIMIT);
    let mut out = lines.join("\n");
    if more > 0 {
        out.push_str(&format!("\n({more} more results not shown)"));
    }
    ToolOutput::ok(out)
}

/// Finds files by glob pattern.
#[derive(Debug)]
pub struct GlobTool;

#[async_trait]
impl Tool for GlobTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "glob".into(),
            description: "Find files whose path (relative to the search directory) matches a glob pattern such as `**/*.rs`. Files ignored by .gitignore and hidden files are skipped. Results are sorted.".into(),
            input_schema: json!({"type": "object", "properties": {
                "pattern": {"type": "string", "description": "The glob pattern."},
                "path": {"type": "string", "description": "Directory to search (default: the working directory)."}
            }, "required": ["pattern"]}),
        }
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    fn cut_hint(&self) -> &str {
        "narrow the pattern or the path"
    }

    fn path_argument(&self) -> Option<&'static str> {
        Some("path")
    }

    async fn call(&self, input: Value, context: &ToolContext) -> Result<ToolOutput> {
        let pattern = str_arg(&input, "pattern")?.to_owned();
        let (_, root) = base(&context.env.roots, &input)?;
        let matcher = globset::GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| Error::Arguments(format!("invalid glob pattern: {e}")))?
            .compile_matcher();
        let roots = context.env.roots.clone();
        let cancel = context.cancel.clone();
        blocking(move || {
            let mut found = Vec::new();
            for entry in walker(&root).flatten() {
                if cancel.is_cancelled() {
                    return Err(Error::Tool("cancelled".into()));
                }
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    continue;
                }
                let Ok(relative) = entry.path().strip_prefix(&root) else {
                    continue;
                };
                if matcher.is_match(relative) {
                    found.push(roots.display(entry.path()));
                }
            }
            Ok(finish(found, "No files matched."))
        })
        .await
    }
}

/// Searches file contents with a regular expression.
#[derive(Debug)]
pub struct GrepTool;

#[async_trait]
impl Tool for GrepTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "grep".into(),
            description: "Search file contents with a regular expression (Rust regex syntax). Files ignored by .gitignore and hidden files are skipped. output_mode: `files_with_matches` (default), `content` (path:line:text) or `count`.".into(),
            input_schema: json!({"type": "object", "properties": {
                "pattern": {"type": "string", "description": "The regular expression."},
                "path": {"type": "string", "description": "File or directory to search (default: the working directory)."},
                "glob": {"type": "string", "description": "Only files matching this glob, e.g. `*.rs`."},
                "case_insensitive": {"type": "boolean"},
                "output_mode": {"type": "string", "enum": ["files_with_matches", "content", "count"]}
            }, "required": ["pattern"]}),
        }
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    fn cut_hint(&self) -> &str {
        "narrow the pattern, the path or the glob, or ask for files_with_matches or count first"
    }

    fn path_argument(&self) -> Option<&'static str> {
        Some("path")
    }

    async fn call(&self, input: Value, context: &ToolContext) -> Result<ToolOutput> {
        let pattern = str_arg(&input, "pattern")?;
        let insensitive = opt_bool(&input, "case_insensitive")?.unwrap_or(false);
        let mode = opt_str(&input, "output_mode")?
            .unwrap_or("files_with_matches")
            .to_owned();
        if !["files_with_matches", "content", "count"].contains(&mode.as_str()) {
            return Err(Error::Arguments(format!(
                "\"output_mode\" must be files_with_matches, content or count, got {mode:?}"
            )));
        }
        let regex = regex::RegexBuilder::new(pattern)
            .case_insensitive(insensitive)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| Error::Arguments(format!("invalid regular expression: {e}")))?;
        let file_glob = opt_str(&input, "glob")?
            .map(|g| {
                globset::Glob::new(g)
                    .map(|g| g.compile_matcher())
                    .map_err(|e| Error::Arguments(format!("invalid glob: {e}")))
            })
            .transpose()?;
        let (_, root) = base(&context.env.roots, &input)?;
        let roots = context.env.roots.clone();
        let cancel = context.cancel.clone();
        blocking(move || {
            let mut out = Vec::new();
            let mut too_large = Vec::new();
            for entry in walker(&root).flatten() {
                if cancel.is_cancelled() {
                    return Err(Error::Tool("cancelled".into()));
                }
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    continue;
                }
                if let Some(glob) = &file_glob
                    && !entry.file_name().to_str().is_some_and(|n| glob.is_match(n))
                    && !glob.is_match(entry.path())
                {
                    continue;
                }
                let bytes = match subagent_session::read_user_file(entry.path(), MAX_READ_BYTES) {
                    Ok(bytes) => bytes,
                    Err(e) if e.kind() == std::io::ErrorKind::FileTooLarge => {
                        too_large.push(roots.display(entry.path()));
                        continue;
                    }
                    Err(_) => continue,
                };
                if bytes.contains(&0) {
                    continue; // binary
                }
                let text = String::from_utf8_lossy(&bytes);
                let shown = roots.display(entry.path());
                let mut count = 0usize;
                for (number, line) in text.lines().enumerate() {
                    if regex.is_match(line) {
                        count += 1;
                        if mode == "content" {
                            out.push(format!("{shown}:{}:{}", number + 1, cut_line(line)));
                        }
                    }
                }
                if count > 0 {
                    match mode.as_str() {
                        "count" => out.push(format!("{shown}:{count}")),
                        "files_with_matches" => out.push(shown),
                        _ => {}
                    }
                }
            }
            let mut output = finish(out, "No matches.");
            if !too_large.is_empty() {
                output.content.push_str(&format!(
                    "\n(not searched, over {MAX_READ_BYTES} bytes: {})",
                    too_large.join(", ")
                ));
            }
            Ok(output)
        })
        .await
    }
}
