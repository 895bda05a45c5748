//! The lookup budget of a handle: a guest asks a host-held input (a
//! node's labels, rendered configs, the stream, a providerSpec) for what
//! it reads, and each handle answers a bounded number of lookups per call,
//! so a guest that loops on a lookup is stopped, not served.

/// Lookups one handle answers in one call. The MCN guest makes one per
/// label a pool's selector names and two per rendered config (at most
/// three); a boot image guest a few per MachineSet: the budget is far
/// above any honest call and far below a flood.
pub const LOOKUP_BUDGET: u32 = 1024;

/// Counts one lookup of `what` through a handle, and traps the guest past
/// [`LOOKUP_BUDGET`].
pub fn charge(lookups: &mut u32, what: &str) -> wasmtime::Result<()> {
    *lookups += 1;
    if *lookups > LOOKUP_BUDGET {
        wasmtime::bail!(
            "the guest looked up {what} more than {LOOKUP_BUDGET} times in one call (the lookup budget of a handle per call)"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lookup_past_the_budget_traps_naming_the_rule() {
        let mut lookups = 0;
        for _ in 0..LOOKUP_BUDGET {
            assert!(charge(&mut lookups, "labels").is_ok());
        }
        let error = charge(&mut lookups, "labels").err().map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "the guest looked up labels more than 1024 times in one call (the lookup budget of a handle per call)"
            )
        );
    }
}
