//! A rendered MachineConfig spec reduced, once, to what the decisions read
//! of it: [`Summary`]. A rendered config may be as large as the apiserver
//! stores and is the same for every node of a pool, so the host reads each
//! one once per resourceVersion, natively, with this module, and the guest
//! gets the summary behind a handle (WIT `node-inputs.rendered-config`). The
//! spec is read in one pass without building it, each value reduced to the
//! SHA-256 of its canonical pruned form, so two digests are equal when the
//! pruned values are, as upstream `pkg/daemon/update.go`'s comparisons need
//! (`reconcilable()`,
//! `calculatePostConfigChangeNodeDisruptionActionFromMCDiffs`). What is kept
//! ([`Section`], [`View`]): docs/concepts/mcn-derivation.md.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error, MapAccess, SeqAccess, Visitor};
use sha2::{Digest as _, Sha256};

use crate::disruption::REGISTRIES_CONF;

/// The SHA-256 of a value's canonical pruned form.
pub type Digest = [u8; 32];

/// A digest as the four little-endian words WIT `node-inputs.digest` holds.
pub fn digest_to_words(digest: &Digest) -> [u64; 4] {
    let word = |i: usize| {
        let mut bytes = [0; 8];
        bytes.copy_from_slice(&digest[i * 8..i * 8 + 8]);
        u64::from_le_bytes(bytes)
    };
    [word(0), word(1), word(2), word(3)]
}

/// The digest [`digest_to_words`] gave the words of.
pub fn digest_from_words(words: [u64; 4]) -> Digest {
    let mut digest = [0; 32];
    for (chunk, word) in digest.chunks_exact_mut(8).zip(words) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    digest
}

/// A value the rules compare between two configs by its digest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    OsImageUrl,
    Extensions,
    /// The MachineConfig's `kernelArguments`.
    KernelArguments,
    Passwd,
    PasswdGroups,
    PasswdUsers,
    /// Ignition's `kernelArguments`.
    IgnitionKernelArguments,
    Files,
    Units,
    Disks,
    Filesystems,
    Raid,
    Directories,
    Links,
}

impl Section {
    pub const ALL: [Section; 14] = [
        Section::OsImageUrl,
        Section::Extensions,
        Section::KernelArguments,
        Section::Passwd,
        Section::PasswdGroups,
        Section::PasswdUsers,
        Section::IgnitionKernelArguments,
        Section::Files,
        Section::Units,
        Section::Disks,
        Section::Filesystems,
        Section::Raid,
        Section::Directories,
        Section::Links,
    ];

    /// Where it is in the spec.
    pub fn pointer(self) -> &'static str {
        match self {
            Section::OsImageUrl => "/osImageURL",
            Section::Extensions => "/extensions",
            Section::KernelArguments => "/kernelArguments",
            Section::Passwd => "/config/passwd",
            Section::PasswdGroups => "/config/passwd/groups",
            Section::PasswdUsers => "/config/passwd/users",
            Section::IgnitionKernelArguments => "/config/kernelArguments",
            Section::Files => "/config/storage/files",
            Section::Units => "/config/systemd/units",
            Section::Disks => "/config/storage/disks",
            Section::Filesystems => "/config/storage/filesystems",
            Section::Raid => "/config/storage/raid",
            Section::Directories => "/config/storage/directories",
            Section::Links => "/config/storage/links",
        }
    }
}

/// What the decisions read of one rendered config, computed once from its
/// JSON text ([`Summary::read`]): by the host, natively, for the guest; by
/// the library itself when it is run natively on text.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// The digests; `Err` says why the spec cannot be read (`is not an
    /// object`, `is not valid JSON: …`).
    pub spec: Result<Digests, String>,
    /// What the reconcilability rules read of the config as the desired
    /// one; `None` when the typed view of its users and files cannot be
    /// read (the rules then leave the update to the plan).
    pub view: Option<View>,
}

impl Summary {
    pub fn read(text: &str) -> Summary {
        let spec = Spec::read(text).map(|spec| Digests {
            sections: Section::ALL.map(|s| spec.digest(s.pointer()).copied()),
            kernel_type: spec
                .at("/kernelType")
                .and_then(Read::text)
                .map(str::to_string),
            fips: spec.fips(),
            files: spec.files().cloned(),
            units: spec.units().cloned(),
        });
        Summary {
            spec,
            view: crate::reconcile::view(text),
        }
    }
}

/// The digests of a readable spec, and the few values read beyond them.
#[derive(Clone, Debug, PartialEq)]
pub struct Digests {
    /// By [`Section`], in [`Section::ALL`]'s order; `None` when absent or
    /// pruned.
    pub sections: [Option<Digest>; 14],
    /// `kernelType`, when it is a string.
    pub kernel_type: Option<String>,
    /// `fips` is `true`.
    pub fips: bool,
    /// `config.storage.files` by path; `Err`: not a list, or an entry
    /// without a string path.
    pub files: Result<Entries, String>,
    /// `config.systemd.units` by name, likewise.
    pub units: Result<Entries, String>,
}

impl Digests {
    pub fn digest(&self, section: Section) -> Option<&Digest> {
        let index = Section::ALL.iter().position(|s| *s == section)?;
        self.sections.get(index)?.as_ref()
    }

    /// Everything but the real-time and 64k-page kernels is the default one.
    pub fn kernel_type(&self) -> &str {
        match self.kernel_type.as_deref() {
            Some(kernel @ ("realtime" | "64k-pages")) => kernel,
            _ => "default",
        }
    }
}

/// What the reconcilability rules read of a desired config beyond
/// digests (`reconcile.rs`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct View {
    /// `config.passwd.users`, in order.
    pub users: Vec<User>,
    /// The entries of `config.storage.files` the rules look at, in order:
    /// those that append, and the daemon's force file.
    pub files: Vec<FileNote>,
}

/// One entry of `config.passwd.users`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct User {
    /// `name`, when it is a string.
    pub name: Option<String>,
    /// The fields that are set (not `null`, `[]` or `{}`), in key order.
    pub set_fields: Vec<String>,
    /// The length of `sshAuthorizedKeys` when it is a list, else 0.
    pub ssh_keys: u32,
}

/// One entry of `config.storage.files`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileNote {
    pub path: String,
    /// `append` lists contents, or is `true` (a converted Ignition 2 file).
    pub appends: bool,
}

/// A rendered config's spec read in one pass.
struct Spec(Read);

impl Spec {
    /// Reads the JSON text of a spec.
    fn read(text: &str) -> Result<Spec, String> {
        let mut json = serde_json::Deserializer::from_str(text);
        let read = Walk(At::Spec)
            .deserialize(&mut json)
            .and_then(|read| json.end().map(|()| read))
            .map_err(|err| format!("is not valid JSON: {err}"))?;
        match read.kept {
            Kept::Members(_) => Ok(Spec(read)),
            _ => Err("is not an object".to_string()),
        }
    }

    /// The digest of the value at `pointer` (a JSON pointer through the
    /// opened sections, e.g. `/config/storage/disks`); `None` when it is
    /// absent or pruned.
    fn digest(&self, pointer: &str) -> Option<&Digest> {
        self.at(pointer).map(|read| &read.digest)
    }

    fn fips(&self) -> bool {
        matches!(self.at("/fips").map(|r| &r.kept), Some(Kept::Flag(true)))
    }

    /// The entries of `config.storage.files` by path (a later duplicate
    /// wins).
    fn files(&self) -> Result<&Entries, String> {
        self.entries("/config/storage/files", "path")
    }

    /// The entries of `config.systemd.units` by name.
    fn units(&self) -> Result<&Entries, String> {
        self.entries("/config/systemd/units", "name")
    }

    fn entries(&self, pointer: &str, key: &str) -> Result<&Entries, String> {
        static NONE: Entries = Entries {
            by_key: BTreeMap::new(),
            unkeyed: false,
            registries_conf: String::new(),
        };
        let field = pointer.trim_start_matches('/').replace('/', ".");
        match self.at(pointer).map(|read| &read.kept) {
            None => Ok(&NONE),
            Some(Kept::List(entries)) if entries.unkeyed => {
                Err(format!("an entry of {field} has no string {key}"))
            }
            Some(Kept::List(entries)) => Ok(entries),
            Some(_) => Err(format!("{field} is not a list")),
        }
    }

    fn at(&self, pointer: &str) -> Option<&Read> {
        pointer
            .split('/')
            .skip(1)
            .try_fold(&self.0, |read, name| read.member(name))
    }
}

/// A list's entries by their key field.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Entries {
    pub by_key: BTreeMap<String, Digest>,
    /// Some entry has no string key (or is not an object).
    unkeyed: bool,
    /// `contents.source` of the last `registries.conf` entry.
    registries_conf: String,
}

impl Entries {
    /// The entries of a list whose every entry has its key.
    pub fn new(by_key: BTreeMap<String, Digest>, registries_conf: String) -> Entries {
        Entries {
            by_key,
            unkeyed: false,
            registries_conf,
        }
    }

    /// `contents.source` of `registries.conf`; empty when there is none.
    pub fn registries_conf(&self) -> &str {
        &self.registries_conf
    }
}

/// What reading one value kept: its digest, whether pruning drops it as a
/// member, and what its place in the spec keeps of it.
struct Read {
    digest: Digest,
    empty: bool,
    kept: Kept,
}

enum Kept {
    Nothing,
    /// An opened object's members (pruned ones included, so a later
    /// duplicate that is pruned still replaces an earlier one).
    Members(BTreeMap<String, Read>),
    List(Entries),
    Text(String),
    Flag(bool),
}

impl Read {
    fn member(&self, name: &str) -> Option<&Read> {
        match &self.kept {
            Kept::Members(members) => members.get(name).filter(|m| !m.empty),
            _ => None,
        }
    }

    fn text(&self) -> Option<&str> {
        match &self.kept {
            Kept::Text(text) => Some(text),
            _ => None,
        }
    }
}

/// A place in the spec: what is kept of the value found there.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    /// Only the digest.
    Value,
    /// A string or boolean kept as such.
    Scalar,
    Spec,
    Config,
    /// `config.ignition` and `config.passwd`: their members' digests.
    Section,
    Storage,
    Systemd,
    Files,
    File,
    Contents,
    Units,
    Unit,
}

impl At {
    fn member(self, name: &str) -> At {
        match (self, name) {
            (At::Spec, "config") => At::Config,
            (At::Spec, "kernelType" | "fips") => At::Scalar,
            (At::Config, "ignition" | "passwd") => At::Section,
            (At::Config, "storage") => At::Storage,
            (At::Config, "systemd") => At::Systemd,
            (At::Storage, "files") => At::Files,
            (At::Systemd, "units") => At::Units,
            (At::File, "path") | (At::Unit, "name") | (At::Contents, "source") => At::Scalar,
            (At::File, "contents") => At::Contents,
            _ => At::Value,
        }
    }

    /// Whether an object here keeps its members.
    fn opens(self) -> bool {
        !matches!(self, At::Value | At::Scalar | At::Files | At::Units)
    }

    /// An array element here, and the field that keys it in a keyed list.
    fn entry(self) -> (At, &'static str) {
        match self {
            At::Files => (At::File, "path"),
            At::Units => (At::Unit, "name"),
            _ => (At::Value, ""),
        }
    }
}

/// Tags that keep the canonical forms of different kinds apart.
mod tag {
    pub const NULL: u8 = 0;
    pub const BOOL: u8 = 1;
    pub const UINT: u8 = 2;
    pub const NEG_INT: u8 = 3;
    pub const FLOAT: u8 = 4;
    pub const STRING: u8 = 5;
    pub const ARRAY: u8 = 6;
    pub const OBJECT: u8 = 7;
}

fn leaf(tag: u8, bytes: &[u8], kept: Kept) -> Read {
    let mut hasher = Sha256::new();
    hasher.update([tag]);
    hasher.update(bytes);
    Read {
        digest: hasher.finalize().into(),
        empty: tag == tag::NULL,
        kept,
    }
}

/// Reads the value at one place of the spec.
#[derive(Clone, Copy)]
struct Walk(At);

impl<'de> DeserializeSeed<'de> for Walk {
    type Value = Read;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Read, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk {
    type Value = Read;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: Error>(self) -> Result<Read, E> {
        Ok(leaf(tag::NULL, &[], Kept::Nothing))
    }

    fn visit_bool<E: Error>(self, value: bool) -> Result<Read, E> {
        let kept = match self.0 {
            At::Scalar => Kept::Flag(value),
            _ => Kept::Nothing,
        };
        Ok(leaf(tag::BOOL, &[u8::from(value)], kept))
    }

    fn visit_u64<E: Error>(self, value: u64) -> Result<Read, E> {
        Ok(leaf(tag::UINT, &value.to_le_bytes(), Kept::Nothing))
    }

    /// serde_json's `Number` holds a non-negative integer as unsigned,
    /// whichever way it came.
    fn visit_i64<E: Error>(self, value: i64) -> Result<Read, E> {
        match u64::try_from(value) {
            Ok(value) => self.visit_u64(value),
            Err(_) => Ok(leaf(tag::NEG_INT, &value.to_le_bytes(), Kept::Nothing)),
        }
    }

    /// `0.0 == -0.0`, as for serde_json's numbers.
    fn visit_f64<E: Error>(self, value: f64) -> Result<Read, E> {
        let value = if value == 0.0 { 0.0 } else { value };
        Ok(leaf(
            tag::FLOAT,
            &value.to_bits().to_le_bytes(),
            Kept::Nothing,
        ))
    }

    fn visit_str<E: Error>(self, value: &str) -> Result<Read, E> {
        let kept = match self.0 {
            At::Scalar => Kept::Text(value.to_string()),
            _ => Kept::Nothing,
        };
        Ok(leaf(tag::STRING, value.as_bytes(), kept))
    }

    /// An array keeps every element, pruned or not; a keyed list keeps
    /// each entry's digest by key as it goes, and drops the entry.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Read, A::Error> {
        let mut hasher = Sha256::new();
        hasher.update([tag::ARRAY]);
        let mut empty = true;
        let mut kept = match self.0 {
            At::Files | At::Units => Kept::List(Entries::default()),
            _ => Kept::Nothing,
        };
        let (element, key) = self.0.entry();
        while let Some(item) = seq.next_element_seed(Walk(element))? {
            hasher.update(item.digest);
            empty = false;
            if let Kept::List(entries) = &mut kept {
                entries.add(item, key);
            }
        }
        Ok(Read {
            digest: hasher.finalize().into(),
            empty,
            kept,
        })
    }

    /// An object's digest covers its unpruned members in key order; a
    /// later duplicate key wins, as in serde_json's `Map`.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Read, A::Error> {
        let mut members = BTreeMap::new();
        while let Some(name) = map.next_key::<String>()? {
            let read = map.next_value_seed(Walk(self.0.member(&name)))?;
            members.insert(name, read);
        }
        let mut hasher = Sha256::new();
        hasher.update([tag::OBJECT]);
        let mut empty = true;
        for (name, read) in members.iter().filter(|(_, read)| !read.empty) {
            hasher.update((name.len() as u64).to_le_bytes());
            hasher.update(name.as_bytes());
            hasher.update(read.digest);
            empty = false;
        }
        let kept = if self.0.opens() {
            Kept::Members(members)
        } else {
            Kept::Nothing
        };
        Ok(Read {
            digest: hasher.finalize().into(),
            empty,
            kept,
        })
    }
}

impl Entries {
    /// Keeps one entry's digest by its `key` field, and the source of
    /// `registries.conf`.
    fn add(&mut self, item: Read, key: &str) {
        let Some(name) = item.member(key).and_then(Read::text) else {
            self.unkeyed = true;
            return;
        };
        if key == "path" && name == REGISTRIES_CONF {
            let source = item
                .member("contents")
                .and_then(|c| c.member("source"))
                .and_then(Read::text);
            self.registries_conf = source.unwrap_or_default().to_string();
        }
        self.by_key.insert(name.to_string(), item.digest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> Spec {
        Spec::read(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn same(a: &str, b: &str, pointer: &str) -> bool {
        spec(a).digest(pointer) == spec(b).digest(pointer)
    }

    #[test]
    fn equal_means_the_same_pruned_value() {
        let equal = [
            (r#"{"osImageURL":"a"}"#, r#"{ "osImageURL" : "\u0061" }"#),
            (
                r#"{"extensions":{"a":1,"b":[2]}}"#,
                r#"{"extensions":{"b":[2],"a":1}}"#,
            ),
            (
                r#"{"extensions":{"a":1,"b":null,"c":[],"d":{"e":{}}}}"#,
                r#"{"extensions":{"a":1}}"#,
            ),
            (r#"{"extensions":[{"a":null}]}"#, r#"{"extensions":[{}]}"#),
            (
                r#"{"extensions":{"a":1,"a":2}}"#,
                r#"{"extensions":{"a":2}}"#,
            ),
            (r#"{"extensions":-0.0}"#, r#"{"extensions":0.0}"#),
            (r#"{"extensions":null}"#, r#"{}"#),
            (r#"{"extensions":{"a":[]}}"#, r#"{"extensions":[]}"#),
        ];
        for (a, b) in equal {
            assert!(same(a, b, "/extensions"), "{a} != {b}");
        }
        let different = [
            (r#"{"extensions":1}"#, r#"{"extensions":1.0}"#),
            (r#"{"extensions":[null]}"#, r#"{"extensions":[]}"#),
            (r#"{"extensions":[[]]}"#, r#"{"extensions":[{}]}"#),
            (r#"{"extensions":[1,2]}"#, r#"{"extensions":[2,1]}"#),
            (r#"{"extensions":"1"}"#, r#"{"extensions":1}"#),
            (
                r#"{"extensions":{"ab":"c"}}"#,
                r#"{"extensions":{"a":"bc"}}"#,
            ),
            (
                r#"{"extensions":-1}"#,
                r#"{"extensions":18446744073709551615}"#,
            ),
            (r#"{"extensions":false}"#, r#"{"extensions":0}"#),
        ];
        for (a, b) in different {
            assert!(!same(a, b, "/extensions"), "{a} == {b}");
        }
    }

    #[test]
    fn only_the_opened_sections_are_kept_and_a_later_duplicate_wins() {
        let s = spec(
            r#"{"config":{"ignition":{"version":"3.4.0"},"storage":{"disks":[{"device":"/dev/sdb"}],
                "files":[{"path":"/etc/a"}]},"passwd":{}},
                "config/passwd":1,"kernelType":"realtime","fips":true,"fips":false}"#,
        );
        assert!(s.digest("/config/ignition/version").is_some());
        assert!(s.digest("/config/storage/disks").is_some());
        assert!(s.digest("/config/passwd").is_none(), "pruned or escaped");
        assert!(s.digest("/config/storage/disks/0").is_none(), "not opened");
        assert_eq!(s.at("/kernelType").and_then(Read::text), Some("realtime"));
        assert!(!s.fips());
        let files = s.files().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(files.by_key.keys().collect::<Vec<_>>(), ["/etc/a"]);
    }

    #[test]
    fn digests_cross_as_words_and_back() {
        let digest: Digest = std::array::from_fn(|i| i as u8 * 7);
        assert_eq!(digest_from_words(digest_to_words(&digest)), digest);
        assert_eq!(
            digest_to_words(&digest)[0],
            u64::from_le_bytes([0, 7, 14, 21, 28, 35, 42, 49])
        );
    }

    #[test]
    fn registries_conf_is_the_one_source_kept() {
        let s = spec(&format!(
            r#"{{"config":{{"storage":{{"files":[
                {{"contents":{{"source":"data:,old"}},"path":"{REGISTRIES_CONF}"}},
                {{"contents":{{"source":"data:,other"}},"path":"/etc/other"}},
                {{"contents":{{"source":"data:,new"}},"path":"{REGISTRIES_CONF}"}}]}}}}}}"#
        ));
        let files = s.files().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(files.registries_conf(), "data:,new");
        assert_eq!(files.by_key.len(), 2);
    }

    #[test]
    fn a_list_that_is_not_one_or_lacks_keys_is_an_error_when_asked() {
        let s = spec(
            r#"{"config":{"storage":{"files":{"a":null}},"systemd":{"units":[{"name":null}]}}}"#,
        );
        assert!(s.files().is_ok_and(|f| f.by_key.is_empty()), "pruned");
        assert!(s.units().is_err());
        let s = spec(r#"{"config":{"storage":{"files":"x"},"systemd":{"units":["x"]}}}"#);
        assert!(s.files().is_err() && s.units().is_err());
    }
}
