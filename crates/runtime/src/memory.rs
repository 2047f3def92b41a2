//! Agent memory in a run (docs/memory.md): an agent type's memory directory (its definition's
//! `memory:`, a `subagent_core::memory::AgentMemory` the delegation tool hands the child) is
//! created private to the user, its instructions and its `MEMORY.md` index (bounded as Claude
//! Code bounds it) go at the end of the run's system prompt, and the run's file tools may read
//! and write it wherever it is (a root of the run's, whose new files are 0600).

use std::path::{Path, PathBuf};

use subagent_core::memory::{
    AgentMemory, INDEX_FILE, MAX_INDEX_BYTES, MAX_INDEX_LINES, MemoryScope,
};

use crate::{Error, Result};

/// The largest index read at all (1 MiB); only its first lines are loaded, and a larger one is
/// reported as cut like any index over the bound.
const MAX_INDEX_READ: u64 = 1024 * 1024;

/// An agent type's memory, made ready for one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunMemory {
    /// Who shares it.
    pub scope: MemoryScope,
    /// The directory, as resolved (what the model is told).
    pub dir: PathBuf,
    /// The text appended to the run's system prompt: the instructions and the index.
    pub instructions: String,
}

impl RunMemory {
    /// Creates `memory`'s directory when missing (mode 0700, and its missing parents) and reads
    /// its index. A directory that cannot be made, or an index that cannot be read, is an
    /// [`Error::Io`]: the run would not have the memory its definition asks for.
    pub fn open(memory: &AgentMemory) -> Result<Self> {
        Self::open_for(memory, "write_file")
    }

    /// [`RunMemory::open`] for a run whose writing tool has another name (`the Write tool` for
    /// a `claude` child), which the instructions name.
    pub fn open_for(memory: &AgentMemory, write_tool: &str) -> Result<Self> {
        let io = |path: &Path, source| Error::Io {
            path: path.display().to_string(),
            source,
        };
        subagent_session::private::create_dir_all(&memory.dir).map_err(|e| io(&memory.dir, e))?;
        let index_path = memory.dir.join(INDEX_FILE);
        let index = match subagent_session::read_user_file(&index_path, MAX_INDEX_READ) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(error) if error.kind() == std::io::ErrorKind::FileTooLarge => {
                // Past the read bound: what is loaded is cut anyway; say how large it is.
                let size = std::fs::metadata(&index_path).map_or(0, |m| m.len());
                return Ok(Self::with_index(memory, &oversized(size), write_tool));
            }
            Err(error) => return Err(io(&index_path, error)),
        };
        Ok(Self::with_index(memory, &index, write_tool))
    }

    fn with_index(memory: &AgentMemory, index: &str, write_tool: &str) -> Self {
        Self {
            scope: memory.scope,
            dir: memory.dir.clone(),
            instructions: instructions(&memory.dir, memory.scope, index, write_tool),
        }
    }
}

/// A stand-in index for one over [`MAX_INDEX_READ`]: never loaded, only reported.
fn oversized(size: u64) -> String {
    format!(
        "(MEMORY.md is {} and was not read; shorten it to one line per memory)",
        human_bytes(usize::try_from(size).unwrap_or(usize::MAX))
    )
}

/// The memory section of a system prompt: what the directory is for and how to keep it (in our
/// words, naming `write_tool`), the scope's guideline and the index under `## MEMORY.md`
/// (Claude Code's heading, empty-index sentence and cut warning).
pub fn instructions(dir: &Path, scope: MemoryScope, index: &str, write_tool: &str) -> String {
    let dir = format!("{}/", dir.display());
    let loaded = load_index(index);
    format!(
        "# Persistent Agent Memory

You have a persistent, file-based memory at `{dir}`. This directory already exists — write to it directly with {write_tool} (do not create it or check that it exists).

Build it up over time, so that later runs of this agent know what you learned: who the user is and how they like to work, feedback on your approach (what to avoid and what to keep doing, and why), facts about ongoing work that the code and its history do not show, and where to find things outside the project. If you are asked to remember something, save it at once; if you are asked to forget something, remove it.

Do not save what the project itself tells (code, conventions, structure, git history), recipes for fixes already made, or details of the task at hand.

## How to save memories

1. Write each memory to its own file in that directory (e.g. `user_role.md`, `feedback_testing.md`), starting with this frontmatter:

```markdown
---
name: short-kebab-case-slug
description: one line saying what it is about, to judge its relevance later
type: user, feedback, project or reference
---
```

2. Add a line pointing to it to `{INDEX_FILE}`: `- [Title](file.md) — one-line hook`, under ~150 characters. `{INDEX_FILE}` is an index, not a memory: no frontmatter, no content of its own.

- `{INDEX_FILE}` is loaded into every run of this agent: lines after {MAX_INDEX_LINES} are cut, so keep it short
- Keep each memory file up to date, and update or remove one that turns out wrong or outdated
- Look for a memory to update before writing a new one, and organize them by topic, not by date

## Using memories

Read a memory file when it seems relevant, or when you are asked to recall something. A memory tells what was true when it was written: check that a file, function or flag it names still exists before relying on it, and update or remove a memory that no longer holds.

{guideline}

## {INDEX_FILE}

{loaded}",
        guideline = scope.guideline(),
    )
}

/// The index as loaded: trimmed, its first [`MAX_INDEX_LINES`] lines, then at most
/// [`MAX_INDEX_BYTES`] (cut at the last line end before the bound), with Claude Code's warning
/// when anything was cut; Claude Code's sentence when it is empty.
pub fn load_index(index: &str) -> String {
    let text = index.trim();
    if text.is_empty() {
        return format!(
            "Your {INDEX_FILE} is currently empty. When you save new memories, they will appear here."
        );
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let (count, bytes) = (lines.len(), text.len());
    let too_many = count > MAX_INDEX_LINES;
    let too_long = bytes > MAX_INDEX_BYTES;
    if !too_many && !too_long {
        return text.to_owned();
    }
    let mut kept = if too_many {
        lines[..MAX_INDEX_LINES].join("\n")
    } else {
        text.to_owned()
    };
    if kept.len() > MAX_INDEX_BYTES {
        let mut end = MAX_INDEX_BYTES;
        while !kept.is_char_boundary(end) {
            end -= 1;
        }
        let cut = match kept[..end].rfind('\n') {
            Some(at) if at > 0 => at,
            _ => end,
        };
        kept.truncate(cut);
    }
    let why = match (too_many, too_long) {
        (false, _) => format!(
            "{} (limit: {}) — index entries are too long",
            human_bytes(bytes),
            human_bytes(MAX_INDEX_BYTES)
        ),
        (true, false) => format!("{count} lines (limit: {MAX_INDEX_LINES})"),
        (true, true) => format!("{count} lines and {}", human_bytes(bytes)),
    };
    format!(
        "{kept}\n\n> WARNING: {INDEX_FILE} is {why}. Only part of it was loaded. Keep index entries to one line under ~200 chars; move detail into topic files."
    )
}

/// A size as Claude Code writes it: `512 bytes`, `24.4KB`, `1.5MB` (one decimal, `.0` dropped).
fn human_bytes(bytes: usize) -> String {
    let mut value = bytes as f64 / 1024.0;
    if value < 1.0 {
        return format!("{bytes} bytes");
    }
    for unit in ["KB", "MB"] {
        if value < 1024.0 {
            return format!("{}{unit}", one_decimal(value));
        }
        value /= 1024.0;
    }
    format!("{}GB", one_decimal(value))
}

fn one_decimal(value: f64) -> String {
    let text = format!("{value:.1}");
    text.strip_suffix(".0").map_or(text.clone(), str::to_owned)
}

#[cfg(test)]
mod tests;
