//! Who must have signed: a policy's subject (a SAN: email, URI or DNS
//! name) and, for keyless signatures, the OIDC issuer Fulcio recorded.

use super::Signer;

/// How a signer's subject must match.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SubjectMatch {
    /// One SAN equals this exactly (ClusterImagePolicy `signedEmail`,
    /// `pkiCertificateSubject` email or hostname; Kubewarden `equal`).
    Equal(String),
    /// One SAN starts with this URL at a path boundary: the prefix itself,
    /// or the prefix followed by `/` (Kubewarden `urlPrefix`), so
    /// `https://github.com/org` does not admit `https://github.com/org-evil`.
    UrlPrefix(String),
}

impl SubjectMatch {
    fn admits(&self, subject: &str) -> bool {
        match self {
            SubjectMatch::Equal(expected) => subject == expected,
            SubjectMatch::UrlPrefix(prefix) => {
                subject.strip_prefix(prefix.as_str()).is_some_and(|rest| {
                    rest.is_empty() || prefix.ends_with('/') || rest.starts_with('/')
                })
            }
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
                found: signer.subjects.join(", "),
                required: match &self.subject {
                    SubjectMatch::Equal(s) => format!("{s:?}"),
                    SubjectMatch::UrlPrefix(p) => format!("URL prefix {p:?}"),
                },
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

    fn signer(subjects: &[&str], issuer: Option<&str>) -> Signer {
        Signer {
            subjects: subjects.iter().map(ToString::to_string).collect(),
            issuer: issuer.map(Into::into),
            signed_at: 0,
            log: None,
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
}
