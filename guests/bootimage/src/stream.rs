//! CoreOS stream metadata (`coreos-bootimages` ConfigMap, key `stream`).
//!
//! The model mirrors `coreos/stream-metadata-go` (`stream/stream.go`,
//! `stream/rhcos/rhcos.go`) so that lookups fail the same way the Go
//! controller's helpers do. Every field is optional or defaulted, and JSON
//! `null` is read as "absent", because Go's `encoding/json` treats both alike
//! and real streams omit whole sections per architecture.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Deserializer};

/// Reads `null` as the type's default, like Go's `encoding/json` does.
fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// Why a stream document could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// An empty value is the most common way a broken payload shows up, so it
    /// gets a message of its own rather than a parser position.
    #[error("failed to parse CoreOS stream metadata: the stream is empty")]
    Empty,
    /// serde would read a JSON array positionally into the struct; Go
    /// rejects it, and so do we.
    #[error("failed to parse CoreOS stream metadata: expected a JSON object, got {0}")]
    NotAnObject(&'static str),
    #[error("failed to parse CoreOS stream metadata: {0}")]
    Json(#[from] serde_json::Error),
}

/// A lookup in a well-formed stream that found nothing.
///
/// The wording of the first three variants is the one of stream-metadata-go's
/// `GetArchitecture` and `GetAwsRegionImage`, which admins may already grep for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    #[error("stream:{stream} does not have architecture '{arch}'")]
    NoArchitecture { stream: String, arch: String },
    #[error("{stream}/{arch}: No AWS images")]
    NoAwsImages { stream: String, arch: String },
    #[error("{stream}/{arch}: No AWS images in region {region}")]
    NoAwsRegion {
        stream: String,
        arch: String,
        region: String,
    },
    #[error(
        "stream:{stream} architecture '{arch}' has no GCP image (images.gcp is missing or incomplete)"
    )]
    NoGcpImage { stream: String, arch: String },
    /// `QueryDisk`'s two messages, for the vSphere OVA.
    #[error("{stream}/{arch}: artifact '{artifact}' not found")]
    NoArtifact {
        stream: String,
        arch: String,
        artifact: &'static str,
    },
    #[error("{stream}/{arch}: artifact '{artifact}' format '{format}' disk not found")]
    NoDisk {
        stream: String,
        arch: String,
        artifact: &'static str,
        format: &'static str,
    },
}

/// The artifact and format of a vSphere OVA.
const VMWARE: &str = "vmware";
const OVA: &str = "ova";

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Stream {
    #[serde(deserialize_with = "null_default")]
    pub stream: String,
    #[serde(deserialize_with = "null_default")]
    pub metadata: Metadata,
    #[serde(deserialize_with = "null_default")]
    pub architectures: BTreeMap<String, Arch>,
    /// Every AMI the stream publishes, in any region or architecture: built
    /// once at parse time because every AWS decision asks.
    #[serde(skip)]
    aws_amis: BTreeSet<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Metadata {
    #[serde(rename = "last-modified", deserialize_with = "null_default")]
    pub last_modified: String,
    #[serde(deserialize_with = "null_default")]
    pub generator: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Arch {
    #[serde(deserialize_with = "null_default")]
    pub artifacts: BTreeMap<String, PlatformArtifacts>,
    #[serde(deserialize_with = "null_default")]
    pub images: Images,
    #[serde(rename = "rhel-coreos-extensions")]
    pub rhel_coreos_extensions: Option<Extensions>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct PlatformArtifacts {
    #[serde(deserialize_with = "null_default")]
    pub release: String,
    #[serde(deserialize_with = "null_default")]
    pub formats: BTreeMap<String, ImageFormat>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ImageFormat {
    pub disk: Option<Artifact>,
    pub kernel: Option<Artifact>,
    pub initramfs: Option<Artifact>,
    pub rootfs: Option<Artifact>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Artifact {
    #[serde(deserialize_with = "null_default")]
    pub location: String,
    #[serde(deserialize_with = "null_default")]
    pub signature: String,
    #[serde(deserialize_with = "null_default")]
    pub sha256: String,
    #[serde(rename = "uncompressed-sha256", deserialize_with = "null_default")]
    pub uncompressed_sha256: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Images {
    pub aws: Option<ReplicatedImage>,
    pub aliyun: Option<ReplicatedImage>,
    pub gcp: Option<GcpImage>,
    pub ibmcloud: Option<ReplicatedObject>,
    pub powervs: Option<ReplicatedObject>,
    pub kubevirt: Option<ContainerImage>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ReplicatedImage {
    #[serde(deserialize_with = "null_default")]
    pub regions: BTreeMap<String, SingleImage>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct SingleImage {
    #[serde(deserialize_with = "null_default")]
    pub release: String,
    #[serde(deserialize_with = "null_default")]
    pub image: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct GcpImage {
    #[serde(deserialize_with = "null_default")]
    pub release: String,
    #[serde(deserialize_with = "null_default")]
    pub project: String,
    #[serde(deserialize_with = "null_default")]
    pub family: String,
    #[serde(deserialize_with = "null_default")]
    pub name: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ReplicatedObject {
    #[serde(deserialize_with = "null_default")]
    pub regions: BTreeMap<String, SingleObject>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct SingleObject {
    #[serde(deserialize_with = "null_default")]
    pub release: String,
    #[serde(deserialize_with = "null_default")]
    pub object: String,
    #[serde(deserialize_with = "null_default")]
    pub bucket: String,
    #[serde(deserialize_with = "null_default")]
    pub url: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ContainerImage {
    #[serde(deserialize_with = "null_default")]
    pub release: String,
    #[serde(deserialize_with = "null_default")]
    pub image: String,
    #[serde(rename = "digest-ref", deserialize_with = "null_default")]
    pub digest_ref: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Extensions {
    #[serde(rename = "aws-winli")]
    pub aws_winli: Option<ReplicatedImage>,
    #[serde(rename = "azure-disk")]
    pub azure_disk: Option<AzureDisk>,
    pub marketplace: Option<Marketplace>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct AzureDisk {
    #[serde(deserialize_with = "null_default")]
    pub release: String,
    #[serde(deserialize_with = "null_default")]
    pub url: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Marketplace {
    pub azure: Option<AzureMarketplace>,
}

/// One image set per purchase variant; which ones a stream carries depends
/// on the architecture and on the product (OKD streams have none at all).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct AzureMarketplace {
    #[serde(rename = "no-purchase-plan")]
    pub no_purchase_plan: Option<AzureMarketplaceImages>,
    pub ocp: Option<AzureMarketplaceImages>,
    pub opp: Option<AzureMarketplaceImages>,
    pub oke: Option<AzureMarketplaceImages>,
    #[serde(rename = "ocp-emea")]
    pub ocp_emea: Option<AzureMarketplaceImages>,
    #[serde(rename = "opp-emea")]
    pub opp_emea: Option<AzureMarketplaceImages>,
    #[serde(rename = "oke-emea")]
    pub oke_emea: Option<AzureMarketplaceImages>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct AzureMarketplaceImages {
    #[serde(rename = "hyperVGen1")]
    pub hyper_v_gen1: Option<AzureMarketplaceImage>,
    #[serde(rename = "hyperVGen2")]
    pub hyper_v_gen2: Option<AzureMarketplaceImage>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct AzureMarketplaceImage {
    #[serde(deserialize_with = "null_default")]
    pub publisher: String,
    #[serde(deserialize_with = "null_default")]
    pub offer: String,
    #[serde(deserialize_with = "null_default")]
    pub sku: String,
    #[serde(deserialize_with = "null_default")]
    pub version: String,
}

/// What the stream says about one Azure marketplace purchase variant of
/// an architecture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AzureVariant {
    /// The architecture has no Azure marketplace section (OKD streams).
    NoMarketplace,
    /// The section has no images for the variant.
    NoVariant,
    Images(AzureMarketplaceImages),
}

/// The lookups the platform rules make in a stream, answered with owned
/// values. [`Stream`] answers them from its own parse; a guest asks the
/// host, which parsed the stream once for every guest and every pass
/// (WIT `boot-image-inputs.coreos-stream`), so no guest parses or holds a
/// whole stream.
pub trait StreamQuery {
    /// `GetArchitecture`: whether the stream has `arch` at all.
    fn architecture(&self, arch: &str) -> Result<(), LookupError>;
    /// `GetAwsRegionImage`: the RHCOS AMI published for one region.
    fn aws_region_image(&self, arch: &str, region: &str) -> Result<SingleImage, LookupError>;
    /// Whether `ami` is an RHCOS AMI of this stream in any region and for
    /// any architecture.
    fn contains_aws_ami(&self, ami: &str) -> bool;
    /// The full GCP image path.
    fn gcp_image_path(&self, arch: &str) -> Result<String, LookupError>;
    /// One Azure marketplace variant, keyed as the stream keys it
    /// (`no-purchase-plan`, `ocp`, ...).
    fn azure_variant(&self, arch: &str, variant: &str) -> AzureVariant;
    /// `artifacts.<artifact>.release`, `None` when the architecture has no
    /// such artifact.
    fn artifact_release(&self, arch: &str, artifact: &str) -> Result<Option<String>, LookupError>;
    /// `artifacts.vmware.release`: the RHCOS release a vSphere template
    /// must hold.
    fn vmware_release(&self, arch: &str) -> Result<String, LookupError>;
    /// `QueryDisk(arch, "vmware", "ova")`: the OVA a vSphere template is
    /// imported from.
    fn vmware_ova(&self, arch: &str) -> Result<Artifact, LookupError>;
}

impl StreamQuery for Stream {
    fn architecture(&self, arch: &str) -> Result<(), LookupError> {
        Stream::architecture(self, arch).map(|_| ())
    }

    fn aws_region_image(&self, arch: &str, region: &str) -> Result<SingleImage, LookupError> {
        Stream::aws_region_image(self, arch, region).cloned()
    }

    fn contains_aws_ami(&self, ami: &str) -> bool {
        Stream::contains_aws_ami(self, ami)
    }

    fn gcp_image_path(&self, arch: &str) -> Result<String, LookupError> {
        Stream::gcp_image_path(self, arch)
    }

    fn azure_variant(&self, arch: &str, variant: &str) -> AzureVariant {
        match self.azure_marketplace(arch) {
            None => AzureVariant::NoMarketplace,
            Some(marketplace) => marketplace
                .variant(variant)
                .cloned()
                .map_or(AzureVariant::NoVariant, AzureVariant::Images),
        }
    }

    fn artifact_release(&self, arch: &str, artifact: &str) -> Result<Option<String>, LookupError> {
        let artifacts = &Stream::architecture(self, arch)?.artifacts;
        Ok(artifacts.get(artifact).map(|a| a.release.clone()))
    }

    fn vmware_release(&self, arch: &str) -> Result<String, LookupError> {
        Ok(self.vmware(arch)?.release.clone())
    }

    fn vmware_ova(&self, arch: &str) -> Result<Artifact, LookupError> {
        Stream::vmware_ova(self, arch).cloned()
    }
}

impl AzureMarketplace {
    /// The images of a purchase variant, keyed as the stream keys it.
    pub fn variant(&self, key: &str) -> Option<&AzureMarketplaceImages> {
        match key {
            "no-purchase-plan" => self.no_purchase_plan.as_ref(),
            "ocp" => self.ocp.as_ref(),
            "opp" => self.opp.as_ref(),
            "oke" => self.oke.as_ref(),
            "ocp-emea" => self.ocp_emea.as_ref(),
            "opp-emea" => self.opp_emea.as_ref(),
            "oke-emea" => self.oke_emea.as_ref(),
            _ => None,
        }
    }
}

impl Stream {
    /// Parses the stream; every later lookup is in memory.
    ///
    /// serde_json's recursion limit turns hostile nesting into an error
    /// instead of a stack overflow, and unknown keys (new platforms, new
    /// artifact formats) are ignored so that newer streams stay readable.
    pub fn parse(json: &str) -> Result<Stream, StreamError> {
        let start = json.trim_start();
        let found = match start.bytes().next() {
            None => return Err(StreamError::Empty),
            Some(b'{') => None,
            Some(b'[') => Some("an array"),
            Some(b'"') => Some("a string"),
            Some(b'n') if start.starts_with("null") => Some("null"),
            Some(b't' | b'f') if start.starts_with("true") || start.starts_with("false") => {
                Some("a boolean")
            }
            Some(b'-' | b'0'..=b'9') => Some("a number"),
            // Not JSON at all: let the parser say where.
            Some(_) => None,
        };
        if let Some(kind) = found {
            return Err(StreamError::NotAnObject(kind));
        }
        let mut stream: Stream = serde_json::from_str(json)?;
        stream.aws_amis = stream
            .architectures
            .values()
            .filter_map(|a| a.images.aws.as_ref())
            .flat_map(|aws| aws.regions.values().map(|r| r.image.clone()))
            .filter(|ami| !ami.is_empty())
            .collect();
        Ok(stream)
    }

    pub fn architecture(&self, arch: &str) -> Result<&Arch, LookupError> {
        self.architectures
            .get(arch)
            .ok_or_else(|| LookupError::NoArchitecture {
                stream: self.stream.clone(),
                arch: arch.to_owned(),
            })
    }

    /// `GetAwsRegionImage`: the RHCOS AMI published for one region.
    pub fn aws_region_image(&self, arch: &str, region: &str) -> Result<&SingleImage, LookupError> {
        let a = self.architecture(arch)?;
        let aws = a
            .images
            .aws
            .as_ref()
            .ok_or_else(|| LookupError::NoAwsImages {
                stream: self.stream.clone(),
                arch: arch.to_owned(),
            })?;
        aws.regions
            .get(region)
            .ok_or_else(|| LookupError::NoAwsRegion {
                stream: self.stream.clone(),
                arch: arch.to_owned(),
                region: region.to_owned(),
            })
    }

    /// The full GCP image path. Go indexes `images.gcp` without a nil check
    /// and would panic; here a missing or half-filled entry is a lookup error.
    pub fn gcp_image_path(&self, arch: &str) -> Result<String, LookupError> {
        let a = self.architecture(arch)?;
        match &a.images.gcp {
            Some(g) if !g.project.is_empty() && !g.name.is_empty() => {
                Ok(format!("projects/{}/global/images/{}", g.project, g.name))
            }
            _ => Err(LookupError::NoGcpImage {
                stream: self.stream.clone(),
                arch: arch.to_owned(),
            }),
        }
    }

    /// The Azure marketplace section, if this stream publishes one for `arch`.
    pub fn azure_marketplace(&self, arch: &str) -> Option<&AzureMarketplace> {
        self.architectures
            .get(arch)?
            .rhel_coreos_extensions
            .as_ref()?
            .marketplace
            .as_ref()?
            .azure
            .as_ref()
    }

    /// `artifacts.vmware`, when it names a release: the RHCOS release a
    /// vSphere template must hold, and its OVA.
    pub fn vmware(&self, arch: &str) -> Result<&PlatformArtifacts, LookupError> {
        match self.architecture(arch)?.artifacts.get(VMWARE) {
            Some(artifacts) if !artifacts.release.is_empty() => Ok(artifacts),
            _ => Err(LookupError::NoArtifact {
                stream: self.stream.clone(),
                arch: arch.to_owned(),
                artifact: VMWARE,
            }),
        }
    }

    /// `QueryDisk(arch, "vmware", "ova")`: the OVA a vSphere template is
    /// imported from.
    pub fn vmware_ova(&self, arch: &str) -> Result<&Artifact, LookupError> {
        let disk = self.vmware(arch)?.formats.get(OVA);
        disk.and_then(|format| format.disk.as_ref())
            .ok_or_else(|| LookupError::NoDisk {
                stream: self.stream.clone(),
                arch: arch.to_owned(),
                artifact: VMWARE,
                format: OVA,
            })
    }

    /// Whether `ami` is an RHCOS AMI of this stream in any region and for any
    /// architecture: an AMI that the stream itself published is by definition
    /// not a custom image, wherever the MachineSet runs.
    pub fn contains_aws_ami(&self, ami: &str) -> bool {
        self.aws_amis.contains(ami)
    }

    /// Every boot image this stream publishes, as a MachineSet would name
    /// it: AWS AMIs and full GCP image paths. A controller that remembers
    /// them still recognises a MachineSet installed from this stream after
    /// a newer stream has replaced it.
    pub fn published_images(&self) -> BTreeSet<String> {
        let gcp = self
            .architectures
            .keys()
            .filter_map(|arch| self.gcp_image_path(arch).ok());
        self.aws_amis.iter().cloned().chain(gcp).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_images_name_amis_and_gcp_paths() {
        let s = Stream::parse(FIXTURE).unwrap();
        let images = s.published_images();
        assert!(images.contains("ami-0fbc8be8796dc1df5"));
        assert!(
            images.contains("projects/rhcos-cloud/global/images/rhcos-9-8-20260428-0-gcp-x86-64")
        );
        assert!(images.iter().all(|i| !i.is_empty()));
    }

    const FIXTURE: &str = r#"{
      "stream": "rhcos-4.21",
      "metadata": {"last-modified": "2026-04-28T22:11:54Z", "generator": "plume cosa2stream 211dee6"},
      "architectures": {
        "x86_64": {
          "artifacts": {"vmware": {"release": "9.8.20260428-0", "formats": {"ova": {"disk": {"location": "https://example/x.ova", "sha256": "29dc"}}}}},
          "images": {
            "aws": {"regions": {"us-east-1": {"release": "9.8.20260428-0", "image": "ami-0fbc8be8796dc1df5"}}},
            "gcp": {"release": "9.8.20260428-0", "project": "rhcos-cloud", "name": "rhcos-9-8-20260428-0-gcp-x86-64"}
          },
          "rhel-coreos-extensions": {"marketplace": {"azure": {"ocp": {"hyperVGen2": {"publisher": "redhat", "offer": "rh-ocp-worker", "sku": "rh-ocp-worker", "version": "4.18.2025031114"}}}}}
        },
        "aarch64": {"images": {"aws": {"regions": {"us-east-1": {"release": "9.8.20260428-0", "image": "ami-01fdfbdd638f16b5f"}}}}},
        "s390x": {"images": {"kubevirt": {"release": "r", "image": "i", "digest-ref": "d"}}}
      }
    }"#;

    #[test]
    fn parses_fixture_and_looks_up() {
        let s = Stream::parse(FIXTURE).unwrap();
        assert_eq!(s.stream, "rhcos-4.21");
        assert_eq!(s.metadata.generator, "plume cosa2stream 211dee6");
        assert_eq!(
            s.aws_region_image("x86_64", "us-east-1").unwrap().image,
            "ami-0fbc8be8796dc1df5"
        );
        assert_eq!(
            s.gcp_image_path("x86_64").unwrap(),
            "projects/rhcos-cloud/global/images/rhcos-9-8-20260428-0-gcp-x86-64"
        );
        assert!(s.contains_aws_ami("ami-01fdfbdd638f16b5f"));
        assert!(!s.contains_aws_ami("ami-unknown"));
        assert!(!s.contains_aws_ami(""));
        assert!(s.azure_marketplace("x86_64").is_some());
        assert!(s.azure_marketplace("aarch64").is_none());
        assert_eq!(s.vmware("x86_64").unwrap().release, "9.8.20260428-0");
        assert_eq!(s.vmware_ova("x86_64").unwrap().sha256, "29dc");
        assert_eq!(
            s.vmware("aarch64").unwrap_err().to_string(),
            "rhcos-4.21/aarch64: artifact 'vmware' not found"
        );
        let no_ova = Stream::parse(
            r#"{"stream": "s", "architectures": {"x86_64": {"artifacts": {"vmware": {"release": "r", "formats": {"ova": {}}}}}}}"#,
        )
        .unwrap();
        assert_eq!(
            no_ova.vmware_ova("x86_64").unwrap_err().to_string(),
            "s/x86_64: artifact 'vmware' format 'ova' disk not found"
        );
        let vm = &s.architectures["x86_64"].artifacts["vmware"];
        assert_eq!(vm.release, "9.8.20260428-0");
    }

    #[test]
    fn lookup_errors_use_stream_metadata_go_wording() {
        let s = Stream::parse(FIXTURE).unwrap();
        assert_eq!(
            s.aws_region_image("ppc64le", "us-east-1")
                .unwrap_err()
                .to_string(),
            "stream:rhcos-4.21 does not have architecture 'ppc64le'"
        );
        assert_eq!(
            s.aws_region_image("s390x", "us-east-1")
                .unwrap_err()
                .to_string(),
            "rhcos-4.21/s390x: No AWS images"
        );
        assert_eq!(
            s.aws_region_image("x86_64", "mars-1")
                .unwrap_err()
                .to_string(),
            "rhcos-4.21/x86_64: No AWS images in region mars-1"
        );
        assert!(matches!(
            s.gcp_image_path("aarch64"),
            Err(LookupError::NoGcpImage { .. })
        ));
    }

    #[test]
    fn nulls_read_as_absent() {
        let s = Stream::parse(
            r#"{"stream": null, "metadata": null, "architectures": {"x86_64": {"images": {"gcp": {"project": null, "name": "n"}}, "artifacts": null}}}"#,
        )
        .unwrap();
        assert_eq!(s.stream, "");
        assert!(s.gcp_image_path("x86_64").is_err());
    }

    #[test]
    fn empty_and_malformed_streams_are_errors() {
        assert!(matches!(Stream::parse(""), Err(StreamError::Empty)));
        assert!(matches!(Stream::parse("  \n"), Err(StreamError::Empty)));
        for bad in [
            "{",
            "not json",
            "[]",
            "[{}]",
            "null",
            "true",
            "-1",
            "42",
            "\"stream\"",
            r#"{"architectures": []}"#,
            r#"{"architectures": {"x86_64": {"images": {"gcp": {"name": 5}}}}}"#,
            r#"{"stream": "a"} trailing"#,
        ] {
            let err = Stream::parse(bad).unwrap_err().to_string();
            assert!(
                err.starts_with("failed to parse CoreOS stream metadata: "),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn empty_object_is_a_stream_without_architectures() {
        let s = Stream::parse("{}").unwrap();
        assert!(s.architectures.is_empty());
        assert_eq!(
            s.gcp_image_path("x86_64").unwrap_err().to_string(),
            "stream: does not have architecture 'x86_64'"
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let depth = 100_000;
        let mut s = String::with_capacity(depth * 8 + 64);
        s.push_str(r#"{"stream":"x","extra":"#);
        for _ in 0..depth {
            s.push('[');
        }
        for _ in 0..depth {
            s.push(']');
        }
        s.push('}');
        // Unknown keys are skipped iteratively by serde_json: no stack use,
        // no error, and the known part of the document still counts.
        assert_eq!(Stream::parse(&s).unwrap().stream, "x");
        let typed = format!(r#"{{"architectures": {}"#, "[".repeat(depth));
        assert!(Stream::parse(&typed).is_err());
        let mut t = String::new();
        for _ in 0..depth {
            t.push_str(r#"{"a":"#);
        }
        assert!(Stream::parse(&t).is_err());
    }

    #[test]
    fn copes_with_a_ten_megabyte_stream() {
        // Many regions and a huge unknown blob: the size real streams could
        // reach if every artifact and region were listed.
        let mut regions = String::new();
        for i in 0..60_000 {
            if i > 0 {
                regions.push(',');
            }
            regions.push_str(&format!(
                r#""region-{i:06}": {{"release": "9.8.20260428-0", "image": "ami-{i:017x}"}}"#
            ));
        }
        let blob = "x".repeat(5 * 1024 * 1024);
        let json = format!(
            r#"{{"stream": "big", "unknown": "{blob}", "architectures": {{"x86_64": {{"images": {{"aws": {{"regions": {{{regions}}}}}}}}}}}}}"#
        );
        assert!(json.len() > 10 * 1024 * 1024 - 1024 * 1024);
        let s = Stream::parse(&json).unwrap();
        assert_eq!(
            s.aws_region_image("x86_64", "region-059999").unwrap().image,
            format!("ami-{:017x}", 59_999)
        );
        assert!(s.contains_aws_ami(&format!("ami-{:017x}", 12_345)));
    }

    #[test]
    fn huge_strings_are_fine() {
        let name = "n".repeat(2 * 1024 * 1024);
        let json = format!(
            r#"{{"architectures": {{"x86_64": {{"images": {{"gcp": {{"project": "p", "name": "{name}"}}}}}}}}}}"#
        );
        let s = Stream::parse(&json).unwrap();
        assert!(s.gcp_image_path("x86_64").unwrap().ends_with(&name));
    }
}
