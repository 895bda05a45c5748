//! Errors said on one line for an operator: the causes reqwest and kube
//! keep in their sources, without repeats and without credentials.

use std::fmt;
use std::ops::Range;

/// What a credential is replaced with.
const MASK: &str = "[redacted]";

/// Query parameters whose values are credentials (matched as part of the
/// name, ignoring case: `access_token`, `X-Amz-Signature`, …).
const SECRET_PARAMS: [&str; 5] = ["token", "password", "secret", "signature", "credential"];

/// An error and its sources joined by ": ", as anyhow's `{:#}` does, but
/// without a source whose text is already shown (kube's and reqwest's
/// errors often quote their sources), and with credentials masked
/// ([`mask`]): reqwest's own message alone ("error sending request")
/// hides the cause (refused, TLS, DNS), and a cause may quote a URL.
pub struct Chain<'a>(pub &'a (dyn std::error::Error + 'a));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut shown = self.0.to_string();
        let mut source = self.0.source();
        while let Some(error) = source {
            let text = error.to_string();
            if !shown.contains(&text) {
                shown.push_str(": ");
                shown.push_str(&text);
            }
            source = error.source();
        }
        f.write_str(&mask(&shown))
    }
}

/// `text` with credentials masked: the user information of a URL
/// (`https://user:password@host`), the credential after `Bearer` or
/// `Basic`, and the values of query parameters named like a credential.
pub fn mask(text: &str) -> String {
    let text = mask_userinfo(text);
    let text = mask_after_schemes(&text);
    mask_params(&text)
}

/// At most `max` characters of `text`, `…` where it was cut, for messages
/// quoting an answer.
pub fn excerpt(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// Where a URL's part, or a credential, ends in running text.
fn ends_token(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '(' | ')' | '<' | '>' | ',' | ';')
}

/// `text` with each secret masked: `next` says where the next place that
/// may hold one starts (just past its marker, never at 0), `secret` which
/// bytes of what follows are a secret, if any.
fn mask_with(
    text: &str,
    next: impl Fn(&str) -> Option<usize>,
    secret: impl Fn(&str) -> Option<Range<usize>>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = next(rest) {
        let (head, tail) = rest.split_at(start);
        out.push_str(head);
        rest = match secret(tail) {
            Some(range) => {
                out.push_str(&tail[..range.start]);
                out.push_str(MASK);
                &tail[range.end..]
            }
            None => tail,
        };
    }
    out.push_str(rest);
    out
}

/// The user information of a URL: what comes before the last `@` of its
/// authority.
fn mask_userinfo(text: &str) -> String {
    mask_with(
        text,
        |rest| rest.find("://").map(|at| at + 3),
        |url| {
            let authority = url
                .find(|c: char| ends_token(c) || matches!(c, '/' | '?' | '#'))
                .unwrap_or(url.len());
            url[..authority].rfind('@').map(|end| 0..end)
        },
    )
}

/// The credential after an authorization scheme: written as HTTP writes
/// it (`Bearer`, `Basic`), then at least eight characters of a token.
fn mask_after_schemes(text: &str) -> String {
    mask_with(
        text,
        |rest| {
            ["Bearer ", "Basic "]
                .iter()
                .filter_map(|scheme| rest.find(scheme).map(|at| at + scheme.len()))
                .min()
        },
        |token| {
            let end = token
                .find(|c: char| !(c.is_ascii_alphanumeric() || "-._~+/=".contains(c)))
                .unwrap_or(token.len());
            (end >= 8).then_some(0..end)
        },
    )
}

/// The value of a query parameter named like a credential.
fn mask_params(text: &str) -> String {
    mask_with(
        text,
        |rest| rest.find(['?', '&']).map(|at| at + 1),
        |param| {
            let name_end = param
                .find(|c: char| c == '=' || c == '&' || ends_token(c))
                .unwrap_or(param.len());
            let name = param[..name_end].to_ascii_lowercase();
            if !param[name_end..].starts_with('=')
                || !SECRET_PARAMS.iter().any(|s| name.contains(s))
            {
                return None;
            }
            let value = name_end + 1;
            let end = param[value..]
                .find(|c: char| c == '&' || c == '#' || ends_token(c))
                .map_or(param.len(), |end| value + end);
            Some(value..end)
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|l| l as _)
        }
    }

    fn layers(texts: &[&'static str]) -> Layer {
        texts
            .iter()
            .rev()
            .fold(None, |inner, text| Some(Layer(text, inner.map(Box::new))))
            .unwrap_or(Layer("", None))
    }

    #[test]
    fn a_chain_says_each_cause_once() {
        let e = layers(&["error sending request", "client error (Connect)", "refused"]);
        assert_eq!(
            Chain(&e).to_string(),
            "error sending request: client error (Connect): refused"
        );
        // kube quotes its source: shown once.
        let e = layers(&["kubeconfig: no such file", "no such file", "os error 2"]);
        assert_eq!(
            Chain(&e).to_string(),
            "kubeconfig: no such file: os error 2"
        );
        assert_eq!(Chain(&layers(&["alone"])).to_string(), "alone");
    }

    #[test]
    fn credentials_in_a_cause_are_masked() {
        let e = layers(&[
            "error sending request for url (https://admin:hunter2@vc.example/sdk?x=1)",
            "header Authorization: Bearer eyJhbGciOi.secret-part",
            "redirected to http://r.example/v2/?access_token=abc123&scope=pull#frag",
            "proxy Basic dXNlcjpwYXNz, then https://s3.example/b?X-Amz-Signature=deadbeef;",
        ]);
        let text = Chain(&e).to_string();
        for secret in [
            "admin",
            "hunter2",
            "eyJhbGciOi",
            "abc123",
            "dXNlcjpwYXNz",
            "deadbeef",
        ] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert_eq!(
            text,
            "error sending request for url (https://[redacted]@vc.example/sdk?x=1): \
             header Authorization: Bearer [redacted]: \
             redirected to http://r.example/v2/?access_token=[redacted]&scope=pull#frag: \
             proxy Basic [redacted], then https://s3.example/b?X-Amz-Signature=[redacted];"
        );
    }

    #[test]
    fn text_without_credentials_is_unchanged() {
        for text in [
            "error sending request for url (http://127.0.0.1:8443/v2/team/mcn/manifests/v1)",
            "https://r.example/v2/?n=1&last=x: HTTP 404",
            "a basic question, a Bearer of news",
            "user@example.com wrote ?token",
            "",
        ] {
            assert_eq!(mask(text), text);
        }
    }

    #[test]
    fn hostile_text_is_masked_without_panicking() {
        for text in [
            "://",
            "://@",
            "?=&=",
            "Bearer ",
            "x://a@b@c/",
            "é://é@é ?tokén=é",
        ] {
            let _ = mask(text);
        }
        assert_eq!(mask("x://a@b@c/"), "x://[redacted]@c/");
        assert_eq!(mask("Bearer "), "Bearer ");
    }

    #[test]
    fn excerpts_are_bounded() {
        assert_eq!(excerpt("abc", 5), "abc");
        assert_eq!(excerpt("abcdef", 3), "abc…");
        assert_eq!(excerpt("ééé", 2), "éé…");
    }
}
