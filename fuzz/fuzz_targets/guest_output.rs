//! Output validation: whatever a guest could return, the host's checks
//! must classify it without panicking. The bytes are read twice: as the
//! eval contract's JSON for a boot image decision, and as a structured
//! node-state decision.

#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use mco_mcn::{
    Condition, ConditionStatus, ConfigImage, ConfigVersion, DEFAULT_CONDITION_TYPES, Decision,
    MachineConfigNode, NodeStatus,
};

fuzz_target!(|data: &[u8]| {
    if let Ok(decision) = serde_json::from_slice::<mco_bootimage::Decision>(data)
        && mco_bootimage::validate_decision(&decision).is_ok()
    {
        // What passes must still pass after the trip through the contract.
        let back: mco_bootimage::Decision = serde_json::from_str(&decision.to_json())
            .unwrap_or_else(|e| panic!("a valid decision does not read back: {e}"));
        assert_eq!(mco_bootimage::validate_decision(&back), Ok(()));
    }
    if let Ok(decision) = mcn_decision(&mut Unstructured::new(data)) {
        for image_mode in [false, true] {
            let _ = mco_mcn::validate(&decision, image_mode);
        }
    }
});

/// Mostly well-known condition types, so validation gets past the first
/// checks often enough to reach the later ones.
fn condition_type(u: &mut Unstructured) -> Result<String> {
    if u.ratio(7, 8)? {
        Ok(u.choose(&DEFAULT_CONDITION_TYPES)?.to_string())
    } else {
        u.arbitrary()
    }
}

fn mcn_decision(u: &mut Unstructured) -> Result<Decision> {
    Ok(match u.int_in_range(0..=3)? {
        0 => Decision::Skip(u.arbitrary()?),
        1 => Decision::Error(u.arbitrary()?),
        _ => {
            let conditions = (0..u.int_in_range(0..=24)?)
                .map(|_| {
                    Ok(Condition {
                        type_: condition_type(u)?,
                        status: *u.choose(&[
                            ConditionStatus::True,
                            ConditionStatus::False,
                            ConditionStatus::Unknown,
                        ])?,
                        reason: u.arbitrary()?,
                        message: u.arbitrary()?,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            Decision::Apply(MachineConfigNode {
                pool: u.arbitrary()?,
                desired_config: u.arbitrary()?,
                desired_image: u.arbitrary()?,
                status: NodeStatus {
                    observed_generation: u.arbitrary()?,
                    config_version: ConfigVersion {
                        current: u.arbitrary()?,
                        desired: u.arbitrary()?,
                    },
                    config_image: if u.arbitrary()? {
                        Some(ConfigImage {
                            current_image: u.arbitrary()?,
                            desired_image: u.arbitrary()?,
                        })
                    } else {
                        None
                    },
                    conditions,
                },
            })
        }
    })
}
