//! Who must have signed: a policy's subject (a SAN: email, URI or DNS
//! name, each matched only by a SAN of its kind, or a regular expression)
//! and, for keyless signatures, the OIDC issuer Fulcio recorded (exactly,
//! or a regular expression).

use super::{San, Signer};

/// The longest regular expression taken, in bytes: an identity pattern is
/// a URL or an email with a few alternatives, not a program.
pub const MAX_PATTERN_BYTES: usize = 1024;
/// The most memory a compiled pattern may take (the `regex` crate's
/// program size), so a short pattern with large repetitions (`(a{1000}){1000}`)
/// is refused rather than built.
const MAX_COMPILED_PATTERN_BYTES: usize = 256 << 10;
/// How deeply groups and repetitions may nest.
const MAX_PATTERN_NESTING: u32 = 32;

/// A regular expression an entire name must match (`subjectRegExp`,
/// `issuerRegExp`: the names Kubewarden and sigstore's policy-controller
/// give cosign's `--certificate-identity-regexp` and
/// `--certificate-oidc-issuer-regexp`). Matching is anchored at both ends:
/// `https://github\.com/org/.*` does not admit
/// `https://evil.example/?https://github.com/org/`. (cosign finds the
/// pattern anywhere in the name unless it is written with `^` and `$`;
/// anchoring only ever refuses more.) The `regex` crate matches in time
/// linear in the name, so no pattern backtracks without end.
///
/// Only the source is kept, and compiled again for each match: a compiled
/// `regex::Regex` holds a cache behind interior mutability, which has no
/// place in the identities, policies and registry entries that are
/// compared and used as map keys, and identities are matched once per
/// signature of a new digest (a few a poll at most).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pattern {
    source: String,
}

/// Why a pattern is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    #[error("a regular expression of {0} bytes; at most {MAX_PATTERN_BYTES}")]
    TooLong(usize),
    #[error("an empty regular expression would admit anyone")]
    Empty,
    #[error("not a regular expression the host takes: {0}")]
    Invalid(String),
}

impl Pattern {
    /// `source`, refused when empty, longer than [`MAX_PATTERN_BYTES`],
    /// nested or compiled beyond the bounds above, or not a regular
    /// expression by itself (so wrapping it in an anchored group cannot
    /// close the group early: `a)|(.*` is refused, not anchored at one end
    /// only).
    pub fn new(source: &str) -> Result<Pattern, PatternError> {
        if source.is_empty() {
            return Err(PatternError::Empty);
        }
        if source.len() > MAX_PATTERN_BYTES {
            return Err(PatternError::TooLong(source.len()));
        }
        compile(source)?;
        let pattern = Pattern {
            source: source.to_string(),
        };
        pattern.anchored()?;
        Ok(pattern)
    }

    /// The pattern anchored at both ends, compiled.
    fn anchored(&self) -> Result<regex::Regex, PatternError> {
        compile(&format!("^(?:{})$", self.source))
    }

    /// Whether all of `name` matches (never, should the pattern that
    /// compiled when made not compile now).
    pub fn matches(&self, name: &str) -> bool {
        self.anchored().is_ok_and(|regex| regex.is_match(name))
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }
}

/// `pattern` compiled within the bounds above.
fn compile(pattern: &str) -> Result<regex::Regex, PatternError> {
    regex::RegexBuilder::new(pattern)
        .size_limit(MAX_COMPILED_PATTERN_BYTES)
        .nest_limit(MAX_PATTERN_NESTING)
        .build()
        .map_err(|e| PatternError::Invalid(e.to_string()))
}

impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pattern({:?})", self.source)
    }
}

/// How a signer's subject must match. Each kind of identity is met by its
/// kind of SAN only: a URI or DNS SAN that reads like an email is no email.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SubjectMatch {
    /// One email SAN equals this (ClusterImagePolicy `signedEmail`,
    /// `pkiCertificateSubject.email`).
    Email(String),
    /// One DNS SAN equals this (ClusterImagePolicy
    /// `pkiCertificateSubject.hostname`).
    Hostname(String),
    /// One SAN equals this exactly (Kubewarden `equal`, `guests verify
    /// --identity`): a URI SAN where this has a scheme (`https:`, `urn:`,
    /// a colon no email has), an email SAN otherwise.
    Equal(String),
    /// One URI SAN starts with this URL at a path boundary: the prefix
    /// itself, or the prefix followed by `/` (Kubewarden `urlPrefix`), so
    /// `https://github.com/org` does not admit `https://github.com/org-evil`.
    UrlPrefix(String),
    /// One SAN (email, URI or DNS name, as cosign matches any) matches
    /// this pattern entirely (`subjectRegExp`).
    RegExp(Pattern),
}

impl SubjectMatch {
    fn admits(&self, subject: &San) -> bool {
        match (self, subject) {
            (SubjectMatch::Email(expected), San::Email(name))
            | (SubjectMatch::Hostname(expected), San::Dns(name)) => name == expected,
            (SubjectMatch::Equal(expected), San::Uri(name)) if expected.contains(':') => {
                name == expected
            }
            (SubjectMatch::Equal(expected), San::Email(name)) if !expected.contains(':') => {
                name == expected
            }
            (SubjectMatch::UrlPrefix(prefix), San::Uri(name)) => {
                name.strip_prefix(prefix.as_str()).is_some_and(|rest| {
                    rest.is_empty() || prefix.ends_with('/') || rest.starts_with('/')
                })
            }
            (SubjectMatch::RegExp(pattern), san) => pattern.matches(san.value()),
            _ => false,
        }
    }

    /// How refusals name the requirement.
    fn describe(&self) -> String {
        match self {
            SubjectMatch::Email(s) => format!("email {s:?}"),
            SubjectMatch::Hostname(s) => format!("hostname {s:?}"),
            SubjectMatch::Equal(s) => format!("{s:?}"),
            SubjectMatch::UrlPrefix(p) => format!("URL prefix {p:?}"),
            SubjectMatch::RegExp(p) => format!("regular expression {:?}", p.as_str()),
        }
    }

    /// The name, prefix or pattern required.
    pub fn value(&self) -> &str {
        match self {
            SubjectMatch::Email(s)
            | SubjectMatch::Hostname(s)
            | SubjectMatch::Equal(s)
            | SubjectMatch::UrlPrefix(s) => s,
            SubjectMatch::RegExp(p) => p.as_str(),
        }
    }
}

/// How a signer's OIDC issuer must match.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IssuerMatch {
    /// Exactly this (`issuer`, ClusterImagePolicy `oidcIssuer`).
    Equal(String),
    /// All of it matches this pattern (`issuerRegExp`).
    RegExp(Pattern),
}

impl IssuerMatch {
    fn admits(&self, issuer: &str) -> bool {
        match self {
            IssuerMatch::Equal(expected) => issuer == expected,
            IssuerMatch::RegExp(pattern) => pattern.matches(issuer),
        }
    }

    /// The issuer or pattern required, as refusals and requirement names
    /// write it.
    pub fn describe(&self) -> String {
        match self {
            IssuerMatch::Equal(issuer) => issuer.clone(),
            IssuerMatch::RegExp(p) => format!("regular expression {:?}", p.as_str()),
        }
    }
}

/// A required signer identity.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Identity {
    pub subject: SubjectMatch,
    /// The OIDC issuer the certificate must record, if required.
    pub issuer: Option<IssuerMatch>,
}

/// Why a verified signer is not the required identity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityMismatch {
    #[error("wrong identity: the certificate's subjects [{found}] do not match {required}")]
    Subject { found: String, required: String },
    #[error("wrong issuer: the certificate's OIDC issuer is {found}, not {required}")]
    Issuer { found: String, required: String },
}

impl Identity {
    /// Whether `signer` is this identity; otherwise which part differs.
    pub fn matches(&self, signer: &Signer) -> Result<(), IdentityMismatch> {
        if !signer.subjects.iter().any(|s| self.subject.admits(s)) {
            return Err(IdentityMismatch::Subject {
                found: signer
                    .subjects
                    .iter()
                    .map(San::value)
                    .collect::<Vec<_>>()
                    .join(", "),
                required: self.subject.describe(),
            });
        }
        match &self.issuer {
            Some(required) if !signer.issuer.as_deref().is_some_and(|i| required.admits(i)) => {
                Err(IdentityMismatch::Issuer {
                    found: signer.issuer.clone().unwrap_or_else(|| "absent".into()),
                    required: required.describe(),
                })
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A signer with these SANs: URIs where they have a scheme, emails
    /// otherwise.
    fn signer(subjects: &[&str], issuer: Option<&str>) -> Signer {
        let san = |s: &&str| {
            if s.contains(':') {
                San::Uri(s.to_string())
            } else {
                San::Email(s.to_string())
            }
        };
        signer_of(subjects.iter().map(san).collect(), issuer)
    }

    fn signer_of(subjects: Vec<San>, issuer: Option<&str>) -> Signer {
        Signer {
            subjects,
            issuer: issuer.map(Into::into),
            signed_at: 0,
            log: None,
            signing: crate::cosign::Signing {
                signer: String::new(),
                message: String::new(),
            },
        }
    }

    #[test]
    fn subjects_match_exactly_or_at_a_path_boundary_and_issuers_exactly() {
        let ci = "https://github.com/org/repo/.github/workflows/ci.yml@refs/heads/main";
        let prefix = |p: &str| Identity {
            subject: SubjectMatch::UrlPrefix(p.into()),
            issuer: None,
        };
        let someone = signer(&["a@example.com", ci], Some("https://issuer"));
        assert_eq!(prefix("https://github.com/org").matches(&someone), Ok(()));
        assert_eq!(prefix("https://github.com/org/").matches(&someone), Ok(()));
        assert!(prefix("https://github.com/or").matches(&someone).is_err());
        let evil = signer(&["https://github.com/org-evil/x"], None);
        assert!(prefix("https://github.com/org").matches(&evil).is_err());
        let email = Identity {
            subject: SubjectMatch::Equal("a@example.com".into()),
            issuer: Some(IssuerMatch::Equal("https://issuer".into())),
        };
        assert_eq!(email.matches(&someone), Ok(()));
        let err = email.matches(&signer(&["b@example.com"], Some("https://issuer")));
        assert!(err.is_err_and(|e| e.to_string().starts_with("wrong identity")));
        let err = email.matches(&signer(&["a@example.com"], Some("https://other")));
        assert!(err.is_err_and(|e| e.to_string()
            == "wrong issuer: the certificate's OIDC issuer is https://other, not https://issuer"));
        let err = email.matches(&signer(&["a@example.com"], None));
        assert!(err.is_err_and(|e| e.to_string().contains("issuer is absent")));
    }

    /// The attack: a URI or DNS SAN spelled like the email (or hostname)
    /// a policy requires, in a certificate from the trusted CA.
    #[test]
    fn san_kinds_are_kept_apart() {
        let value = "ci@example.com";
        let kinds = [
            San::Email(value.into()),
            San::Uri(value.into()),
            San::Dns(value.into()),
        ];
        let requirements = [
            (SubjectMatch::Email(value.into()), 0),
            (SubjectMatch::Equal(value.into()), 0),
            (SubjectMatch::Hostname(value.into()), 2),
        ];
        for (subject, meets) in requirements {
            let identity = Identity {
                subject: subject.clone(),
                issuer: None,
            };
            for (i, san) in kinds.iter().enumerate() {
                let result = identity.matches(&signer_of(vec![san.clone()], None));
                assert_eq!(result.is_ok(), i == meets, "{subject:?} and {san:?}");
            }
        }
        let uri = "https://ci.example.com/workflow";
        let by_uri = Identity {
            subject: SubjectMatch::Equal(uri.into()),
            issuer: None,
        };
        assert_eq!(
            by_uri.matches(&signer_of(vec![San::Uri(uri.into())], None)),
            Ok(())
        );
        assert!(
            by_uri
                .matches(&signer_of(vec![San::Email(uri.into())], None))
                .is_err()
        );
        let prefix = Identity {
            subject: SubjectMatch::UrlPrefix("https://ci.example.com".into()),
            issuer: None,
        };
        assert!(
            prefix
                .matches(&signer_of(vec![San::Dns(uri.into())], None))
                .is_err()
        );
        let err = Identity {
            subject: SubjectMatch::Email(value.into()),
            issuer: None,
        }
        .matches(&signer_of(vec![San::Uri(value.into())], None));
        assert!(
            err.is_err_and(|e| e.to_string()
                == "wrong identity: the certificate's subjects [ci@example.com] do not match email \"ci@example.com\""),
        );
    }

    fn pattern(source: &str) -> Pattern {
        Pattern::new(source).unwrap_or_else(|e| panic!("{source}: {e}"))
    }

    /// The attacks: a name that holds the pattern's text but is not it
    /// (a workflow of another organisation whose URL carries the
    /// expected one in its query, a suffix after an email), met by an
    /// unanchored search but not by a whole match.
    #[test]
    fn patterns_match_whole_names_only() {
        let ci = "https://github.com/org/repo/.github/workflows/ci.yml@refs/heads/main";
        let workflows = Identity {
            subject: SubjectMatch::RegExp(pattern(r"https://github\.com/org/[^/]+/\.github/.*")),
            issuer: Some(IssuerMatch::RegExp(pattern(
                r"https://token\.actions\.githubusercontent\.com|https://issuer",
            ))),
        };
        assert_eq!(
            workflows.matches(&signer(&[ci], Some("https://issuer"))),
            Ok(())
        );
        for (subjects, issuer) in [
            (
                ["https://evil.example/?https://github.com/org/repo/.github/x"],
                "https://issuer",
            ),
            ([ci], "https://issuer.evil"),
            ([ci], "https://evil/https://issuer"),
        ] {
            assert!(
                workflows.matches(&signer(&subjects, Some(issuer))).is_err(),
                "{subjects:?} from {issuer}"
            );
        }
        let err = workflows.matches(&signer(&[ci], Some("https://other")));
        assert!(err.is_err_and(|e| e.to_string().ends_with(
            r#"not regular expression "https://token\\.actions\\.githubusercontent\\.com|https://issuer""#
        )));
        // An alternation is anchored as a whole, not only its first branch.
        let emails = Identity {
            subject: SubjectMatch::RegExp(pattern(r"ci@example\.com|review@example\.com")),
            issuer: None,
        };
        assert_eq!(
            emails.matches(&signer(&["review@example.com"], None)),
            Ok(())
        );
        for evil in [
            "ci@example.com.evil",
            "x.review@example.com",
            "ci@example.com\n",
        ] {
            assert!(emails.matches(&signer(&[evil], None)).is_err(), "{evil}");
        }
        let err = emails.matches(&signer(&["x@example.com"], None));
        assert!(err.is_err_and(|e| e.to_string().ends_with(
            r#"do not match regular expression "ci@example\\.com|review@example\\.com""#
        )));
    }

    /// Hostile patterns: empty (admits anyone), too long, a group closed
    /// early to escape the anchors, repetitions that compile to a huge
    /// program, nesting past the bound, and no regular expression at all.
    #[test]
    fn hostile_patterns_are_refused() {
        let deep = format!("{}a{}", "(".repeat(40), ")".repeat(40));
        let long = "a".repeat(MAX_PATTERN_BYTES + 1);
        let cases = [
            ("", "empty regular expression"),
            (long.as_str(), "of 1025 bytes"),
            ("ci@example\\.com)|(.*", "not a regular expression"),
            ("(a{1000}){1000}", "not a regular expression"),
            (r"\w{500}\w{500}\w{500}", "not a regular expression"),
            (deep.as_str(), "not a regular expression"),
            ("(unclosed", "not a regular expression"),
            ("trailing\\", "not a regular expression"),
        ];
        for (source, why) in cases {
            match Pattern::new(source) {
                Err(e) => assert!(e.to_string().contains(why), "{source:?}: {e}"),
                Ok(p) => panic!("{p:?} taken"),
            }
        }
        assert_eq!(pattern("a|b"), pattern("a|b"));
        assert_ne!(pattern("a|b"), pattern("b|a"));
    }
}
