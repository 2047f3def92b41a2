//! Small text rules shared by every caller.

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

#[cfg(test)]
mod tests {
    use super::*;

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
