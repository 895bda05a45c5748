//! A Rekor entry's claims checked offline: that it records this very
//! signature and certificate, that the log signed its integrated time
//! (the signed entry timestamp, Rekor's inclusion promise) and, where the
//! entry carries one, that its RFC 6962 inclusion proof reaches a
//! checkpoint the log signed.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use super::evidence::{Evidence, Proof, Signed, Tlog};
use super::trust::{Log, TrustRoot, hex};
use super::{CertRefusal, LogEntry};
use crate::public_key::PublicKey;

/// A log entry that vouched for a signature, and the time it signed.
pub(crate) struct Verified {
    pub(crate) integrated_time: u64,
    pub(crate) entry: LogEntry,
}

/// Refused unless `tlog`, from a log `trust` lists, records `evidence`'s
/// signature and certificate under a valid signed entry timestamp (and
/// its inclusion proof, if any, holds).
pub(crate) fn verify_entry(
    tlog: &Tlog,
    trust: &TrustRoot,
    evidence: &Evidence,
) -> Result<Verified, CertRefusal> {
    let log = trust
        .log(&tlog.log_id)
        .ok_or_else(|| CertRefusal::UnknownLog(hex(&tlog.log_id)))?;
    let key = log.key_at(tlog.integrated_time)?;
    body_records(&tlog.body, evidence)?;
    let promise = tlog
        .promise
        .as_deref()
        .ok_or(CertRefusal::NoInclusionPromise)?;
    if !key.verifies(&set_payload(tlog), promise) {
        return Err(CertRefusal::BadInclusionPromise(log.hex_id()));
    }
    if let Some(proof) = &tlog.proof {
        verify_inclusion(proof, &tlog.body, key, log)?;
    }
    Ok(Verified {
        integrated_time: tlog.integrated_time,
        entry: LogEntry {
            index: tlog.log_index,
            log_id: log.hex_id(),
        },
    })
}

/// What a signed entry timestamp signs: the canonical JSON (keys sorted,
/// no spaces) of the entry's body, integrated time, log ID and index.
pub(crate) fn set_payload(tlog: &Tlog) -> Vec<u8> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Payload {
        body: String,
        integrated_time: u64,
        #[serde(rename = "logID")]
        log_id: String,
        log_index: u64,
    }
    // Serializing strings of base64 and hex characters and integers is
    // infallible, and serde_json writes fields in declaration order.
    serde_json::to_vec(&Payload {
        body: base64::engine::general_purpose::STANDARD.encode(&tlog.body),
        integrated_time: tlog.integrated_time,
        log_id: hex(&tlog.log_id),
        log_index: tlog.log_index,
    })
    .unwrap_or_default()
}

/// Refused unless the entry body (`hashedrekord` or `dsse`, v0.0.1) is of
/// this signature, its signed content and its certificate: a valid entry
/// of another signature must not lend it a time.
fn body_records(body: &[u8], evidence: &Evidence) -> Result<(), CertRefusal> {
    #[derive(Deserialize)]
    #[serde(tag = "kind", content = "spec", rename_all = "lowercase")]
    enum Body {
        Hashedrekord(HashedRekord),
        Dsse(Dsse),
    }
    #[derive(Deserialize)]
    struct HashedRekord {
        data: Data,
        signature: RekordSignature,
    }
    #[derive(Deserialize)]
    struct Data {
        hash: Hash,
    }
    #[derive(Deserialize)]
    struct Hash {
        algorithm: String,
        value: String,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct RekordSignature {
        content: String,
        public_key: Content,
    }
    #[derive(Deserialize)]
    struct Content {
        content: String,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Dsse {
        payload_hash: Hash,
        signatures: Vec<DsseSignature>,
    }
    #[derive(Deserialize)]
    struct DsseSignature {
        signature: String,
        verifier: String,
    }
    let body: Body = serde_json::from_slice(body).map_err(|e| CertRefusal::Malformed {
        what: "log entry body (hashedrekord or dsse)",
        why: e.to_string(),
    })?;
    let decode = |text: &str| {
        base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .ok()
    };
    let is_certificate = |text: &str| {
        decode(text)
            .and_then(|pem| der::pem::decode_vec(&pem).ok().map(|(_, der)| der))
            .is_some_and(|der| der == evidence.certificate)
    };
    let is_signature = |text: &str| decode(text).is_some_and(|s| s == evidence.signature);
    let hash_is =
        |hash: &Hash, expected: &[u8]| hash.algorithm == "sha256" && hash.value == hex(expected);
    match (body, &evidence.signed) {
        (Body::Hashedrekord(entry), Signed::Payload(_) | Signed::Digest(_)) => {
            if !hash_is(&entry.data.hash, &evidence.signed.sha256()) {
                return Err(CertRefusal::EntryMismatch("its hash is of other content"));
            }
            if !is_signature(&entry.signature.content) {
                return Err(CertRefusal::EntryMismatch("its signature differs"));
            }
            if !is_certificate(&entry.signature.public_key.content) {
                return Err(CertRefusal::EntryMismatch("its certificate differs"));
            }
            Ok(())
        }
        (Body::Dsse(entry), Signed::Dsse { payload, .. }) => {
            if !hash_is(&entry.payload_hash, &Sha256::digest(payload)) {
                return Err(CertRefusal::EntryMismatch(
                    "its payload hash is of other content",
                ));
            }
            if !entry
                .signatures
                .iter()
                .any(|s| is_signature(&s.signature) && is_certificate(&s.verifier))
            {
                return Err(CertRefusal::EntryMismatch(
                    "none of its signatures is this one under this certificate",
                ));
            }
            Ok(())
        }
        _ => Err(CertRefusal::EntryMismatch(
            "its kind does not fit the signature's form",
        )),
    }
}

/// Refused unless the RFC 6962 inclusion proof takes the entry's leaf to
/// the root hash, and a signature of the log's key on the checkpoint
/// commits to that root and tree size, in a checkpoint of this log (its
/// origin, where the trust root names one: one key may sign for several
/// logs or shards, and a tree of another is no proof in this one).
fn verify_inclusion(
    proof: &Proof,
    body: &[u8],
    key: &PublicKey,
    log: &Log,
) -> Result<(), CertRefusal> {
    let fail = |why: &str| Err(CertRefusal::BadInclusionProof(why.into()));
    let mut leaf = vec![0u8];
    leaf.extend_from_slice(body);
    let Some(root) = root_from_inclusion_proof(
        proof.log_index,
        proof.tree_size,
        Sha256::digest(&leaf).to_vec(),
        &proof.hashes,
    ) else {
        return fail("its hashes do not fit the tree size and index");
    };
    if root != proof.root_hash {
        return fail("it does not reach the root hash");
    }
    let Some(checkpoint) = Checkpoint::parse(&proof.checkpoint) else {
        return fail("the checkpoint is not a signed note");
    };
    if !checkpoint.signed_by(key, &log.id) {
        return fail("the checkpoint is not signed by the log");
    }
    if let Some(expected) = &log.origin
        && !checkpoint.is_of(expected)
    {
        return Err(CertRefusal::BadInclusionProof(format!(
            "the checkpoint is of log {:?}, not {expected:?}",
            checkpoint.origin
        )));
    }
    if checkpoint.tree_size != proof.tree_size || checkpoint.root_hash != proof.root_hash {
        return fail("the checkpoint commits to another tree");
    }
    Ok(())
}

/// RFC 9162 section 2.1.3.2: the root an inclusion proof of leaf `index`
/// in a tree of `size` leaves computes, or none where the proof does not
/// fit the tree.
pub(crate) fn root_from_inclusion_proof(
    index: u64,
    size: u64,
    leaf_hash: Vec<u8>,
    proof: &[Vec<u8>],
) -> Option<Vec<u8>> {
    if index >= size {
        return None;
    }
    let node = |left: &[u8], right: &[u8]| {
        let mut hasher = Sha256::new();
        hasher.update([1u8]);
        hasher.update(left);
        hasher.update(right);
        hasher.finalize().to_vec()
    };
    let (mut fnode, mut snode, mut root) = (index, size - 1, leaf_hash);
    for sibling in proof {
        if snode == 0 {
            return None;
        }
        if fnode & 1 == 1 || fnode == snode {
            root = node(sibling, &root);
            while fnode & 1 == 0 && fnode != 0 {
                fnode >>= 1;
                snode >>= 1;
            }
        } else {
            root = node(&root, sibling);
        }
        fnode >>= 1;
        snode >>= 1;
    }
    (snode == 0).then_some(root)
}

/// A checkpoint: a signed note whose text is the origin, tree size and
/// base64 root hash (further lines allowed), then a blank line and
/// signature lines `— <name> <base64(key hint (4 bytes) || signature)>`.
struct Checkpoint<'a> {
    text: &'a str,
    origin: &'a str,
    tree_size: u64,
    root_hash: Vec<u8>,
    signatures: Vec<Vec<u8>>,
}

impl<'a> Checkpoint<'a> {
    fn parse(envelope: &'a str) -> Option<Checkpoint<'a>> {
        let split = envelope.find("\n\n")?;
        let (text, signatures) = (&envelope[..=split], &envelope[split + 2..]);
        let mut lines = text.lines();
        let origin = lines.next().filter(|origin| !origin.is_empty())?;
        let tree_size = lines.next()?.parse().ok()?;
        let root_hash = base64::engine::general_purpose::STANDARD
            .decode(lines.next()?)
            .ok()?;
        let signatures = signatures
            .lines()
            .filter(|line| !line.is_empty())
            .map(|line| {
                let (_name, signature) = line.strip_prefix("\u{2014} ")?.rsplit_once(' ')?;
                base64::engine::general_purpose::STANDARD
                    .decode(signature)
                    .ok()
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Checkpoint {
            text,
            origin,
            tree_size,
            root_hash,
            signatures,
        })
    }

    /// Whether the checkpoint is of the log whose origin is `expected`:
    /// its origin is that, or (Rekor v1) that followed by ` - ` and the
    /// tree's ID.
    fn is_of(&self, expected: &str) -> bool {
        self.origin
            .strip_prefix(expected)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(" - "))
    }

    /// Whether a signature whose key hint is the log ID's first four
    /// bytes (Rekor's hint: the key's SHA-256) verifies under `key`.
    fn signed_by(&self, key: &PublicKey, log_id: &[u8]) -> bool {
        self.signatures.iter().any(|signature| {
            signature.len() > 4
                && log_id.get(..4) == Some(&signature[..4])
                && key.verifies(self.text.as_bytes(), &signature[4..])
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(i: u8) -> Vec<u8> {
        Sha256::digest([0, i]).to_vec()
    }

    /// The RFC 6962 tree head of `leaves`, computed directly.
    fn tree_root(leaves: &[Vec<u8>]) -> Vec<u8> {
        if leaves.len() == 1 {
            return leaves[0].clone();
        }
        let split = leaves.len().next_power_of_two() / 2;
        let mut hasher = Sha256::new();
        hasher.update([1u8]);
        hasher.update(tree_root(&leaves[..split]));
        hasher.update(tree_root(&leaves[split..]));
        hasher.finalize().to_vec()
    }

    /// The audit path of leaf `index`, computed directly (RFC 6962 2.1.1).
    fn path(index: usize, leaves: &[Vec<u8>]) -> Vec<Vec<u8>> {
        if leaves.len() == 1 {
            return Vec::new();
        }
        let split = leaves.len().next_power_of_two() / 2;
        if index < split {
            let mut p = path(index, &leaves[..split]);
            p.push(tree_root(&leaves[split..]));
            p
        } else {
            let mut p = path(index - split, &leaves[split..]);
            p.push(tree_root(&leaves[..split]));
            p
        }
    }

    #[test]
    fn every_leaf_of_every_small_tree_proves_and_nothing_else_does() {
        for size in 1..=17u8 {
            let leaves: Vec<_> = (0..size).map(leaf).collect();
            let root = tree_root(&leaves);
            for index in 0..size {
                let proof = path(usize::from(index), &leaves);
                let computed = root_from_inclusion_proof(
                    u64::from(index),
                    u64::from(size),
                    leaves[usize::from(index)].clone(),
                    &proof,
                );
                assert_eq!(computed.as_ref(), Some(&root), "{index} of {size}");
                // Another leaf, index or size does not reach the root.
                let other =
                    root_from_inclusion_proof(u64::from(index), u64::from(size), leaf(99), &proof);
                assert_ne!(other.as_ref(), Some(&root));
                let mut longer = proof.clone();
                longer.push(leaf(1));
                assert_eq!(
                    root_from_inclusion_proof(
                        u64::from(index),
                        u64::from(size),
                        leaves[0].clone(),
                        &longer
                    ),
                    None
                );
            }
            assert_eq!(
                root_from_inclusion_proof(u64::from(size), u64::from(size), leaf(0), &[]),
                None
            );
        }
    }

    #[test]
    fn checkpoints_parse_only_as_signed_notes() {
        let root = base64::engine::general_purpose::STANDARD.encode([7u8; 32]);
        let good = format!("log - 1\n12\n{root}\n\n\u{2014} log AAAAAAAA\n");
        let parsed = Checkpoint::parse(&good);
        assert!(parsed.as_ref().is_some_and(|c| c.tree_size == 12
            && c.root_hash == [7u8; 32]
            && c.text == format!("log - 1\n12\n{root}\n")));
        let of = |origin: &str| format!("{origin}\n12\n{root}\n\n\u{2014} log AAAAAAAA\n");
        for (origin, expected, is_of) in [
            (
                "rekor.sigstore.dev - 1193050959916656506",
                "rekor.sigstore.dev",
                true,
            ),
            (
                "log2025-1.rekor.sigstore.dev",
                "log2025-1.rekor.sigstore.dev",
                true,
            ),
            ("rekor.sigstore.dev.evil - 1", "rekor.sigstore.dev", false),
            ("rekor.sigstore.devx", "rekor.sigstore.dev", false),
            ("other - 1", "rekor.sigstore.dev", false),
        ] {
            let text = of(origin);
            let parsed = Checkpoint::parse(&text);
            assert_eq!(parsed.map(|c| c.is_of(expected)), Some(is_of), "{origin}");
        }
        for bad in [
            "",
            "log\n12\n",
            &format!("\n12\n{root}\n\n\u{2014} log AAAA\n"),
            &format!("log\nx\n{root}\n\n\u{2014} log AAAA\n"),
            "log\n12\n!!\n\n\u{2014} log AAAA\n",
            &format!("log\n12\n{root}\n\n- log AAAA\n"),
            &format!("log\n12\n{root}\n\n\u{2014} log !!\n"),
        ] {
            assert!(Checkpoint::parse(bad).is_none(), "{bad:?}");
        }
    }
}
