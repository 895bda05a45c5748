//! Identities for the static token file.

use std::fmt::Write as _;
use std::io::Read;

use anyhow::{Context, Result, bail};

/// Name of the built-in cluster-admin identity (group `system:masters`, which
/// bypasses RBAC). Tests cannot register another user with this name.
pub const ADMIN_USER: &str = "admin";

/// An identity the apiserver accepts through `--token-auth-file`.
///
/// Static tokens let a test act as the controller's ServiceAccount without a
/// token controller (envtest runs no kube-controller-manager), and RBAC
/// applies to them exactly as it would to a real ServiceAccount token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    /// The username RBAC subjects refer to.
    pub name: String,
    /// Shown in `SelfSubjectReview`; no authorization meaning.
    pub uid: String,
    pub groups: Vec<String>,
}

impl User {
    pub fn new<G: Into<String>>(
        name: impl Into<String>,
        groups: impl IntoIterator<Item = G>,
    ) -> Self {
        let name = name.into();
        Self {
            uid: name.clone(),
            name,
            groups: groups.into_iter().map(Into::into).collect(),
        }
    }

    /// The identity a real ServiceAccount token carries, so a ClusterRoleBinding
    /// with `kind: ServiceAccount` subject matches it unchanged.
    pub fn service_account(namespace: &str, name: &str) -> Self {
        Self::new(
            format!("system:serviceaccount:{namespace}:{name}"),
            [
                "system:serviceaccounts".to_owned(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".to_owned(),
            ],
        )
    }

    /// One line of the apiserver's token CSV: `token,user,uid,"group1,group2"`.
    pub(crate) fn token_line(&self, token: &str) -> Result<String> {
        let bad = |s: &str| s.is_empty() || s.contains([',', '"', '\n', '\r']);
        if bad(&self.name) || bad(&self.uid) {
            bail!(
                "user name/uid {:?}/{:?} must be non-empty without commas, quotes or newlines",
                self.name,
                self.uid
            );
        }
        if let Some(g) = self.groups.iter().find(|g| bad(g)) {
            bail!(
                "group {g:?} of user {:?} must be non-empty without commas, quotes or newlines",
                self.name
            );
        }
        Ok(format!(
            "{token},{},{},\"{}\"\n",
            self.name,
            self.uid,
            self.groups.join(",")
        ))
    }
}

/// 256 random bits as hex, from the kernel, so no RNG crate is needed.
pub(crate) fn random_token() -> Result<String> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("cannot read /dev/urandom for a bearer token")?;
    let mut hex = String::with_capacity(64);
    for b in bytes {
        let _ = write!(hex, "{b:02x}");
    }
    Ok(hex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_line_matches_the_apiserver_csv_format() {
        let sa = User::service_account("mco-system", "mco-host");
        assert_eq!(
            sa.token_line("t0k").unwrap(),
            "t0k,system:serviceaccount:mco-system:mco-host,system:serviceaccount:mco-system:mco-host,\"system:serviceaccounts,system:serviceaccounts:mco-system,system:authenticated\"\n"
        );
        assert!(User::new("a,b", ["g"]).token_line("t").is_err());
        assert!(User::new("a", ["g\"h"]).token_line("t").is_err());
    }

    #[test]
    fn tokens_are_random_hex() {
        let (a, b) = (random_token().unwrap(), random_token().unwrap());
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
