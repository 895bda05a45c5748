//! Upstream's static list of RHCOS AMIs (upstream
//! `pkg/controller/machine-set-boot-image/ami.go` `AllowedAMIs`, 9,573 IDs), compiled in by `build.rs` as a sorted
//! table of 9-byte numbers: membership is a binary search, with nothing to
//! parse or allocate per call. The list says nothing about region or arch;
//! it only says an AMI is RHCOS and may be replaced.

include!("amis_encoding.rs");

static TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/rhcos_amis.bin"));

/// How many AMIs the compiled list holds.
pub fn len() -> usize {
    TABLE.len() / AMI_BYTES
}

/// Whether `id` is one of the RHCOS AMIs upstream ever published.
pub fn is_rhcos_ami(id: &str) -> bool {
    let Some(key) = encode_ami(id) else {
        return false;
    };
    let (mut low, mut high) = (0, len());
    while low < high {
        let mid = low + (high - low) / 2;
        let entry = &TABLE[mid * AMI_BYTES..(mid + 1) * AMI_BYTES];
        match entry.cmp(&key[..]) {
            std::cmp::Ordering::Less => low = mid + 1,
            std::cmp::Ordering::Greater => high = mid,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &str = include_str!("../data/aws-rhcos-amis.txt");

    #[test]
    fn every_listed_ami_is_found_and_nothing_else() {
        let listed: Vec<&str> = LIST
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .collect();
        assert_eq!(len(), 9_573);
        assert_eq!(listed.len(), len());
        for id in &listed {
            assert!(is_rhcos_ami(id), "{id} is listed but not found");
        }
        // Neighbours of listed IDs, and what is not an AMI ID at all.
        for id in [
            "ami-000065c53330c76d1",
            "ami-fffffffffffffffff",
            "ami-00000000000000000",
            "ami-000065c53330c76d2x",
            "ami-000065c53330c76d",
            "AMI-000065C53330C76D2",
            "ami-000065c53330c76dg",
            "ami-",
            "",
            "ami-\u{e9}00065c53330c76d",
        ] {
            assert!(!is_rhcos_ami(id), "{id:?} found but not listed");
        }
        assert!(is_rhcos_ami("ami-000065c53330c76d2"));
    }

    #[test]
    fn encoding_keeps_numeric_order() {
        let a = encode_ami("ami-0000000000000000f").unwrap();
        let b = encode_ami("ami-00000000000000010").unwrap();
        let c = encode_ami("ami-f0000000000000000").unwrap();
        assert!(a < b && b < c);
        assert_eq!(c[0], 0x0f);
    }
}
