//! Who must have signed: a policy's subject (a SAN: email, URI or DNS
//! name, each matched only by a SAN of its kind) and, for keyless
//! signatures, the OIDC issuer Fulcio recorded.

use super::{San, Signer};

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
        }
    }

    /// The name or prefix required.
    pub fn value(&self) -> &str {
        match self {
            SubjectMatch::Email(s)
            | SubjectMatch::Hostname(s)
            | SubjectMatch::Equal(s)
            | SubjectMatch::UrlPrefix(s) => s,
        }
    }
}

/// A required signer identity.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Identity {
    pub subject: SubjectMatch,
    /// The OIDC issuer the certificate must record, if required.
    pub issuer: Option<String>,
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
            Some(required) if signer.issuer.as_ref() != Some(required) => {
                Err(IdentityMismatch::Issuer {
                    found: signer.issuer.clone().unwrap_or_else(|| "absent".into()),
                    required: required.clone(),
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
            issuer: Some("https://issuer".into()),
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
}
