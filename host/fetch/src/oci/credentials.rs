//! Registry credentials from a Docker config: a `kubernetes.io/dockerconfigjson`
//! pull Secret in the cluster (the entry's own, or the ServiceAccount's
//! `imagePullSecrets`), `--auth-file` on the command line. Which entry a
//! repository gets is `mco_registry_formats::docker_config`'s rule.

use mco_registry_formats::docker_config::{Credentials, CredentialsError, DockerConfig, Target};
use oci_client::Reference;
use oci_client::secrets::RegistryAuth;

/// The repository `reference` is pulled from (Docker Hub's short names
/// resolved as oci-client resolves them).
pub fn target(reference: &Reference) -> Target {
    Target::new(reference.resolve_registry(), reference.repository())
}

pub fn registry_auth(credentials: Credentials) -> RegistryAuth {
    RegistryAuth::Basic(credentials.user, credentials.password)
}

/// The credentials a Docker config holds for `reference`'s repository.
pub fn docker_auth(
    config_json: &[u8],
    reference: &Reference,
) -> Result<RegistryAuth, CredentialsError> {
    auth_for(&DockerConfig::parse(config_json)?, &target(reference))
}

/// The credentials `config` holds for `target`: a config that names the
/// repository's registry nowhere is an error, not anonymous access.
pub fn auth_for(config: &DockerConfig, target: &Target) -> Result<RegistryAuth, CredentialsError> {
    config
        .lookup(target)
        .ok_or_else(|| CredentialsError::NoEntry(target.to_string()))?
        .credentials()
        .map(registry_auth)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_hub_short_names_get_the_hub_entry() {
        let config =
            br#"{"auths":{"https://index.docker.io/v1/":{"username":"hub","password":"p"}}}"#;
        for image in ["m:1", "library/m:1", "docker.io/team/m:1"] {
            let reference: Reference = match image.parse() {
                Ok(r) => r,
                Err(e) => panic!("{image}: {e}"),
            };
            let auth = docker_auth(config, &reference);
            assert!(
                matches!(&auth, Ok(RegistryAuth::Basic(user, _)) if user == "hub"),
                "{image}: {auth:?}"
            );
        }
    }

    mod no_leak {
        use base64::Engine as _;
        use proptest::prelude::*;

        use super::*;

        /// A Docker config mistyped in one of the ways a hand-written
        /// Secret is, with `secret` (and its base64) where the mistake is.
        fn mistyped(secret: &str, shape: usize, cut: usize) -> String {
            let encoded = base64::engine::general_purpose::STANDARD.encode(secret);
            let good = format!(r#"{{"auths":{{"q.io":{{"auth":"{encoded}"}}}}}}"#);
            match shape {
                0 => format!(r#"{{"auths":"{encoded}"}}"#),
                1 => format!(r#"{{"auths":{{"q.io":"{encoded}"}}}}"#),
                2 => format!(r#"{{"auths":{{"q.io":["{encoded}"]}}}}"#),
                3 => format!(r#"{{"auths":{{"q.io":{{"auth":["{encoded}"]}}}}}}"#),
                4 => format!(r#"{{"auths":{{"q.io":{{"password":{{"p":"{secret}"}}}}}}}}"#),
                5 => format!(r#"{{"auths":{{"q.io":{{"auth":"{secret}!"}}}}}}"#),
                6 => format!(r#"{{"auths":{{"q.io":{{"auth":{encoded}}}}}}}"#),
                // Cut anywhere: JSON that ends inside the secret.
                _ => good[..cut.min(good.len() - 1)].to_string(),
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

            #[test]
            fn a_mistyped_config_never_quotes_its_secret(
                secret in "[A-Za-z0-9]{6,20}:[A-Za-z0-9+/_-]{12,40}",
                shape in 0usize..8,
                cut in 0usize..120,
            ) {
                let config = mistyped(&secret, shape, cut);
                let reference: Reference = "q.io/m:1".parse().map_err(|e| TestCaseError::fail(format!("{e}")))?;
                let error = docker_auth(config.as_bytes(), &reference);
                prop_assert!(error.is_err(), "{config} was accepted");
                let shown = error.err().map(|e| format!("{e} {e:?}")).unwrap_or_default();
                let encoded = base64::engine::general_purpose::STANDARD.encode(&secret);
                let password = secret.split_once(':').map_or("", |(_, p)| p);
                for needle in [&secret, password, &encoded[..encoded.len().min(12)]] {
                    prop_assert!(!shown.contains(needle), "{config}: {shown}");
                }
            }
        }
    }
}
