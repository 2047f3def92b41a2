//! Text shown on one line of the terminal: the progress view, the background tasks and the
//! questions all shorten what they quote the same way.
//!
//! Deliberately not here: printing (that is `render`), and cutting text for the model (that is
//! `subagent_core::text`, which this uses).

use subagent_core::text::{Limit, truncate};

/// Shortens `text` to `max` characters on one line.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    truncate(&flat, Limit::Chars(max)).into_owned()
}
