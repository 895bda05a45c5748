//! Times as the trust root writes them (RFC 3339, UTC) and as refusals
//! print them, in Unix seconds; der's calendar does the arithmetic.

use std::time::Duration;

use der::DateTime;

/// Unix seconds of a protobuf JSON timestamp, `YYYY-MM-DDTHH:MM:SS[.f]Z`
/// (protojson always writes UTC with a `Z`).
pub(crate) fn parse_rfc3339(text: &str) -> Option<u64> {
    let text = text.strip_suffix('Z')?;
    let (date, clock) = text.split_once('T')?;
    let clock = clock.split_once('.').map_or(clock, |(whole, fraction)| {
        if fraction.bytes().all(|b| b.is_ascii_digit()) {
            whole
        } else {
            ""
        }
    });
    let number = |s: &str, len: usize| -> Option<u16> {
        (s.len() == len && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let mut date = date.split('-');
    let mut clock = clock.split(':');
    let (year, month, day) = (
        number(date.next()?, 4)?,
        number(date.next()?, 2)?,
        number(date.next()?, 2)?,
    );
    let (hour, minute, second) = (
        number(clock.next()?, 2)?,
        number(clock.next()?, 2)?,
        number(clock.next()?, 2)?,
    );
    if date.next().is_some() || clock.next().is_some() {
        return None;
    }
    let byte = |n: u16| u8::try_from(n).ok();
    DateTime::new(
        year,
        byte(month)?,
        byte(day)?,
        byte(hour)?,
        byte(minute)?,
        byte(second)?,
    )
    .ok()
    .map(|t| t.unix_duration().as_secs())
}

/// A Unix time as refusals print it (RFC 3339, UTC), or the number where
/// der's calendar (years 1970-9999) has no date for it.
pub(crate) fn display(unix: u64) -> String {
    DateTime::from_unix_duration(Duration::from_secs(unix))
        .map_or_else(|_| format!("{unix} (Unix seconds)"), |t| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protojson_timestamps_parse_and_print_back() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339("2021-01-12T11:53:27.000Z"),
            Some(1_610_452_407)
        );
        assert_eq!(display(1_610_452_407), "2021-01-12T11:53:27Z");
        for bad in [
            "",
            "2021-01-12T11:53:27",
            "2021-01-12 11:53:27Z",
            "2021-13-12T11:53:27Z",
            "2021-01-12T11:53:27.x1Z",
            "2021-01-12T11:53:27+01:00",
            "+2021-01-12T11:53:27Z",
            "2021-01-12T11:53:27:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
        assert!(display(u64::MAX).contains("Unix seconds"));
    }
}
