//! A place in a definition file, shared by load warnings and errors.

use std::fmt;

use serde::Serialize;

/// A place in a definition file: 1-based line and column, either possibly unknown. Displays as
/// `:line:column`, `:line` or nothing, to follow a path (`agents/x.md:3:7`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Location {
    /// 1-based line in the file (not in the frontmatter).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based column, in characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
}

impl Location {
    /// Nowhere in particular (the whole file).
    pub const NONE: Self = Self {
        line: None,
        column: None,
    };

    /// A line and column.
    pub fn at(line: u32, column: u32) -> Self {
        Self {
            line: Some(line),
            column: Some(column),
        }
    }

    /// A whole line.
    pub fn line(line: u32) -> Self {
        Self {
            line: Some(line),
            column: None,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(line), Some(column)) => write!(f, ":{line}:{column}"),
            (Some(line), None) => write!(f, ":{line}"),
            _ => Ok(()),
        }
    }
}
