//! Generated text (`repeat`): the pieces of `text` repeated to `bytes` bytes, made one at a time
//! so that neither the scripted model nor the fake server ever holds the whole answer.

use std::sync::Arc;

use super::REPEAT_PIECE;

/// The next piece of generated text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// The whole block ([`Repeater::block`]): its bytes can be sent as made once.
    Whole,
    /// The end of the text: a prefix of the block, cut on a character boundary.
    Part(&'a str),
}

/// The pieces of `text` repeated until `bytes` bytes (without end for `None`): each piece is
/// the block (`text` repeated to about [`REPEAT_PIECE`] bytes, at least once), the last a prefix
/// of it cut on a character boundary (so the total falls short of `bytes` by less than one
/// character when `text` is not ASCII).
#[derive(Clone, Debug)]
pub struct Repeater {
    block: Arc<str>,
    left: Option<u64>,
}

impl Repeater {
    /// The pieces of `text` (not empty: an empty one yields nothing) repeated to `bytes`.
    pub fn new(text: &str, bytes: Option<u64>) -> Self {
        let times = (REPEAT_PIECE / text.len().max(1)).max(1);
        let block: Arc<str> = text.repeat(times).into();
        let left = if block.is_empty() { Some(0) } else { bytes };
        Self { block, left }
    }

    /// What a whole piece is.
    pub fn block(&self) -> &str {
        &self.block
    }

    /// The bytes still to come (`None`: without end).
    pub fn left(&self) -> Option<u64> {
        self.left
    }

    /// The next piece; `None` once `bytes` are out (or when the rest is shorter than the next
    /// character).
    pub fn next_piece(&mut self) -> Option<Piece<'_>> {
        let whole = self.block.len() as u64;
        if whole == 0 {
            return None;
        }
        match self.left {
            None => Some(Piece::Whole),
            Some(left) if left >= whole => {
                self.left = Some(left - whole);
                Some(Piece::Whole)
            }
            Some(left) => {
                self.left = Some(0);
                let cut = self
                    .block
                    .floor_char_boundary(usize::try_from(left).unwrap_or(usize::MAX));
                (cut > 0).then(|| Piece::Part(&self.block[..cut]))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn all(text: &str, bytes: u64) -> String {
        let mut repeater = Repeater::new(text, Some(bytes));
        let block = repeater.block().to_owned();
        let mut out = String::new();
        while let Some(piece) = repeater.next_piece() {
            match piece {
                Piece::Whole => out.push_str(&block),
                Piece::Part(part) => out.push_str(part),
            }
        }
        out
    }

    #[test]
    fn pieces_add_up_to_the_bytes_asked() {
        let text = all("ab", 100_001);
        assert_eq!(text.len(), 100_001);
        assert!(text.starts_with("abab") && text.ends_with("aba"));
        assert_eq!(all("x", 0), "");
        // "é" is two bytes: an odd count ends one byte short, on a character boundary.
        assert_eq!(all("é", 5), "éé");
        assert_eq!(all("", 10), "");
        let long = "y".repeat(REPEAT_PIECE * 2);
        assert_eq!(all(&long, 5), "yyyyy");
    }

    #[test]
    fn without_bytes_the_pieces_never_end() {
        let mut repeater = Repeater::new("x", None);
        for _ in 0..1000 {
            assert_eq!(repeater.next_piece(), Some(Piece::Whole));
        }
        assert_eq!(repeater.block().len(), REPEAT_PIECE);
    }
}
