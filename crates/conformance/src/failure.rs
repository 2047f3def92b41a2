//! A failed check's verdict, and the two macros that end a check with one.

use std::fmt;

/// What a failed check expected and what happened, in one line (line breaks in what it quotes
/// are written `\n`).
///
/// Its `Debug` is the verdict itself, so a `#[test]` of [`suite!`](crate::suite) that returns
/// `Err(failure)` prints `Error: conformance <check>: …` and nothing else: no backtrace, under
/// `cargo test` and `cargo nextest` alike.
#[derive(Clone, PartialEq, Eq)]
pub struct Failure {
    message: String,
}

impl Failure {
    /// A verdict saying `message`.
    pub fn new(message: impl Into<String>) -> Self {
        let message: String = message.into();
        Self {
            message: message.replace('\r', "\\r").replace('\n', "\\n"),
        }
    }

    /// The verdict.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

/// Ends the check with a [`Failure`] saying the formatted message unless `condition` holds.
macro_rules! ensure {
    ($condition:expr, $($message:tt)+) => {
        if !$condition {
            return Err($crate::Failure::new(format!($($message)+)));
        }
    };
}

/// Ends the check with a [`Failure`] unless `left == right`; the verdict is the formatted
/// message, then what came and what was expected.
macro_rules! ensure_eq {
    ($left:expr, $right:expr, $($message:tt)+) => {
        match (&$left, &$right) {
            (left, right) => {
                if left != right {
                    return Err($crate::Failure::new(format!(
                        "{}: got {:?}, expected {:?}",
                        format_args!($($message)+),
                        left,
                        right
                    )));
                }
            }
        }
    };
}

pub(crate) use {ensure, ensure_eq};
