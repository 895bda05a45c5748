// Shared by build.rs (which writes the table) and the lookup (which reads
// it), so the two cannot disagree on the encoding. Plain `include!`d code.

/// Bytes of one encoded AMI ID: 17 hex digits are 68 bits.
pub const AMI_BYTES: usize = 9;
/// Hex digits after `ami-` in every ID the list holds.
const AMI_DIGITS: usize = 17;

/// `ami-` + 17 lowercase hex digits as a 9-byte big-endian number, so byte
/// order is numeric order; anything else has no encoding (and so is never
/// in the table).
pub fn encode_ami(id: &str) -> Option<[u8; AMI_BYTES]> {
    let digits = id.strip_prefix("ami-")?.as_bytes();
    if digits.len() != AMI_DIGITS {
        return None;
    }
    let mut value: u128 = 0;
    for &d in digits {
        let nibble = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            _ => return None,
        };
        value = (value << 4) | u128::from(nibble);
    }
    let be = value.to_be_bytes();
    let mut out = [0u8; AMI_BYTES];
    out.copy_from_slice(&be[be.len() - AMI_BYTES..]);
    Some(out)
}
