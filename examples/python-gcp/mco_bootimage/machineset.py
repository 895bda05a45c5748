"""The parts of a MachineSet or ControlPlaneMachineSet the rules read, as
the host hands them over."""

from dataclasses import dataclass, field
from typing import Optional

from . import fields

CPMS_MACHINE_TYPE = "machines_v1beta1_machine_openshift_io"
_MACHINESET_PATH = ("spec", "template", "spec", "providerSpec", "value")
_CPMS_PATH = ("spec", "template", CPMS_MACHINE_TYPE, "spec", "providerSpec", "value")


@dataclass
class MachineSetView:
    name: str
    control_plane: bool = False
    labels: dict = field(default_factory=dict)
    annotations: dict = field(default_factory=dict)
    template_labels: dict = field(default_factory=dict)
    owner_references: list = field(default_factory=list)
    # providerSpec.value, untyped so every field the rule does not touch
    # is left to the API server.
    provider_spec: Optional[object] = None

    @property
    def noun(self):
        """How messages name the object, as upstream's logs do."""
        return "ControlPlaneMachineSet" if self.control_plane else "machineset"

    @property
    def kind(self):
        return "ControlPlaneMachineSet" if self.control_plane else "MachineSet"

    @property
    def provider_spec_path(self):
        """Where providerSpec.value sits: a patch nests its fragment here."""
        return _CPMS_PATH if self.control_plane else _MACHINESET_PATH

    def user_data_secret_name(self):
        """providerSpec.value.userDataSecret.name, or None when unset."""
        if self.provider_spec is None:
            return None
        spec = fields.as_object(self.provider_spec, "providerSpec.value")
        secret = fields.opt_object(spec, "userDataSecret", "providerSpec.value")
        if secret is None:
            return None
        return fields.opt_str(secret, "name", "providerSpec.value.userDataSecret") or None
