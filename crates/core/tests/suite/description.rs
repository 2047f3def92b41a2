//! The default description never splits a character and never exceeds 80 of them.

use proptest::prelude::*;
use subagent_core::{DESCRIPTION_CHARS, default_description};

proptest! {
    #[test]
    fn at_most_80_chars_and_a_prefix_of_the_normalized_prompt(prompt in "\\PC{0,300}") {
        let description = default_description(&prompt);
        prop_assert!(description.chars().count() <= DESCRIPTION_CHARS);
        let normalized = prompt.split_whitespace().collect::<Vec<_>>().join(" ");
        prop_assert!(normalized.starts_with(&description));
        if normalized.chars().count() <= DESCRIPTION_CHARS {
            prop_assert_eq!(description, normalized);
        }
    }

    #[test]
    fn multi_byte_text_is_cut_on_char_boundaries(
        chars in proptest::collection::vec(prop_oneof![Just('é'), Just('✓'), Just('𝄞'), Just('字'), Just('a')], 0..200)
    ) {
        let prompt: String = chars.iter().collect();
        let description = default_description(&prompt);
        prop_assert_eq!(description.chars().count(), chars.len().min(DESCRIPTION_CHARS));
        let expected: String = chars.iter().take(DESCRIPTION_CHARS).collect();
        prop_assert_eq!(description, expected);
    }
}
