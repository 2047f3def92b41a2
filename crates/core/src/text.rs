//! Small text rules shared by every caller: the default description of a request, and the one
//! way a text is cut to a bound ([`truncate`]).

use std::borrow::Cow;

/// How many characters of the prompt a missing description takes.
pub const DESCRIPTION_CHARS: usize = 80;

/// The description used when a request has none: the first [`DESCRIPTION_CHARS`] characters of
/// the prompt (whitespace runs collapsed to one space, trimmed), never splitting a UTF-8
/// character.
pub fn default_description(prompt: &str) -> String {
    let mut out = String::new();
    let mut count = 0;
    for word in prompt.split_whitespace() {
        if count > 0 {
            if count == DESCRIPTION_CHARS {
                break;
            }
            out.push(' ');
            count += 1;
        }
        for ch in word.chars() {
            if count == DESCRIPTION_CHARS {
                return out;
            }
            out.push(ch);
            count += 1;
        }
    }
    out
}

/// What marks a cut: the text kept is followed by an ellipsis. A caller whose reader needs to
/// be told more says so after it ([`truncate_marked`], e.g. `…[truncated]`).
pub const CUT: &str = "…";

/// A bound on a text: in bytes (what a buffer or a wire takes) or in characters (what a screen
/// line shows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// At most this many bytes of UTF-8.
    Bytes(usize),
    /// At most this many characters.
    Chars(usize),
}

/// `text` within `limit`: whole when it fits; else its longest start of whole characters that
/// fits with the mark [`CUT`] after it, then the mark.
pub fn truncate(text: &str, limit: Limit) -> Cow<'_, str> {
    truncate_marked(text, limit, CUT)
}

/// `text` within `limit`: whole when it fits; else its longest start of whole characters that
/// fits with `mark` after it (which starts with [`CUT`] and says what was cut, as
/// `…[truncated]`), then `mark`. A limit smaller than `mark` gives `mark` alone.
pub fn truncate_marked<'a>(text: &'a str, limit: Limit, mark: &str) -> Cow<'a, str> {
    debug_assert!(
        mark.starts_with(CUT),
        "a cut's mark starts with {CUT}: {mark:?}"
    );
    let keep = match limit {
        Limit::Bytes(max) => {
            if text.len() <= max {
                return Cow::Borrowed(text);
            }
            text.floor_char_boundary(max.saturating_sub(mark.len()))
        }
        Limit::Chars(max) => {
            if text.char_indices().nth(max).is_none() {
                return Cow::Borrowed(text);
            }
            let room = max.saturating_sub(mark.chars().count());
            text.char_indices()
                .nth(room)
                .map_or(text.len(), |(at, _)| at)
        }
    };
    Cow::Owned(format!("{}{mark}", &text[..keep]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_text_that_fits_is_kept_whole() {
        assert!(matches!(
            truncate("héllo", Limit::Bytes(6)),
            Cow::Borrowed("héllo")
        ));
        assert!(matches!(
            truncate("héllo", Limit::Chars(5)),
            Cow::Borrowed("héllo")
        ));
        assert_eq!(truncate("", Limit::Chars(0)), "");
    }

    #[test]
    fn a_cut_keeps_whole_characters_and_stays_within_the_limit_mark_included() {
        // "…" is 3 bytes: 5 bytes leave 2 for "hé" (3 bytes), so only "h".
        assert_eq!(truncate("héllo", Limit::Bytes(5)), "h…");
        assert_eq!(truncate("héllo", Limit::Bytes(6)), "héllo");
        assert_eq!(truncate("héllo!", Limit::Bytes(6)), "hé…");
        assert_eq!(truncate("héllo", Limit::Chars(4)), "hél…");
        assert_eq!(truncate("héllo", Limit::Chars(1)), "…");
        for max in 0..40 {
            let long = "é😀a".repeat(10);
            let bytes = truncate(&long, Limit::Bytes(max));
            assert!(bytes.len() <= max.max(CUT.len()), "{max}: {bytes}");
            let chars = truncate(&long, Limit::Chars(max));
            assert!(chars.chars().count() <= max.max(1), "{max}: {chars}");
        }
    }

    #[test]
    fn a_mark_may_say_what_was_cut() {
        assert_eq!(
            truncate_marked(&"a".repeat(20), Limit::Bytes(16), "…[truncated]"),
            "aa…[truncated]"
        );
        assert_eq!(truncate_marked("abc", Limit::Bytes(2), "…[x]"), "…[x]");
        assert_eq!(
            truncate_marked("abcdef", Limit::Chars(5), "… (cut)"),
            "… (cut)"
        );
    }

    #[test]
    fn short_prompts_are_kept_and_long_ones_cut_at_80_chars() {
        assert_eq!(default_description("  fix\n the   bug "), "fix the bug");
        let long = "é".repeat(100);
        let cut = default_description(&long);
        assert_eq!(cut.chars().count(), 80);
        assert_eq!(cut.len(), 160);
        assert_eq!(default_description(""), "");
    }
}
