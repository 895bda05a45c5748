//! OpenShift's feature sets as its CustomResourceDefinitions carry them:
//! openshift/api generates a CRD once per feature set whose schemas
//! differ, and the cluster-version operator installs the one of the
//! cluster's set. `mco-host crds` prints the CRDs of one set
//! ([`is_for_feature_set`]).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// The feature sets whose CRD schemas differ. The others upstream ships
/// are copies of these two (OKD of Default; DevPreviewNoUpgrade and
/// CustomNoUpgrade of TechPreviewNoUpgrade).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FeatureSet {
    /// Without `configImage` (`ImageModeStatusReporting` off).
    #[value(name = "Default")]
    Default,
    /// With `configImage` in spec and status (`ImageModeStatusReporting` on).
    #[value(name = "TechPreviewNoUpgrade")]
    TechPreviewNoUpgrade,
}

impl FeatureSet {
    pub const ALL: [Self; 2] = [Self::Default, Self::TechPreviewNoUpgrade];

    /// The set as FeatureGate `spec.featureSet` and the CRD annotation spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Default => "Default",
            Self::TechPreviewNoUpgrade => "TechPreviewNoUpgrade",
        }
    }
}

/// The annotation upstream's CRDs carry their feature set in.
pub const FEATURE_SET_ANNOTATION: &str = "release.openshift.io/feature-set";

/// Whether `crd` is one for `set`: a CRD generated per feature set says
/// which in [`FEATURE_SET_ANNOTATION`]; one without it is for every set.
pub fn is_for_feature_set(crd: &CustomResourceDefinition, set: FeatureSet) -> bool {
    crd.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(FEATURE_SET_ANNOTATION))
        .is_none_or(|s| s == set.name())
}
