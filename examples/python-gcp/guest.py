"""The ``boot-image-selector`` component: WIT values to library types and
back, and the GCP rule behind them. No decisions are taken here."""

from dataclasses import dataclass
import json
from typing import Optional

from gcp import Gcp
from mco_bootimage import jsontext
from mco_bootimage.decide import decide, fail
from mco_bootimage.decision import Error, Noop, Patch, Skip, bounded
from mco_bootimage.machineset import MachineSetView
from wit_world import exports
from wit_world.exports import boot_image as wit

RULE = Gcp()


@dataclass
class ClusterFacts:
    control_plane_arch: str
    multi_arch: bool
    known_images: frozenset


class BootImage(exports.BootImage):
    def decide(self, metadata, machine_set: wit.MachineSet, cluster: wit.Cluster,
               user_data: Optional[str], vcenter: Optional[wit.VcenterFacts],
               ec2: Optional[wit.Ec2Facts]) -> wit.Decision:
        # `vcenter` is what the host read for a vSphere MachineSet, `ec2`
        # what it read from EC2 for an AWS one; a GCP guest never gets
        # either.
        try:
            ms = _view(machine_set)
            if isinstance(ms, Error):
                return _to_wit(ms)
            facts = ClusterFacts(cluster.control_plane_arch, cluster.multi_arch,
                                 frozenset(cluster.known_images))
            return _to_wit(decide(RULE, metadata.loaded, ms, facts, user_data))
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


def _view(ms: wit.MachineSet):
    control_plane = ms.kind == wit.MachineKind.CONTROL_PLANE_MACHINE_SET
    view = MachineSetView(
        name=ms.name,
        control_plane=control_plane,
        labels=dict(ms.labels),
        annotations=dict(ms.annotations),
        template_labels=dict(ms.template_labels),
        owner_references=list(ms.owner_references),
    )
    if ms.provider_spec is not None:
        try:
            view.provider_spec = jsontext.loads(ms.provider_spec)
        except jsontext.JsonError as e:
            return fail(view, f"providerSpec is not valid JSON: {e}")
    return view


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
