"""The ``boot-image-selector`` component: WIT values to library types and
back, the host's handles behind the library's lookups, and the GCP rule
behind them. No decisions are taken here."""

from dataclasses import dataclass
import json
from typing import Optional

from gcp import Gcp
from mco_bootimage import jsontext
from mco_bootimage.decide import decide, fail
from mco_bootimage.decision import Error, Noop, Patch, Skip, bounded
from mco_bootimage.machineset import MachineSetView
from mco_bootimage.stream import no_architecture, no_gcp_image
from componentize_py_types import Err
from wit_world import exports
from wit_world.exports import boot_image as wit
from wit_world.imports import boot_image_inputs as inputs

RULE = Gcp()
# Read beside the rule's own: the user-data Secret's name.
COMMON_FIELDS = ("userDataSecret",)


@dataclass
class ClusterFacts:
    control_plane_arch: str
    multi_arch: bool
    known_images: frozenset


class HostStream:
    """The host's parse of the stream, asked lookup by lookup."""

    def __init__(self, handle: inputs.CoreosStream) -> None:
        self.handle = handle

    def gcp_image_path(self, arch):
        try:
            return self.handle.gcp_image(arch)
        except Err as e:
            name = self.handle.name()
            if e.value == inputs.LookupError.NO_ARCHITECTURE:
                raise no_architecture(name, arch) from None
            raise no_gcp_image(name, arch) from None


class BootImage(exports.BootImage):
    def decide(self, metadata: inputs.CoreosStream,
               provider_spec: Optional[inputs.ProviderSpec], machine_set: wit.MachineSet,
               cluster: wit.Cluster, user_data: Optional[str],
               vcenter: Optional[wit.VcenterFacts],
               ec2: Optional[wit.Ec2Facts]) -> wit.Decision:
        # `vcenter` is what the host read for a vSphere MachineSet, `ec2`
        # what it read from EC2 for an AWS one; a GCP guest never gets
        # either.
        try:
            ms = _view(machine_set, provider_spec)
            if isinstance(ms, Error):
                return _to_wit(ms)
            facts = ClusterFacts(cluster.control_plane_arch, cluster.multi_arch,
                                 frozenset(cluster.known_images))
            unusable = metadata.unusable()
            stream = HostStream(metadata) if unusable is None else unusable
            return _to_wit(decide(RULE, stream, ms, facts, user_data))
        except Exception as e:  # noqa: BLE001 - the guest must stay total
            # An exception escaping would trap the instance and count as a
            # broken guest; a bug in a rule is this MachineSet's error.
            noun = _view_noun(machine_set)
            return wit.Decision_Error(bounded(
                f"failed to reconcile {noun} {machine_set.name}, err: internal error "
                f"in the Python guest: {type(e).__name__}: {e}"))


def _view_noun(ms: wit.MachineSet):
    control_plane = ms.kind == wit.MachineKind.CONTROL_PLANE_MACHINE_SET
    return "ControlPlaneMachineSet" if control_plane else "machineset"


def _view(ms: wit.MachineSet, provider_spec: Optional[inputs.ProviderSpec]):
    control_plane = ms.kind == wit.MachineKind.CONTROL_PLANE_MACHINE_SET
    view = MachineSetView(
        name=ms.name,
        control_plane=control_plane,
        labels=dict(ms.labels),
        annotations=dict(ms.annotations),
        template_labels=dict(ms.template_labels),
        owner_references=list(ms.owner_references),
    )
    if provider_spec is not None:
        try:
            view.provider_spec = _part(provider_spec)
        except jsontext.JsonError as e:
            return fail(view, f"providerSpec is not valid JSON: {e}")
    return view


# A providerSpec that is no object: an empty value of its type, since its
# type is all a rule reads of it.
_EMPTY = {
    inputs.JsonKind.ARRAY: [],
    inputs.JsonKind.STRING: "",
    inputs.JsonKind.NUMBER: 0,
    inputs.JsonKind.BOOLEAN: False,
}


def _part(spec: inputs.ProviderSpec):
    """The part of the providerSpec the rule reads, from the host: the
    fields it names, each parsed alone (the Rust guest's ``part``)."""
    kind = spec.kind()
    if kind != inputs.JsonKind.OBJECT:
        return _EMPTY[kind]
    part = {}
    for key in RULE.provider_spec_fields + COMMON_FIELDS:
        text = spec.field(key)
        if text is not None:
            part[key] = jsontext.loads(text)
    return part


def _to_wit(decision) -> wit.Decision:
    if isinstance(decision, Patch):
        secret = None
        if decision.user_data_secret is not None:
            name, data, annotations = decision.user_data_secret
            secret = wit.UserDataUpgrade(name=name, user_data=data, annotations=annotations)
        # Sorted keys: the text the Rust guest (serde_json) writes.
        text = json.dumps(decision.patch, separators=(",", ":"), sort_keys=True,
                          ensure_ascii=False)
        return wit.Decision_Patch(wit.Patch(target=decision.target, merge_patch=text,
                                            user_data_secret=secret, template_import=None))
    if isinstance(decision, Noop):
        return wit.Decision_Noop(decision.reason)
    if isinstance(decision, Skip):
        return wit.Decision_Skip(decision.reason)
    return wit.Decision_Error(decision.message)
