//! Registry credentials from a Docker config: a `kubernetes.io/dockerconfigjson`
//! pull Secret in the cluster, `--auth-file` on the command line.

use std::collections::BTreeMap;

use base64::Engine as _;
use oci_client::secrets::RegistryAuth;
use serde::Deserialize;

/// The credentials a `kubernetes.io/dockerconfigjson` Secret's
/// `.dockerconfigjson` holds for `registry`. Keys are matched as the
/// kubelet does for the common forms: `host[:port]`, with or without a
/// scheme and a trailing path.
pub fn docker_auth(config_json: &[u8], registry: &str) -> Result<RegistryAuth, String> {
    #[derive(Deserialize)]
    struct DockerConfig {
        #[serde(default)]
        auths: BTreeMap<String, DockerAuth>,
    }
    #[derive(Deserialize)]
    struct DockerAuth {
        #[serde(default)]
        auth: Option<String>,
        #[serde(default)]
        username: Option<String>,
        #[serde(default)]
        password: Option<String>,
    }
    let config: DockerConfig = serde_json::from_slice(config_json)
        .map_err(|e| format!(".dockerconfigjson does not parse: {e}"))?;
    let host_of = |key: &str| {
        let key = key
            .strip_prefix("https://")
            .or_else(|| key.strip_prefix("http://"))
            .unwrap_or(key);
        key.split('/').next().unwrap_or(key).to_string()
    };
    // Docker Hub is stored under its legacy index address.
    let wanted = |host: &str| {
        host == registry
            || (registry == "index.docker.io" || registry == "docker.io")
                && (host == "index.docker.io" || host == "docker.io")
    };
    let Some(entry) = config.auths.iter().find(|(k, _)| wanted(&host_of(k))) else {
        return Err(format!("no credentials for {registry}"));
    };
    let entry = entry.1;
    if let (Some(user), Some(password)) = (&entry.username, &entry.password) {
        return Ok(RegistryAuth::Basic(user.clone(), password.clone()));
    }
    let encoded = entry.auth.as_deref().ok_or_else(|| {
        format!("the entry for {registry} has neither auth nor username/password")
    })?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|e| format!("the auth of {registry} is not base64: {e}"))?;
    let text =
        String::from_utf8(decoded).map_err(|_| format!("the auth of {registry} is not UTF-8"))?;
    let (user, password) = text
        .split_once(':')
        .ok_or_else(|| format!("the auth of {registry} is not user:password"))?;
    Ok(RegistryAuth::Basic(user.to_string(), password.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_secrets_give_credentials_for_their_registry_only() {
        let auth = base64::engine::general_purpose::STANDARD.encode("robot:s3cr:et");
        let json = format!(
            r#"{{"auths":{{"https://quay.io/v1/":{{"auth":"{auth}"}},"r.example:5000":{{"username":"u","password":"p"}}}}}}"#
        );
        let basic = |u: &str, p: &str| format!("{:?}", RegistryAuth::Basic(u.into(), p.into()));
        let got = |registry: &str| docker_auth(json.as_bytes(), registry).map(|a| format!("{a:?}"));
        assert_eq!(got("quay.io"), Ok(basic("robot", "s3cr:et")));
        assert_eq!(got("r.example:5000"), Ok(basic("u", "p")));
        assert!(got("r.example").is_err_and(|e| e.contains("no credentials for r.example")));
    }

    #[test]
    fn hostile_pull_secrets_are_refused_with_a_reason() {
        let cases: [(&[u8], &str); 5] = [
            (b"not json", "does not parse"),
            (br#"{"auths":{"q.io":{"auth":"%%%"}}}"#, "not base64"),
            (
                br#"{"auths":{"q.io":{"auth":"bm9jb2xvbg=="}}}"#,
                "not user:password",
            ),
            (br#"{"auths":{"q.io":{}}}"#, "neither auth"),
            (br#"{"auths":[]}"#, "does not parse"),
        ];
        for (json, reason) in cases {
            match docker_auth(json, "q.io") {
                Err(e) => assert!(e.contains(reason), "{e}"),
                Ok(a) => panic!("{a:?}"),
            }
        }
    }
}
