//! Validation rules the API server enforces on names, condition reasons and
//! image references, checked before anything is written so a bad input
//! becomes a clear error instead of a rejected write. Shared by the guest
//! libraries (which check their own output) and the host (which trusts no
//! guest), so both apply exactly the same rules.
//!
//! Also the one way guests bound text: [`bounded`] for a whole reason or
//! message, [`quote`] for a value quoted inside one. Both count bytes, never
//! characters, because every limit they serve (API fields, the host's
//! checks) is in bytes.

/// A DNS-1123 subdomain: at most 253 characters, dot-separated labels of
/// lowercase alphanumerics and `-`, each starting and ending alphanumeric.
pub fn is_dns1123_subdomain(value: &str) -> bool {
    value.len() <= 253
        && !value.is_empty()
        && value.split('.').all(|label| {
            let bytes = label.as_bytes();
            let edge_ok =
                |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
            edge_ok(bytes.first())
                && edge_ok(bytes.last())
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        })
}

/// `metav1.Condition.reason`: `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`, 1..=1024.
pub fn is_condition_reason(value: &str) -> bool {
    let bytes = value.as_bytes();
    let inner = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b',' | b':');
    value.len() <= 1024
        && bytes.first().is_some_and(u8::is_ascii_alphabetic)
        && bytes.iter().all(inner)
        && bytes
            .last()
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

/// A digest pull spec as the CRD accepts it: `name@sha256:<64 hex>`, at most
/// 447 characters.
pub fn is_image_digest(value: &str) -> bool {
    let Some((name, digest)) = value.rsplit_once("@sha256:") else {
        return false;
    };
    value.len() <= 447
        && !name.is_empty()
        && !name.chars().any(char::is_whitespace)
        && digest.len() == 64
        && digest
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `text` cut to at most `max` bytes on a character boundary, marked with
/// `…` when cut: messages quote names, images and annotations, which hostile
/// input can make arbitrarily long, and the host refuses over-long text.
pub fn bounded(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mark = if max >= '…'.len_utf8() { "…" } else { "" };
    format!("{}{mark}", prefix(&text, max - mark.len()))
}

/// `value` as a message quotes it: its first `max` bytes (cut on a character
/// boundary) in Rust string syntax, so quotes and control characters show
/// escaped, followed by `…` when it was cut. The quote marks and escapes
/// come on top of `max`; the message as a whole is bounded separately.
pub fn quote(value: &str, max: usize) -> String {
    let shown = prefix(value, max);
    let more = if shown.len() < value.len() { "…" } else { "" };
    format!("{shown:?}{more}")
}

/// The longest prefix of `text` of at most `max` bytes that ends on a
/// character boundary.
fn prefix(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_cuts_on_a_character_boundary() {
        assert_eq!(bounded("short".into(), 10), "short");
        let cut = bounded("é".repeat(10), 8);
        assert!(cut.len() <= 8, "{cut}");
        assert!(cut.ends_with('…'), "{cut}");
        assert_eq!(bounded("x".repeat(9000), 4096).len(), 4096);
        assert_eq!(bounded("x".repeat(9), 2), "xx");
    }

    #[test]
    fn quote_escapes_and_cuts_on_a_character_boundary() {
        assert_eq!(quote("Not A Pool!", 80), "\"Not A Pool!\"");
        assert_eq!(quote("\t", 80), "\"\\t\"");
        assert_eq!(
            quote(&"x".repeat(100), 80),
            format!("{:?}…", "x".repeat(80))
        );
        // 'é' is two bytes: 81 bytes hold 40 of them, never half of one.
        assert_eq!(quote(&"é".repeat(50), 81), format!("{:?}…", "é".repeat(40)));
        assert_eq!(quote("", 0), "\"\"");
    }

    #[test]
    fn subdomains() {
        assert!(is_dns1123_subdomain("rendered-worker-0a1b"));
        assert!(is_dns1123_subdomain("a.b-c.d"));
        for bad in [
            "",
            "Upper",
            "-lead",
            "trail-",
            "a..b",
            "under_score",
            &"a".repeat(254),
        ] {
            assert!(!is_dns1123_subdomain(bad), "{bad:?} accepted");
        }
    }

    #[test]
    fn reasons() {
        assert!(is_condition_reason("UpdateExecutedDrained"));
        assert!(is_condition_reason("A"));
        for bad in ["", "1abc", "has space", "trailing,", &"a".repeat(1025)] {
            assert!(!is_condition_reason(bad), "{bad:?} accepted");
        }
    }

    #[test]
    fn digests() {
        let hex = "0123456789abcdef".repeat(4);
        assert!(is_image_digest(&format!(
            "quay.io/openshift/os@sha256:{hex}"
        )));
        assert!(!is_image_digest("quay.io/openshift/os:latest"));
        assert!(!is_image_digest(&format!(
            "quay.io/os@sha256:{}",
            &hex[1..]
        )));
        assert!(!is_image_digest(&format!("@sha256:{hex}")));
    }
}
