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

/// A pull spec as the MachineConfigNode CRD accepts it in `configImage`
/// (openshift/api `machineconfiguration/v1` `ImageDigestFormat`): exactly
/// what its two CEL rules and `maxLength: 447` accept, so a node annotation
/// the apiserver would refuse is an error here instead of a failed write.
/// The rules: one `@`, then `sha256:` and 64 lowercase hex digits; before
/// it, a name matching
/// `^([a-zA-Z0-9-]+\.)+[a-zA-Z0-9-]+(:[0-9]{2,5})?/([a-zA-Z0-9-_]{0,61}/)?[a-zA-Z0-9-_.]*?$`.
pub fn is_image_digest(value: &str) -> bool {
    let Some((name, digest)) = value.split_once('@') else {
        return false;
    };
    value.len() <= 447
        && digest.strip_prefix("sha256:").is_some_and(|hex| {
            hex.len() == 64
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
        && is_image_name(name)
}

/// The name part of [`is_image_digest`]'s pattern. The host takes no `:`
/// or `/`, so it runs to the first of them; a `:` must start a port, and
/// the rest after the `/` holds at most one more `/`.
fn is_image_name(name: &str) -> bool {
    let (host, rest) = name.split_at(name.find([':', '/']).unwrap_or(name.len()));
    let path = match rest.strip_prefix(':') {
        Some(port_and_path) => match port_and_path.split_once('/') {
            Some((port, path))
                if (2..=5).contains(&port.len()) && port.bytes().all(|b| b.is_ascii_digit()) =>
            {
                path
            }
            _ => return false,
        },
        None => match rest.strip_prefix('/') {
            Some(path) => path,
            None => return false,
        },
    };
    let label = |b: u8| b.is_ascii_alphanumeric() || b == b'-';
    let dotted_host = host.contains('.')
        && host
            .split('.')
            .all(|part| !part.is_empty() && part.bytes().all(label));
    let namespace = |b: u8| label(b) || b == b'_';
    let repository = |part: &str| part.bytes().all(|b| namespace(b) || b == b'.');
    let path_ok = match path.split_once('/') {
        None => repository(path),
        Some((ns, repo)) => ns.len() <= 61 && ns.bytes().all(namespace) && repository(repo),
    };
    dotted_host && path_ok
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

    const HEX: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    /// Names the MCN CRD's name rule accepts. (`tests/e2e/tests/mcn_crd.rs`
    /// checks this function against the real apiserver's CEL.)
    const ACCEPTED_IMAGE_NAMES: &[&str] = &[
        "quay.io/openshift/os",
        "quay.io/os",
        "a.b/c",
        "registry.example.com:5000/ns/os-layered",
        "registry.example.com:99999/os",
        "host.io:12/os",
        "sub.domain.host.io/ns/repo.with.dots",
        "-lead.trail-/x",
        "UPPER.Case.IO/Name_Space/Re-po_",
        "quay.io/",
        "quay.io//os",
        "quay.io/ns/",
        "1.2/3",
    ];

    /// Names the name rule refuses, each with what is wrong.
    const REFUSED_IMAGE_NAMES: &[(&str, &str)] = &[
        ("", "no host"),
        ("os", "no slash"),
        ("localhost/os", "single-label host"),
        ("localhost:5000/os", "single-label host with a port"),
        ("quay.io", "no slash after the host"),
        ("quay.io:5000", "port and no slash"),
        (".quay.io/os", "empty label"),
        ("quay..io/os", "empty label"),
        ("quay.io./os", "empty label"),
        ("quay_io.com/os", "underscore in the host"),
        ("quay.io:1/os", "one-digit port"),
        ("quay.io:123456/os", "six-digit port"),
        ("quay.io:/os", "empty port"),
        ("quay.io:ab/os", "port not digits"),
        ("quay.io/os:latest", "a tag"),
        ("quay.io/a/b/c", "two namespaces"),
        ("quay.io/ns.dot/os", "dot in the namespace"),
        ("https://quay.io/os", "a scheme"),
        ("quay.io/o s", "space"),
        ("quay.io/os\n", "trailing newline"),
        ("\nquay.io/os", "leading newline"),
        ("quay.io/\u{e9}", "not ASCII"),
        ("qu\u{e4}y.io/os", "not ASCII in the host"),
        ("quay.io/os\0", "NUL"),
    ];

    #[test]
    fn digests_the_cel_rules_accept() {
        for name in ACCEPTED_IMAGE_NAMES {
            let image = format!("{name}@sha256:{HEX}");
            assert!(is_image_digest(&image), "{image:?} refused");
        }
        let namespace = format!("quay.io/{}/os@sha256:{HEX}", "n_-".repeat(20) + "x");
        assert!(is_image_digest(&namespace), "61-byte namespace refused");
        // 447 bytes in all, and one more.
        let long = |n: usize| format!("a.io/{}@sha256:{HEX}", "x".repeat(n));
        assert_eq!(long(370).len(), 447);
        assert!(is_image_digest(&long(370)));
        assert!(!is_image_digest(&long(371)));
    }

    #[test]
    fn digests_the_cel_rules_refuse() {
        for (name, why) in REFUSED_IMAGE_NAMES {
            let image = format!("{name}@sha256:{HEX}");
            assert!(!is_image_digest(&image), "{image:?} ({why}) accepted");
        }
        let name = "quay.io/openshift/os";
        for (digest, why) in [
            (format!("sha256:{}", &HEX[1..]), "63 digits"),
            (format!("sha256:{HEX}0"), "65 digits"),
            (format!("sha256:{}", HEX.to_uppercase()), "upper case"),
            (format!("sha256:{}g", &HEX[1..]), "not hex"),
            (format!("sha512:{HEX}"), "another algorithm"),
            (format!("SHA256:{HEX}"), "upper-case algorithm"),
            (HEX.to_owned(), "no algorithm"),
            (format!("sha256:{HEX}\n"), "trailing newline"),
            (format!("sha256:{HEX}@sha256:{HEX}"), "two digests"),
            (String::new(), "empty digest"),
        ] {
            let image = format!("{name}@{digest}");
            assert!(!is_image_digest(&image), "{image:?} ({why}) accepted");
        }
        for (image, why) in [
            ("", "empty"),
            ("quay.io/openshift/os:latest", "a tag, no digest"),
            ("quay.io/openshift/os", "no digest"),
            ("@", "only the separator"),
        ] {
            assert!(!is_image_digest(image), "{image:?} ({why}) accepted");
        }
        let namespace = format!("quay.io/{}/os@sha256:{HEX}", "n".repeat(62));
        assert!(!is_image_digest(&namespace), "62-byte namespace accepted");
        let at_in_name = format!("user@quay.io/os@sha256:{HEX}");
        assert!(!is_image_digest(&at_in_name), "two @");
        let huge = format!("{}.io/os@sha256:{HEX}", "a".repeat(1 << 20));
        assert!(!is_image_digest(&huge), "over 447");
    }
}
