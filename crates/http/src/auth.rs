//! Bearer-token authentication: every request but the agent card's must carry
//! `Authorization: Bearer <token>`; the comparison takes the same time wherever the first
//! difference is.

use std::fmt;

/// The token a client must present. Never shown by `Debug`.
#[derive(Clone)]
pub struct Token(Vec<u8>);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token([redacted])")
    }
}

impl Token {
    /// A token; surrounding whitespace (a file's trailing newline) is not part of it. `None`
    /// when nothing is left.
    pub fn new(text: &str) -> Option<Self> {
        let text = text.trim();
        (!text.is_empty()).then(|| Self(text.as_bytes().to_vec()))
    }

    /// Whether an `Authorization` header value presents this token.
    pub fn admits(&self, header: Option<&[u8]>) -> bool {
        let Some(header) = header else {
            return false;
        };
        let presented = header
            .strip_prefix(b"Bearer ")
            .or_else(|| header.strip_prefix(b"bearer "))
            .unwrap_or(b"");
        constant_time_eq(presented, &self.0)
    }
}

/// Equal contents, compared in time that depends on the lengths only.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut difference = u8::from(a.len() != b.len());
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        difference |= x ^ y;
    }
    std::hint::black_box(difference) == 0
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn only_the_exact_token_after_bearer_is_admitted() {
        let token = Token::new("s3cret-token\n").unwrap();
        let cases: Vec<bool> = [
            Some(&b"Bearer s3cret-token"[..]),
            Some(b"bearer s3cret-token"),
            Some(b"Bearer s3cret-tokeN"),
            Some(b"Bearer s3cret-token2"),
            Some(b"Bearer s3cret"),
            Some(b"Bearer "),
            Some(b"s3cret-token"),
            Some(b"Basic s3cret-token"),
            None,
        ]
        .into_iter()
        .map(|header| token.admits(header))
        .collect();
        assert_eq!(
            cases,
            [true, true, false, false, false, false, false, false, false]
        );
        assert_eq!(format!("{token:?}"), "Token([redacted])");
        assert!(Token::new(" \n").is_none());
    }
}
