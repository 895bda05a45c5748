//! Where the boot image job's objects live. It reads them as JSON, decoded
//! once per watch event (`triggers::Index`): the host rules walk them with
//! field-path errors (`rules`), and a providerSpec is free-form by nature.

/// MachineSets, the ControlPlaneMachineSet and their user-data Secrets.
pub const MACHINE_API_NAMESPACE: &str = "openshift-machine-api";
/// The one ControlPlaneMachineSet there is (its API refuses other names).
pub const CONTROL_PLANE_MACHINE_SET_NAME: &str = "cluster";
/// The `coreos-bootimages` ConfigMap with the release's CoreOS stream.
pub const STREAM_NAMESPACE: &str = "openshift-machine-config-operator";
pub const STREAM_CONFIGMAP: &str = "coreos-bootimages";
