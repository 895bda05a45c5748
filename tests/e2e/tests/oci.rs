//! Guests as OCI artifacts against a real registry (CNCF distribution) with
//! `oras` on the other side: pushes and pulls in both directions, a module of
//! the wrong world refused from its config, a tampered layer refused, a
//! pinned module loaded from cache with the registry gone. With the real
//! `cosign`: a module signed by key, as `.sig` and as a Sigstore bundle, is
//! verified; another key, no signature or a replaced layer is refused,
//! naming the reference and the keys tried. `guests wit --push` is fetched
//! back by the real `wkg`. `tests/tools/oci/build.sh` fetches the tools;
//! needs the release `mco-host` and the guests (`make host guests`).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use serde_json::Value;

use support::controller::host_binary;
use support::guests::sha256;
use support::oci::{Registry, cosign, docker_config, ok, ok_json, run, sign, tools};

const KUBEWARDEN_LAYER: &str = "application/vnd.wasm.content.layer.v1+wasm";

fn host(registry: &Registry) -> Result<Command> {
    let mut cmd = Command::new(host_binary()?);
    cmd.arg("--plain-http-registry")
        .arg(registry.addr.to_string());
    Ok(cmd)
}

fn guest(name: &str) -> Result<PathBuf> {
    let bin = host_binary()?;
    Ok(bin
        .parent()
        .context("no release dir")?
        .join("guests")
        .join(name))
}

/// `wkg` 0.16.1, which `make test` installs beside the wasmtime CLI
/// (`<target>/tools/bin`).
fn wkg() -> Result<PathBuf> {
    let bin = host_binary()?;
    let wkg = bin
        .parent()
        .and_then(Path::parent)
        .context("no target dir")?
        .join("tools/bin/wkg");
    ensure!(
        wkg.is_file(),
        "{} does not exist: `make test` installs it (cargo install wkg)",
        wkg.display()
    );
    Ok(wkg)
}

/// A WIT package, as wit-component encodes it: two sources give the same
/// bytes exactly when they declare the same package.
fn encoded(resolve: &wit_parser::Resolve, name: &str) -> Result<Vec<u8>> {
    let (id, _) = resolve
        .packages
        .iter()
        .find(|(_, p)| p.name.to_string() == name)
        .with_context(|| format!("no package {name}"))?;
    wit_component::encode(resolve, id)
}

#[test]
fn guests_travel_through_a_real_registry_and_oras() -> Result<()> {
    let tools = tools()?;
    let registry = Registry::start(&tools.registry)?;
    let work = tempfile::tempdir()?;
    let mcn = guest("mcn.wasm")?;
    let mcn_bytes = std::fs::read(&mcn)?;

    // guests push writes the CNCF layout; oras pulls the same bytes.
    let mcn_ref = registry.reference("guests/mcn:v1");
    let pushed = ok_json(
        host(&registry)?
            .args(["guests", "push"])
            .arg(&mcn)
            .arg(&mcn_ref),
    )?;
    assert_eq!(pushed["sha256"], sha256(&mcn_bytes));
    let manifest_digest = pushed["manifestDigest"]
        .as_str()
        .context("no manifestDigest")?
        .to_string();
    let oras_out = work.path().join("oras");
    let out = run(Command::new(&tools.oras)
        .args(["pull", "--plain-http", "-o"])
        .arg(&oras_out)
        .arg(&mcn_ref))?;
    ensure!(
        out.status.success(),
        "oras pull: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(oras_out.join("mcn.wasm"))?, mcn_bytes);
    let manifest = ok_json(
        Command::new(&tools.oras)
            .args(["manifest", "fetch", "--plain-http"])
            .arg(&mcn_ref),
    )?;
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    assert_eq!(manifest["layers"][0]["mediaType"], "application/wasm");
    let out = run(Command::new(&tools.oras)
        .args(["resolve", "--plain-http"])
        .arg(&mcn_ref))?;
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), manifest_digest);

    // inspect reads the world from the registry's copy.
    let inspected = ok_json(host(&registry)?.args(["guests", "inspect"]).arg(&mcn_ref))?;
    assert_eq!(inspected["world"], "node-state-reporter");
    assert_eq!(
        inspected["registry"]["manifestDigest"],
        manifest_digest.as_str()
    );
    assert!(
        inspected["registry"]["config"]["component"]["exports"]
            .as_array()
            .is_some_and(|e| e.iter().any(|x| x
                .as_str()
                .is_some_and(|x| x.starts_with("mco:machine-config/node-state@")))),
        "{inspected}"
    );

    // oras pushes a boot image guest in Kubewarden's layout; the host pulls
    // it, and the pull of a ~590 KB guest is timed for the record.
    let gcp = guest("bootimage-gcp.wasm")?;
    let gcp_bytes = std::fs::read(&gcp)?;
    let gcp_ref = registry.reference("guests/gcp:kw");
    let out = run(Command::new(&tools.oras)
        .current_dir(gcp.parent().context("no guest dir")?)
        .args(["push", "--plain-http"])
        .arg(&gcp_ref)
        .arg(format!("bootimage-gcp.wasm:{KUBEWARDEN_LAYER}")))?;
    ensure!(
        out.status.success(),
        "oras push: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pulled_file = work.path().join("gcp.wasm");
    let started = Instant::now();
    let pulled = ok_json(
        host(&registry)?
            .args(["guests", "pull", "-o"])
            .arg(&pulled_file)
            .arg(&gcp_ref),
    )?;
    eprintln!(
        "pulled {} bytes from the loopback registry in {:?} (mco-host guests pull, process start to exit)",
        gcp_bytes.len(),
        started.elapsed()
    );
    assert_eq!(pulled["layerMediaType"], KUBEWARDEN_LAYER);
    assert_eq!(std::fs::read(&pulled_file)?, gcp_bytes);

    // A module of the wrong world is refused from its config: the layer
    // is removed from the registry's storage first, so a download would
    // fail differently.
    let wrong_ref = registry.reference("guests/wrong:v1");
    let wrong = ok_json(
        host(&registry)?
            .args(["guests", "push"])
            .arg(&gcp)
            .arg(&wrong_ref),
    )?;
    let layer = registry.blob(&format!("sha256:{}", sha256(&gcp_bytes)));
    std::fs::remove_file(&layer).with_context(|| format!("removing {}", layer.display()))?;
    let registry_file = work.path().join("registry.yaml");
    std::fs::write(&registry_file, format!("mcn:\n  oci: {wrong_ref}\n"))?;
    let out = run(host(&registry)?
        .arg("--registry")
        .arg(&registry_file)
        .arg("guests"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("not mco:machine-config/node-state")
            && stderr.contains("the layer was not downloaded"),
        "{stderr}"
    );
    assert!(wrong["manifestDigest"].is_string());

    // A tampered layer (same size, other bytes) is a digest mismatch.
    let tampered_ref = registry.reference("guests/tampered:v1");
    let aws = guest("bootimage-aws.wasm")?;
    let mut aws_bytes = std::fs::read(&aws)?;
    ok_json(
        host(&registry)?
            .args(["guests", "push"])
            .arg(&aws)
            .arg(&tampered_ref),
    )?;
    let layer = registry.blob(&format!("sha256:{}", sha256(&aws_bytes)));
    let last = aws_bytes.len() - 1;
    aws_bytes[last] ^= 0xff;
    std::fs::write(&layer, &aws_bytes)?;
    let out = run(host(&registry)?
        .args(["guests", "pull", "-o"])
        .arg(work.path().join("tampered.wasm"))
        .arg(&tampered_ref))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("the module layer has digest") || stderr.contains("Digest"),
        "{stderr}"
    );
    assert!(!work.path().join("tampered.wasm").exists());

    // Pinned by digest and cached, a module loads with the registry gone.
    let cache = work.path().join("cache");
    let pinned = format!("{}@{manifest_digest}", registry.reference("guests/mcn"));
    std::fs::write(
        &registry_file,
        format!("mcn:\n  oci: {pinned}\n  sha256: {}\n", sha256(&mcn_bytes)),
    )?;
    let check = |registry_cmd: &mut Command| -> Result<Value> {
        ok_json(
            registry_cmd
                .arg("--oci-cache-dir")
                .arg(&cache)
                .arg("--registry")
                .arg(&registry_file)
                .arg("guests"),
        )
    };
    let online = check(&mut host(&registry)?)?;
    let plain_http = registry.addr.to_string();
    drop(registry);
    let mut offline_cmd = Command::new(host_binary()?);
    offline_cmd.arg("--plain-http-registry").arg(plain_http);
    let offline = check(&mut offline_cmd)?;
    assert_eq!(online, offline);
    assert!(online.to_string().contains(&sha256(&mcn_bytes)), "{online}");
    Ok(())
}

/// A registry that wants credentials (htpasswd, two users), through
/// `--auth-file`: one Docker config with an entry per team sends each
/// team's credentials to its own repositories only, as the registry's own
/// log shows; no credentials, a wrong password and a config with no entry
/// for the repository are refused, saying so.
#[test]
fn credentials_go_only_to_the_repositories_they_are_for() -> Result<()> {
    let tools = tools()?;
    let users = [("team-a", "pw-a"), ("team-b", "pw-b")];
    let registry = Registry::with_users(&tools.registry, &users)?;
    let work = tempfile::tempdir()?;
    let addr = registry.addr.to_string();
    let auth_file = |name: &str, entries: &[(&str, &str, &str)]| -> Result<PathBuf> {
        let path = work.path().join(name);
        std::fs::write(&path, docker_config(entries))?;
        Ok(path)
    };
    let (key_a, key_b) = (format!("{addr}/team-a"), format!("{addr}/team-b"));
    let both = auth_file(
        "both.json",
        &[(&key_a, "team-a", "pw-a"), (&key_b, "team-b", "pw-b")],
    )?;
    let mcn = guest("mcn.wasm")?;
    let mcn_bytes = std::fs::read(&mcn)?;
    for (team, _) in users {
        let reference = registry.reference(&format!("{team}/mcn:v1"));
        ok_json(
            host(&registry)?
                .args(["guests", "push", "--auth-file"])
                .arg(&both)
                .arg(&mcn)
                .arg(&reference),
        )?;
        let out = work.path().join(format!("{team}.wasm"));
        ok_json(
            host(&registry)?
                .args(["guests", "pull", "--auth-file"])
                .arg(&both)
                .arg("-o")
                .arg(&out)
                .arg(&reference),
        )?;
        assert_eq!(std::fs::read(&out)?, mcn_bytes);
        let readers = registry.manifest_readers(&format!("{team}/mcn"))?;
        assert_eq!(readers, [team], "who read {team}/mcn");
    }

    let refused = |auth: Option<&Path>, team: &str| -> Result<String> {
        let mut cmd = host(&registry)?;
        cmd.args(["guests", "pull", "-o"])
            .arg(work.path().join("refused.wasm"));
        if let Some(auth) = auth {
            cmd.arg("--auth-file").arg(auth);
        }
        let out = run(cmd.arg(registry.reference(&format!("{team}/mcn:v1"))))?;
        ensure!(!out.status.success(), "pulled {team}/mcn with {auth:?}");
        Ok(String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let anonymous = refused(None, "team-a")?;
    let wrong = auth_file("wrong.json", &[(&addr, "team-a", "not-pw-a")])?;
    let wrong_password = refused(Some(&wrong), "team-a")?;
    for err in [&anonymous, &wrong_password] {
        assert!(
            err.contains(&format!("oci:{addr}/team-a/mcn:v1"))
                && err.contains("cannot read the manifest"),
            "{err}"
        );
    }
    let only_a = auth_file("only-a.json", &[(&key_a, "team-a", "pw-a")])?;
    let no_entry = refused(Some(&only_a), "team-b")?;
    assert!(
        no_entry.contains(&format!(
            "--auth-file {}: no credentials for {addr}/team-b/mcn",
            only_a.display()
        )),
        "{no_entry}"
    );
    // Mistyped auth files holding team a's real credentials: each is
    // refused saying where it is wrong, and quotes no credential.
    let encoded = support::oci::base64(b"team-a:pw-a")?;
    let mistyped = [
        (
            format!(r#"{{"auths":"{encoded}"}}"#),
            "auths is not an object",
        ),
        (
            format!(r#"{{"auths":{{"{key_a}":"{encoded}"}}}}"#),
            "is not an object",
        ),
        (
            format!(r#"{{"auths":{{"{key_a}":{{"username":"team-a","password":["pw-a"]}}}}}}"#),
            ".password is not a string",
        ),
        (
            format!(r#"{{"auths":{{"{key_a}":{{"auth":"team-a:pw-a"}}}}}}"#),
            "is not base64",
        ),
        (
            format!(r#"{{"auths":{{"{key_a}":{{"auth":{encoded}}}}}}}"#),
            "is not JSON (line 1, column",
        ),
    ];
    for (i, (config, why)) in mistyped.iter().enumerate() {
        let path = work.path().join(format!("mistyped-{i}.json"));
        std::fs::write(&path, config)?;
        let err = refused(Some(&path), "team-a")?;
        assert!(err.contains(why), "{config}: {err}");
        for secret in ["pw-a", &encoded] {
            assert!(!err.contains(secret), "{config}: quoted: {err}");
        }
    }
    assert!(!work.path().join("refused.wasm").exists());
    assert_eq!(registry.manifest_readers("team-b/mcn")?, ["team-b"]);
    Ok(())
}

/// `mco-host guests pull --key …` of `reference`: the JSON on success, the
/// error text otherwise.
fn pull_verified(
    registry: &Registry,
    reference: &str,
    keys: &[&Path],
    out: &Path,
) -> Result<std::result::Result<Value, String>> {
    let mut cmd = host(registry)?;
    cmd.args(["guests", "pull", "-o"]).arg(out);
    for key in keys {
        cmd.arg("--key").arg(key);
    }
    let output = run(cmd.arg(reference))?;
    if output.status.success() {
        return Ok(Ok(serde_json::from_slice(&output.stdout)?));
    }
    Ok(Err(String::from_utf8_lossy(&output.stderr).into_owned()))
}

#[test]
fn cosign_signatures_are_verified_in_both_forms_and_bad_ones_refused() -> Result<()> {
    let tools = tools()?;
    let registry = Registry::start(&tools.registry)?;
    let work = tempfile::tempdir()?;
    let dir = work.path();
    for prefix in ["team", "other"] {
        ok(cosign(&tools, dir).args(["generate-key-pair", "--output-key-prefix", prefix]))?;
    }
    let (team, other) = (dir.join("team.pub"), dir.join("other.pub"));
    let mcn = guest("mcn.wasm")?;
    let push = |path: &str| -> Result<String> {
        let reference = registry.reference(path);
        let pushed = ok_json(
            host(&registry)?
                .args(["guests", "push"])
                .arg(&mcn)
                .arg(&reference),
        )?;
        let pinned = pushed["pinned"].as_str().context("no pinned")?;
        Ok(pinned.to_string())
    };

    for (repository, bundle) in [("signed/legacy:v1", false), ("signed/bundle:v1", true)] {
        let pinned = push(repository)?;
        let started = Instant::now();
        sign(&tools, dir, "team.key", &pinned, bundle)?;
        eprintln!(
            "cosign signed {pinned} (bundle: {bundle}) in {:?}",
            started.elapsed()
        );
        let form = if bundle {
            "sigstore-bundle"
        } else {
            "simple-signing"
        };

        // The host verifies the tag's module under the team key, and
        // inspect lists the signature with the key it verifies under.
        let reference = registry.reference(repository);
        let started = Instant::now();
        let pulled = pull_verified(&registry, &reference, &[&other, &team], &dir.join("m.wasm"))?
            .map_err(anyhow::Error::msg)?;
        eprintln!(
            "verified pull of {reference} in {:?} (process start to exit)",
            started.elapsed()
        );
        assert_eq!(pulled["verifiedBy"], team.display().to_string(), "{pulled}");
        let inspected = ok_json(
            host(&registry)?
                .args(["guests", "inspect", "--key"])
                .arg(&team)
                .arg(&reference),
        )?;
        let signatures = &inspected["registry"]["signatures"];
        assert_eq!(signatures[0]["form"], form, "{inspected}");
        assert_eq!(
            signatures[0]["verified"]["key"],
            team.display().to_string(),
            "{inspected}"
        );

        // The same module under another key only is refused, naming the
        // reference and the key tried.
        let refused = pull_verified(&registry, &reference, &[&other], &dir.join("x.wasm"))?;
        let err = refused.err().context("verified under the wrong key")?;
        assert!(
            err.contains(&format!("oci:{reference}"))
                && err.contains("no valid cosign signature")
                && err.contains(&other.display().to_string())
                && err.contains("not signed by"),
            "{err}"
        );
        assert!(!dir.join("x.wasm").exists());

        // The offline registry check holds an entry to its verify keys.
        let registry_file = dir.join("registry.yaml");
        std::fs::write(
            &registry_file,
            format!("verify: {{keys: [{{file: team.pub}}]}}\nmcn:\n  oci: {pinned}\n"),
        )?;
        ok_json(
            host(&registry)?
                .arg("--registry")
                .arg(&registry_file)
                .arg("guests"),
        )?;
        std::fs::write(
            &registry_file,
            format!("mcn:\n  oci: {pinned}\n  verify: {{keys: [{{file: other.pub}}]}}\n"),
        )?;
        let out = run(host(&registry)?
            .arg("--registry")
            .arg(&registry_file)
            .arg("guests"))?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(
            stderr.contains("no valid cosign signature") && stderr.contains("other.pub"),
            "{stderr}"
        );
    }

    // Unsigned: refused, saying no signature was found.
    let unsigned = push("unsigned/mcn:v1")?;
    let err = pull_verified(&registry, &unsigned, &[&team], &dir.join("u.wasm"))?
        .err()
        .context("an unsigned module verified")?;
    assert!(
        err.contains(&format!("oci:{unsigned}"))
            && err.contains("no cosign signature found")
            && err.contains(&team.display().to_string()),
        "{err}"
    );

    // A signed module whose tag now points at another layer (one byte
    // changed, pushed by oras): the new manifest has no signature, and
    // the layer is not downloaded.
    let reference = registry.reference("signed/legacy:v1");
    let mut bytes = std::fs::read(&mcn)?;
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(dir.join("mcn.wasm"), &bytes)?;
    ok(Command::new(&tools.oras)
        .current_dir(dir)
        .args(["push", "--plain-http"])
        .arg(&reference)
        .arg(format!("mcn.wasm:{KUBEWARDEN_LAYER}")))?;
    let err = pull_verified(&registry, &reference, &[&team], &dir.join("t.wasm"))?
        .err()
        .context("a tampered module verified")?;
    assert!(
        err.contains(&format!("oci:{reference}")) && err.contains("no cosign signature found"),
        "{err}"
    );
    assert!(!dir.join("t.wasm").exists());
    Ok(())
}

/// The WIT package in the layout the wasm-pkg tools read: `guests wit
/// --push` publishes `mco:machine-config@<version>` at the repository and
/// tag wkg maps it to, with wkg's media types and annotations (read back
/// with oras), and the real `wkg` fetches it alone (`wkg get`, as the
/// package binary and as WIT) and as the dependency of a world that
/// includes one of its worlds (`wkg fetch`): every time the package of
/// `wit/`. A guest `guests push` publishes, wkg fetches as well.
#[test]
fn the_wit_package_is_published_where_wkg_finds_it() -> Result<()> {
    let tools = tools()?;
    let wkg = wkg()?;
    let registry = Registry::start(&tools.registry)?;
    let work = tempfile::tempdir()?;
    let pushed = ok_json(
        host(&registry)?
            .args(["guests", "wit", "--push"])
            .arg(registry.reference("mco/machine-config")),
    )?;
    let package = pushed["package"].as_str().context("no package")?;
    let (_, version) = package.split_once('@').context("no version")?;
    let reference = registry.reference(&format!("mco/machine-config:{version}"));
    assert_eq!(pushed["reference"], reference.as_str());

    let manifest = ok_json(
        Command::new(&tools.oras)
            .args(["manifest", "fetch", "--plain-http"])
            .arg(&reference),
    )?;
    assert_eq!(
        manifest["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    assert_eq!(manifest["layers"].as_array().map(Vec::len), Some(1));
    let layer = &manifest["layers"][0];
    assert_eq!(layer["mediaType"], "application/wasm");
    assert_eq!(
        layer["annotations"]["org.opencontainers.image.title"],
        "machine-config.wasm"
    );
    assert_eq!(
        layer["digest"],
        format!("sha256:{}", pushed["sha256"].as_str().unwrap_or_default())
    );
    assert_eq!(
        manifest["annotations"]["org.opencontainers.image.version"],
        version
    );
    let config = ok_json(
        Command::new(&tools.oras)
            .args(["manifest", "fetch-config", "--plain-http"])
            .arg(&reference),
    )?;
    assert_eq!(config["layerDigests"][0], layer["digest"]);
    assert!(config["created"].is_string(), "{config}");
    let exports = config["component"]["exports"].to_string();
    for world in [
        "node-state-reporter",
        "boot-image-selector",
        "node-state",
        "types",
    ] {
        assert!(
            exports.contains(&format!("\"mco:machine-config/{world}@{version}\"")),
            "{world} not in {exports}"
        );
    }

    // wkg finds the namespace on this registry, over plain HTTP.
    let addr = registry.addr;
    let wkg_config = work.path().join("wkg-config.toml");
    std::fs::write(
        &wkg_config,
        format!(
            "[namespace_registries]\n\
             mco = {{ registry = \"{addr}\", metadata = {{ preferredProtocol = \"oci\", oci = {{ registry = \"{addr}\" }} }} }}\n\n\
             [registry.\"{addr}\".oci]\nprotocol = \"http\"\n"
        ),
    )?;
    let cache = work.path().join("wkg-cache");
    let wkg_cmd = |action: &str| {
        let mut cmd = Command::new(&wkg);
        cmd.arg(action)
            .arg("--config")
            .arg(&wkg_config)
            .arg("--cache")
            .arg(&cache);
        cmd
    };
    let mut files = wit_parser::Resolve::default();
    files.push_dir(repo_wit())?;
    let expected = encoded(&files, package)?;

    let binary = work.path().join("package.wasm");
    ok(wkg_cmd("get")
        .args(["--format", "wasm", "-o"])
        .arg(&binary)
        .arg(package))?;
    assert_eq!(std::fs::read(&binary)?, expected);
    assert_eq!(
        sha256(&expected),
        pushed["sha256"].as_str().unwrap_or_default()
    );

    let text = work.path().join("package.wit");
    ok(wkg_cmd("get")
        .args(["--format", "wit", "-o"])
        .arg(&text)
        .arg(package))?;
    let mut got = wit_parser::Resolve::default();
    got.push_file(&text)?;
    assert_eq!(encoded(&got, package)?, expected);

    // A guest's own world, which includes one of the package's worlds,
    // gets the package as a dependency.
    let app = work.path().join("app");
    std::fs::create_dir_all(app.join("wit"))?;
    std::fs::write(
        app.join("wit/world.wit"),
        format!(
            "package test:app;\n\nworld app {{\n  include mco:machine-config/boot-image-selector@{version};\n}}\n"
        ),
    )?;
    ok(wkg_cmd("fetch").current_dir(&app).arg("wit"))?;
    let mut fetched = wit_parser::Resolve::default();
    fetched.push_dir(app.join("wit"))?;
    assert_eq!(encoded(&fetched, package)?, expected);

    // A guest `guests push` publishes under a version tag is a component
    // wkg fetches too, byte for byte.
    let mcn = guest("mcn.wasm")?;
    ok_json(
        host(&registry)?
            .args(["guests", "push"])
            .arg(&mcn)
            .arg(registry.reference("mco/mcn-guest:1.0.0")),
    )?;
    let component = work.path().join("mcn-guest.wasm");
    ok(wkg_cmd("get")
        .args(["--format", "wasm", "-o"])
        .arg(&component)
        .arg("mco:mcn-guest@1.0.0"))?;
    assert_eq!(std::fs::read(&component)?, std::fs::read(&mcn)?);
    Ok(())
}

/// The repository's `wit/`.
fn repo_wit() -> PathBuf {
    mco_e2e::crate_dir().join("../../wit")
}
