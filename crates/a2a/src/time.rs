//! RFC 3339 UTC timestamps (`2026-12-01T06:00:00.123Z`) without a date library.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, as A2A writes it (milliseconds, `Z`).
pub fn now() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format_millis(u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
}

/// Milliseconds since the Unix epoch as RFC 3339 UTC.
pub fn format_millis(millis: u64) -> String {
    let secs = millis / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX);
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        millis % 1000
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        u32::try_from(month).unwrap_or(1),
        u32::try_from(day).unwrap_or(1),
    )
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn known_instants_format_as_rfc3339_utc() {
        let formatted: Vec<String> = [0, 951_782_400_123, 1_796_083_200_000, 4_107_542_399_999]
            .into_iter()
            .map(format_millis)
            .collect();
        assert_eq!(
            formatted,
            [
                "1970-01-01T00:00:00.000Z",
                "2000-02-29T00:00:00.123Z",
                "2026-12-01T00:00:00.000Z",
                "2100-02-28T23:59:59.999Z",
            ]
        );
    }
}
