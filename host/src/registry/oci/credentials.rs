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
}
