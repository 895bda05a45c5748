//! `memcmp` and `bcmp` for the Rust wasm guests. Every string comparison in
//! a guest ends in one of them, and wasi-libc's compare one byte per
//! iteration where native code is vectorised; the guests' keys share long
//! prefixes (annotations, AMI IDs, region names), so that loop was the
//! largest guest symbol in the benches' profiles
//! (docs/dev/records/benchmarks.md). These compare eight bytes at a time.
//! A guest links them by naming this crate (`use mco_guest_memcmp as _;`),
//! so wasi-libc's are never pulled in. Only wasm32 builds export the
//! symbols; natively the comparison is an ordinary function, so the tests
//! can hold it against `<[u8]>::cmp`.

#![no_std]

/// Compares `n` bytes at `a` and `b` as unsigned bytes: negative, zero or
/// positive like C's `memcmp`.
///
/// # Safety
///
/// `a` and `b` must each be valid for reads of `n` bytes.
#[allow(unsafe_code)] // The C ABI contract of memcmp: raw pointers and a length.
#[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    const WORD: usize = size_of::<u64>();
    let mut at = 0;
    while at + WORD <= n {
        // SAFETY: at + WORD <= n, and the caller vouches for n bytes at each.
        let (x, y) = unsafe {
            (
                a.add(at).cast::<u64>().read_unaligned(),
                b.add(at).cast::<u64>().read_unaligned(),
            )
        };
        if x != y {
            // Little-endian: the first differing byte in memory is the
            // lowest differing byte of the word.
            at += (x ^ y).trailing_zeros() as usize / 8;
            break;
        }
        at += WORD;
    }
    while at < n {
        // SAFETY: at < n.
        let (x, y) = unsafe { (*a.add(at), *b.add(at)) };
        if x != y {
            return i32::from(x) - i32::from(y);
        }
        at += 1;
    }
    0
}

/// Zero when the `n` bytes at `a` and `b` are equal, non-zero otherwise.
///
/// # Safety
///
/// As [`memcmp`].
#[allow(unsafe_code)] // As memcmp.
#[cfg_attr(target_arch = "wasm32", unsafe(no_mangle))]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the caller's guarantee, passed on.
    unsafe { memcmp(a, b, n) }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use core::cmp::Ordering;

    use proptest::prelude::*;

    use super::{bcmp, memcmp};

    /// `memcmp` over the common length, then the lengths: the order of
    /// `<[u8]>::cmp`.
    fn compare(a: &[u8], b: &[u8]) -> Ordering {
        let n = a.len().min(b.len());
        #[allow(unsafe_code)] // Both slices hold at least n bytes.
        // SAFETY: n is at most either slice's length.
        let prefix = unsafe { memcmp(a.as_ptr(), b.as_ptr(), n) };
        prefix.cmp(&0).then(a.len().cmp(&b.len()))
    }

    /// `bcmp` over the common length: whether those bytes are equal.
    fn equal_prefix(a: &[u8], b: &[u8]) -> bool {
        let n = a.len().min(b.len());
        #[allow(unsafe_code)] // Both slices hold at least n bytes.
        // SAFETY: n is at most either slice's length.
        let differs = unsafe { bcmp(a.as_ptr(), b.as_ptr(), n) };
        differs == 0
    }

    /// Byte strings that share long prefixes and differ anywhere, in any
    /// byte value (a signed comparison would get 0x80.. wrong).
    fn similar() -> impl Strategy<Value = (Vec<u8>, Vec<u8>)> {
        (
            proptest::collection::vec(any::<u8>(), 0..40),
            proptest::collection::vec(any::<u8>(), 0..12),
            proptest::collection::vec(any::<u8>(), 0..12),
        )
            .prop_map(|(common, x, y)| {
                (
                    [common.as_slice(), &x].concat(),
                    [common.as_slice(), &y].concat(),
                )
            })
    }

    proptest! {
        #[test]
        fn orders_as_slices_do((a, b) in similar()) {
            prop_assert_eq!(compare(&a, &b), a.cmp(&b));
            prop_assert_eq!(compare(&b, &a), b.cmp(&a));
            prop_assert_eq!(compare(&a, &a), Ordering::Equal);
            let n = a.len().min(b.len());
            prop_assert_eq!(equal_prefix(&a, &b), a[..n] == b[..n]);
        }
    }

    #[test]
    fn every_position_and_value_of_the_first_difference() {
        let base = [0x61u8; 19];
        for at in 0..base.len() {
            for value in [0x00, 0x60, 0x62, 0x7f, 0x80, 0xff] {
                let mut other = base;
                other[at] = value;
                assert_eq!(
                    compare(&base, &other),
                    base.cmp(&other),
                    "at {at}, {value:#x}"
                );
                assert_eq!(
                    compare(&other, &base),
                    other.cmp(&base),
                    "at {at}, {value:#x}"
                );
            }
        }
    }
}
