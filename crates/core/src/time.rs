//! The wall clock as every crate records it.

/// Milliseconds since the Unix epoch, now (0 before it, `u64::MAX` past what fits).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_is_after_2026_and_does_not_go_back() {
        let first = now_ms();
        assert!(first > 1_767_225_600_000, "{first}");
        assert!(now_ms() >= first);
    }
}
