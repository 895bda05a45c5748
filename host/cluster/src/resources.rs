//! Every OpenShift resource type this host reads or writes, in one place.
//! Core kinds (Node, ConfigMap, Secret, Lease, Event) come typed from
//! k8s-openapi and the MachineConfigNode from our own CRD types; the rest
//! are named here, and a job that reads one typed implements `Resource`
//! for its view with [`typed_resource!`](crate::typed_resource).

use kube::api::{ApiResource, GroupVersionKind};

/// A resource type: its group, version, kind and plural.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceType {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
}

impl ResourceType {
    /// For `Api<DynamicObject>` and reflector stores of untyped objects.
    pub fn api_resource(&self) -> ApiResource {
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(self.group, self.version, self.kind),
            self.plural,
        )
    }
}

const fn openshift(
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
) -> ResourceType {
    ResourceType {
        group,
        version,
        kind,
        plural,
    }
}

pub const MACHINE_CONFIG_POOL: ResourceType = openshift(
    "machineconfiguration.openshift.io",
    "v1",
    "MachineConfigPool",
    "machineconfigpools",
);
pub const MACHINE_CONFIG: ResourceType = openshift(
    "machineconfiguration.openshift.io",
    "v1",
    "MachineConfig",
    "machineconfigs",
);
pub const MACHINE_SET: ResourceType = openshift(
    "machine.openshift.io",
    "v1beta1",
    "MachineSet",
    "machinesets",
);
/// ControlPlaneMachineSet `cluster` in `openshift-machine-api` (its
/// providerSpec one level deeper than a MachineSet's).
pub const CONTROL_PLANE_MACHINE_SET: ResourceType = openshift(
    "machine.openshift.io",
    "v1",
    "ControlPlaneMachineSet",
    "controlplanemachinesets",
);
/// The readiness name of the one watch of MachineConfiguration `cluster`,
/// which the MCN and boot image jobs share.
pub const MACHINE_CONFIGURATION_WATCH: &str = "machineconfigurations";
pub const MACHINE_CONFIGURATION: ResourceType = openshift(
    "operator.openshift.io",
    "v1",
    "MachineConfiguration",
    "machineconfigurations",
);
pub const CLUSTER_VERSION: ResourceType = openshift(
    "config.openshift.io",
    "v1",
    "ClusterVersion",
    "clusterversions",
);
/// FeatureGate `cluster`: the gates of the cluster's feature set. Read only.
pub const FEATURE_GATE: ResourceType =
    openshift("config.openshift.io", "v1", "FeatureGate", "featuregates");
pub const INFRASTRUCTURE: ResourceType = openshift(
    "config.openshift.io",
    "v1",
    "Infrastructure",
    "infrastructures",
);
/// Which keys sign the images of a registry scope; `verify.clusterImagePolicies`
/// takes the PublicKey ones' keys. Read only.
pub const CLUSTER_IMAGE_POLICY: ResourceType = openshift(
    "config.openshift.io",
    "v1",
    "ClusterImagePolicy",
    "clusterimagepolicies",
);
pub const CONFIG_MAP: ResourceType = openshift("", "v1", "ConfigMap", "configmaps");

/// Implements `kube::Resource` for a typed view of a catalogued type
/// (`$view` with public `metadata`), so it can be watched, cached and
/// decoded once per event.
#[macro_export]
macro_rules! typed_resource {
    ($view:ty, $type:expr, $scope:ty) => {
        impl ::kube::Resource for $view {
            type DynamicType = ();
            type Scope = $scope;

            fn kind(_: &()) -> ::std::borrow::Cow<'_, str> {
                $type.kind.into()
            }
            fn group(_: &()) -> ::std::borrow::Cow<'_, str> {
                $type.group.into()
            }
            fn version(_: &()) -> ::std::borrow::Cow<'_, str> {
                $type.version.into()
            }
            fn plural(_: &()) -> ::std::borrow::Cow<'_, str> {
                $type.plural.into()
            }
            fn meta(&self) -> &::kube::api::ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut ::kube::api::ObjectMeta {
                &mut self.metadata
            }
        }
    };
}
