//! An OVA opened for import: the tar's index and the OVF envelope.
//!
//! The OVA is untrusted input even after its digest matched the stream's
//! (the stream names it, but a parser bug must not turn a bad file into a
//! crash): the entry count and the descriptor size are bounded, entry names
//! must be plain relative paths, and the OVF is parsed into the same bounded
//! tree as SOAP answers.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path};

use crate::error::OvaError;
use crate::xml::{self, Element};

/// The most tar entries read (an RHCOS OVA has 3: OVF, manifest, disk).
const MAX_ENTRIES: usize = 256;

/// The largest OVF descriptor read (RHCOS's is about 10 KiB).
pub(crate) const MAX_DESCRIPTOR: u64 = 4 << 20;

/// One regular file in the tar.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub name: String,
    /// Where its bytes start in the tar file.
    pub offset: u64,
    pub size: u64,
}

/// An OVA (an uncompressed tar) opened for import.
#[derive(Debug)]
pub struct Ova {
    /// Kept open: a cache eviction that unlinks the file cannot pull the
    /// bytes away from an upload in progress.
    file: File,
    entries: Vec<Entry>,
    descriptor: String,
    networks: Vec<String>,
    product_version: Option<String>,
    secure_boot: bool,
}

impl Ova {
    /// Reads the tar's index, finds the one `*.ovf` entry and parses the
    /// envelope. Every file the OVF's `References` name must be in the tar.
    /// Blocking file I/O, but small: the tar headers (seeking over the
    /// data) and the descriptor; from async code, a `spawn_blocking` is the
    /// strict way.
    pub fn open(path: &Path) -> Result<Ova, OvaError> {
        let io = |source| OvaError::Io {
            path: path.to_owned(),
            source,
        };
        let layout = |detail: String| OvaError::Layout {
            path: path.to_owned(),
            detail,
        };
        let mut file = File::open(path).map_err(io)?;
        let entries = index(&file).map_err(layout)?;
        let mut ovfs = entries
            .iter()
            .filter(|e| e.name.to_ascii_lowercase().ends_with(".ovf"));
        let ovf = match (ovfs.next(), ovfs.next()) {
            (Some(one), None) => one.clone(),
            (None, _) => return Err(layout("it holds no .ovf descriptor".into())),
            (Some(a), Some(b)) => {
                return Err(layout(format!(
                    "it holds more than one .ovf descriptor ({}, {})",
                    a.name, b.name
                )));
            }
        };
        let bad = |detail: String| OvaError::Descriptor {
            path: path.to_owned(),
            name: ovf.name.clone(),
            detail,
        };
        if ovf.size > MAX_DESCRIPTOR {
            return Err(bad(format!(
                "{} bytes, more than the {MAX_DESCRIPTOR} accepted",
                ovf.size
            )));
        }
        file.seek(SeekFrom::Start(ovf.offset)).map_err(io)?;
        let mut bytes = Vec::new();
        (&mut file)
            .take(ovf.size)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        if bytes.len() as u64 != ovf.size {
            return Err(bad("the tar ends inside it".into()));
        }
        let text = String::from_utf8(bytes).map_err(|_| bad("it is not UTF-8".into()))?;
        let descriptor = text.strip_prefix('\u{feff}').unwrap_or(&text).to_owned();
        let envelope = xml::parse(&descriptor).map_err(bad)?;
        let described = describe(&envelope).map_err(bad)?;
        for href in &described.files {
            if !entries.iter().any(|e| e.name == *href) {
                return Err(layout(format!(
                    "the OVF references {href:?}, which the OVA does not hold"
                )));
            }
        }
        Ok(Ova {
            file,
            entries,
            descriptor,
            networks: described.networks,
            product_version: described.product_version,
            secure_boot: described.secure_boot,
        })
    }

    /// The OVF XML text, as sent to `CreateImportSpec`.
    pub fn descriptor(&self) -> &str {
        &self.descriptor
    }

    /// The `ovf:NetworkSection` network names.
    pub fn networks(&self) -> &[String] {
        &self.networks
    }

    /// The first ProductSection's `Version` (the RHCOS release).
    pub fn product_version(&self) -> Option<&str> {
        self.product_version.as_deref()
    }

    /// Whether the virtual hardware has `vmw:Config
    /// ovf:key="bootOptions.efiSecureBootEnabled" ovf:value="true"`.
    pub fn secure_boot(&self) -> bool {
        self.secure_boot
    }

    /// The tar entry named `name` (an OVF `href`, an NFC file item path).
    pub(crate) fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// A reader of `entry`'s bytes, on its own file handle.
    pub(crate) async fn reader(
        &self,
        entry: &Entry,
    ) -> std::io::Result<tokio::io::Take<tokio::fs::File>> {
        use tokio::io::{AsyncReadExt, AsyncSeekExt};
        let mut f = tokio::fs::File::from_std(self.file.try_clone()?);
        f.seek(SeekFrom::Start(entry.offset)).await?;
        Ok(f.take(entry.size))
    }
}

/// The regular files of the tar, by name.
fn index(file: &File) -> Result<Vec<Entry>, String> {
    let mut archive = tar::Archive::new(file);
    let mut out: Vec<Entry> = Vec::new();
    let entries = archive
        .entries_with_seek()
        .map_err(|e| format!("not a tar: {e}"))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("not a tar: {e}"))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        if out.len() >= MAX_ENTRIES {
            return Err(format!("more than {MAX_ENTRIES} files"));
        }
        let path = entry
            .path()
            .map_err(|e| format!("an entry name is unreadable: {e}"))?;
        let name = plain_name(&path)
            .ok_or_else(|| format!("entry {:?} is not a plain relative path", path.display()))?;
        if out.iter().any(|e| e.name == name) {
            return Err(format!("entry {name:?} appears twice"));
        }
        out.push(Entry {
            name,
            offset: entry.raw_file_position(),
            size: entry.size(),
        });
    }
    Ok(out)
}

/// `path` as a `/`-separated relative name, if it has only normal parts.
fn plain_name(path: &Path) -> Option<String> {
    let mut parts = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_str()?),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// What the import needs from an envelope.
#[derive(Debug, Default, PartialEq, Eq)]
struct Described {
    networks: Vec<String>,
    product_version: Option<String>,
    secure_boot: bool,
    files: Vec<String>,
}

fn describe(envelope: &Element) -> Result<Described, String> {
    if envelope.name != "Envelope" {
        return Err(format!(
            "the root is <{}>, not an OVF <Envelope>",
            envelope.name
        ));
    }
    let networks = envelope
        .children_named("NetworkSection")
        .flat_map(|s| s.children_named("Network"))
        .map(|n| {
            n.attr("name")
                .map(str::to_owned)
                .ok_or_else(|| "a Network without a name".to_owned())
        })
        .collect::<Result<Vec<_>, _>>()?;
    let files = envelope
        .children_named("References")
        .flat_map(|r| r.children_named("File"))
        .map(|f| {
            f.attr("href")
                .map(str::to_owned)
                .ok_or_else(|| "a File without an href".to_owned())
        })
        .collect::<Result<Vec<_>, _>>()?;
    let systems: Vec<&Element> = envelope.children_named("VirtualSystem").collect();
    let product_version = systems
        .iter()
        .flat_map(|s| s.children_named("ProductSection"))
        .find_map(|p| p.child("Version"))
        .map(|v| v.text.trim().to_owned())
        .filter(|v| !v.is_empty());
    if product_version.as_ref().is_some_and(|v| v.len() > 256) {
        return Err("the ProductSection Version is longer than 256 bytes".into());
    }
    let secure_boot = systems
        .iter()
        .flat_map(|s| s.children_named("VirtualHardwareSection"))
        .flat_map(|h| h.children_named("Config"))
        .any(|c| {
            c.attr("key") == Some("bootOptions.efiSecureBootEnabled")
                && c.attr("value") == Some("true")
        });
    Ok(Described {
        networks,
        product_version,
        secure_boot,
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OVF: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Envelope xmlns="http://schemas.dmtf.org/ovf/envelope/1" xmlns:ovf="http://schemas.dmtf.org/ovf/envelope/1" xmlns:vmw="http://www.vmware.com/schema/ovf">
  <References><File ovf:href="disk.vmdk" ovf:id="file1" ovf:size="4"/></References>
  <NetworkSection><Info>n</Info><Network ovf:name="VM Network"/></NetworkSection>
  <VirtualSystem ovf:id="vm">
    <ProductSection><Info>p</Info><Product>RHCOS</Product><Version> 9.6.1 </Version></ProductSection>
    <VirtualHardwareSection><vmw:Config ovf:required="false" ovf:key="bootOptions.efiSecureBootEnabled" ovf:value="true"/></VirtualHardwareSection>
  </VirtualSystem>
</Envelope>"#;

    fn tar(entries: &[(&str, &[u8])]) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        let mut builder = tar::Builder::new(file.reopen().unwrap());
        for (name, data) in entries {
            let mut header = tar::Header::new_ustar();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_entry_type(tar::EntryType::Regular);
            // set_path refuses `..`; write the raw name for hostile cases.
            let raw = &mut header.as_old_mut().name;
            raw[..name.len()].copy_from_slice(name.as_bytes());
            header.set_cksum();
            builder.append(&header, *data).unwrap();
        }
        builder.into_inner().unwrap();
        file
    }

    #[test]
    fn a_good_ova_is_described() {
        let f = tar(&[("x.ovf", OVF.as_bytes()), ("disk.vmdk", b"KDMV")]);
        let ova = Ova::open(f.path()).unwrap();
        assert_eq!(ova.networks(), ["VM Network"]);
        assert_eq!(ova.product_version(), Some("9.6.1"));
        assert!(ova.secure_boot());
        assert!(ova.descriptor().contains("<Envelope"));
        let disk = ova.entry("disk.vmdk").unwrap();
        assert_eq!(disk.size, 4);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let bytes = rt.block_on(async {
            use tokio::io::AsyncReadExt;
            let mut r = ova.reader(disk).await.unwrap();
            let mut out = Vec::new();
            r.read_to_end(&mut out).await.unwrap();
            out
        });
        assert_eq!(bytes, b"KDMV");
    }

    #[test]
    fn hostile_ovas_are_refused() {
        type Case<'a> = (Vec<(&'a str, &'a [u8])>, &'a str);
        let cases: Vec<Case> = vec![
            (vec![("disk.vmdk", b"x")], "no .ovf"),
            (
                vec![("a.ovf", OVF.as_bytes()), ("b.OVF", OVF.as_bytes())],
                "more than one .ovf",
            ),
            (vec![("a.ovf", OVF.as_bytes())], "does not hold"),
            (
                vec![("a.ovf", b"<Envelope><unclosed></Envelope>")],
                "not usable",
            ),
            (vec![("a.ovf", b"<NotAnEnvelope/>")], "not an OVF"),
            (vec![("a.ovf", b"\xff\xfe<")], "not UTF-8"),
            (vec![("../a.ovf", b"<Envelope/>")], "plain relative path"),
            (vec![("/etc/a.ovf", b"<Envelope/>")], "plain relative path"),
            (
                vec![("a.ovf", b"<Envelope/>"), ("a.ovf", b"<Envelope/>")],
                "appears twice",
            ),
        ];
        for (entries, want) in cases {
            let f = tar(&entries);
            let err = Ova::open(f.path()).unwrap_err().to_string();
            assert!(err.contains(want), "{want}: {err}");
        }
        // Not a tar at all.
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, &[7u8; 1024]).unwrap();
        let err = Ova::open(f.path()).unwrap_err().to_string();
        assert!(err.contains("not usable"), "{err}");
        // A descriptor over the bound is not read.
        let huge = vec![b' '; MAX_DESCRIPTOR as usize + 1];
        let f = tar(&[("a.ovf", &huge)]);
        let err = Ova::open(f.path()).unwrap_err().to_string();
        assert!(err.contains("more than the"), "{err}");
        // Missing file.
        let err = Ova::open(Path::new("/nonexistent/x.ova")).unwrap_err();
        assert!(matches!(err, OvaError::Io { .. }), "{err}");
    }

    #[test]
    fn missing_sections_describe_as_empty() {
        let env = xml::parse(r#"<Envelope xmlns:ovf="x"><VirtualSystem/></Envelope>"#).unwrap();
        assert_eq!(describe(&env).unwrap(), Described::default());
        let env = xml::parse(
            r#"<Envelope xmlns:ovf="x"><NetworkSection><Network ovf:name="a"/><Network ovf:name="b"/></NetworkSection><VirtualSystem><VirtualHardwareSection><Config ovf:key="bootOptions.efiSecureBootEnabled" ovf:value="false"/></VirtualHardwareSection></VirtualSystem></Envelope>"#,
        )
        .unwrap();
        let d = describe(&env).unwrap();
        assert_eq!(d.networks, ["a", "b"]);
        assert!(!d.secure_boot);
        let env = xml::parse(r#"<Envelope><NetworkSection><Network/></NetworkSection></Envelope>"#)
            .unwrap();
        assert!(describe(&env).unwrap_err().contains("without a name"));
    }
}
