//! Synthetic OVAs for the vSphere tests: an OVF envelope with one disk,
//! one network (or two), a ProductSection whose `Version` is the RHCOS
//! release, and optionally EFI secure boot on, in an uncompressed tar with
//! the disk. Small (a few KiB) and deterministic: the same options give the
//! same bytes, so the same sha256.
//!
//! vcsim v0.45.1's `CreateImportSpec` dereferences parts of the envelope
//! without checking them, so this one always has a `System` in its virtual
//! hardware, a `DiskSection` whose disk has a `fileRef`, and a SCSI
//! controller the disk's `Parent` names. What vcsim does with the disk
//! bytes: it hashes them, nothing else, so the "VMDK" is a header and
//! padding.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

/// The disk file's name inside the OVA.
pub const DISK: &str = "disk-0.vmdk";

/// What to put in the OVA.
#[derive(Clone, Debug)]
pub struct OvaOptions {
    /// The ProductSection `Version` (the RHCOS release).
    pub release: String,
    /// The OVF network name.
    pub network: String,
    /// A second network (and NIC), which the import must refuse.
    pub second_network: Option<String>,
    /// `vmw:Config bootOptions.efiSecureBootEnabled = true`.
    pub secure_boot: bool,
    /// The disk file's size in bytes (a few KiB by default).
    pub disk_bytes: usize,
}

impl Default for OvaOptions {
    fn default() -> OvaOptions {
        OvaOptions {
            release: "9.6.20250101-0".into(),
            network: "VM Network".into(),
            second_network: None,
            secure_boot: false,
            disk_bytes: 4096,
        }
    }
}

/// A written OVA.
#[derive(Clone, Debug)]
pub struct BuiltOva {
    pub path: PathBuf,
    /// Lowercase hex.
    pub sha256: String,
    pub size: u64,
}

/// The OVF descriptor for `o`.
pub fn ovf(o: &OvaOptions) -> String {
    let networks = std::iter::once(&o.network)
        .chain(o.second_network.as_ref())
        .map(|n| {
            format!(
                r#"    <Network ovf:name="{}"><Description>net</Description></Network>"#,
                esc(n)
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let nics = std::iter::once(&o.network)
        .chain(o.second_network.as_ref())
        .enumerate()
        .map(|(i, n)| {
            format!(
                r#"      <Item>
        <rasd:AddressOnParent>{slot}</rasd:AddressOnParent>
        <rasd:AutomaticAllocation>true</rasd:AutomaticAllocation>
        <rasd:Connection>{net}</rasd:Connection>
        <rasd:ElementName>Network adapter {n}</rasd:ElementName>
        <rasd:InstanceID>{id}</rasd:InstanceID>
        <rasd:ResourceSubType>VmxNet3</rasd:ResourceSubType>
        <rasd:ResourceType>10</rasd:ResourceType>
      </Item>"#,
                slot = 7 + i,
                net = esc(n),
                n = i + 1,
                id = 5 + i,
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let secure_boot = if o.secure_boot {
        r#"      <vmw:Config ovf:required="false" vmw:key="bootOptions.efiSecureBootEnabled" vmw:value="true"/>"#
    } else {
        ""
    };
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<Envelope xmlns="http://schemas.dmtf.org/ovf/envelope/1" xmlns:ovf="http://schemas.dmtf.org/ovf/envelope/1" xmlns:rasd="http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_ResourceAllocationSettingData" xmlns:vssd="http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_VirtualSystemSettingData" xmlns:vmw="http://www.vmware.com/schema/ovf">
  <References>
    <File ovf:href="{DISK}" ovf:id="file1" ovf:size="{size}"/>
  </References>
  <DiskSection>
    <Info>Virtual disk information</Info>
    <Disk ovf:capacity="16" ovf:capacityAllocationUnits="byte * 2^20" ovf:diskId="vmdisk1" ovf:fileRef="file1" ovf:format="http://www.vmware.com/interfaces/specifications/vmdk.html#streamOptimized"/>
  </DiskSection>
  <NetworkSection>
    <Info>The list of logical networks</Info>
{networks}
  </NetworkSection>
  <VirtualSystem ovf:id="mco-e2e-rhcos">
    <Info>A synthetic RHCOS</Info>
    <Name>mco-e2e-rhcos</Name>
    <OperatingSystemSection ovf:id="101" vmw:osType="rhel9_64Guest">
      <Info>The operating system</Info>
    </OperatingSystemSection>
    <ProductSection>
      <Info>Information about the installed software</Info>
      <Product>Red Hat Enterprise Linux CoreOS</Product>
      <Vendor>Red Hat</Vendor>
      <Version>{release}</Version>
    </ProductSection>
    <VirtualHardwareSection>
      <Info>Virtual hardware requirements</Info>
      <System>
        <vssd:ElementName>Virtual Hardware Family</vssd:ElementName>
        <vssd:InstanceID>0</vssd:InstanceID>
        <vssd:VirtualSystemType>vmx-15</vssd:VirtualSystemType>
      </System>
      <Item>
        <rasd:AllocationUnits>hertz * 10^6</rasd:AllocationUnits>
        <rasd:ElementName>2 virtual CPUs</rasd:ElementName>
        <rasd:InstanceID>1</rasd:InstanceID>
        <rasd:ResourceType>3</rasd:ResourceType>
        <rasd:VirtualQuantity>2</rasd:VirtualQuantity>
      </Item>
      <Item>
        <rasd:AllocationUnits>byte * 2^20</rasd:AllocationUnits>
        <rasd:ElementName>1024MB of memory</rasd:ElementName>
        <rasd:InstanceID>2</rasd:InstanceID>
        <rasd:ResourceType>4</rasd:ResourceType>
        <rasd:VirtualQuantity>1024</rasd:VirtualQuantity>
      </Item>
      <Item>
        <rasd:Address>0</rasd:Address>
        <rasd:ElementName>SCSI Controller 0</rasd:ElementName>
        <rasd:InstanceID>3</rasd:InstanceID>
        <rasd:ResourceSubType>lsilogic</rasd:ResourceSubType>
        <rasd:ResourceType>6</rasd:ResourceType>
      </Item>
      <Item>
        <rasd:AddressOnParent>0</rasd:AddressOnParent>
        <rasd:ElementName>Hard Disk 1</rasd:ElementName>
        <rasd:HostResource>ovf:/disk/vmdisk1</rasd:HostResource>
        <rasd:InstanceID>4</rasd:InstanceID>
        <rasd:Parent>3</rasd:Parent>
        <rasd:ResourceType>17</rasd:ResourceType>
      </Item>
{nics}
{secure_boot}
    </VirtualHardwareSection>
  </VirtualSystem>
</Envelope>
"#,
        size = o.disk_bytes,
        release = esc(&o.release),
    )
}

/// The disk: a streamOptimized-looking header, then a fixed pattern.
fn disk(bytes: usize) -> Vec<u8> {
    let mut out = b"KDMV# mco-e2e synthetic disk\n".to_vec();
    out.extend((0..bytes.saturating_sub(out.len())).map(|i| (i % 251) as u8));
    out.truncate(bytes);
    out
}

/// Writes `<dir>/<file_name>` (the OVF first, as OVA readers expect, then
/// the disk) and returns its path, sha256 and size.
pub fn build(dir: &Path, file_name: &str, o: &OvaOptions) -> Result<BuiltOva> {
    let path = dir.join(file_name);
    let file = std::fs::File::create(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    let mut tar = tar::Builder::new(file);
    let mut append = |name: &str, data: &[u8]| -> Result<()> {
        let mut header = tar::Header::new_ustar();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_path(name)?;
        header.set_cksum();
        tar.append(&header, data)
            .with_context(|| format!("cannot write {name} into {}", path.display()))
    };
    append("mco-e2e-rhcos.ovf", ovf(o).as_bytes())?;
    append(DISK, &disk(o.disk_bytes))?;
    let mut file = tar.into_inner().context("cannot finish the OVA tar")?;
    file.flush()?;
    drop(file);
    let bytes = std::fs::read(&path)?;
    Ok(BuiltOva {
        sha256: sha256_hex(&bytes),
        size: bytes.len() as u64,
        path,
    })
}

/// Lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_options_give_the_same_bytes() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let a = build(dir.path(), "a.ova", &OvaOptions::default())?;
        let b = build(dir.path(), "b.ova", &OvaOptions::default())?;
        assert_eq!(a.sha256, b.sha256);
        assert!(a.size < 16 * 1024, "{}", a.size);
        let c = build(
            dir.path(),
            "c.ova",
            &OvaOptions {
                release: "other".into(),
                ..OvaOptions::default()
            },
        )?;
        assert_ne!(a.sha256, c.sha256);
        Ok(())
    }
}
