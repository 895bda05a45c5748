"""The ``coreos-stream`` resource of the exported ``boot-image`` interface
(componentize-py looks an exported resource up in the module named after
its interface). The host makes one per ConfigMap version and decides many
MachineSets with it, so the stream is parsed once."""

from typing import Optional

from mco_bootimage.decide import load_stream
from wit_world.exports import boot_image


class CoreosStream(boot_image.CoreosStream):
    def __init__(self, json: Optional[str]) -> None:
        # A Stream, or the reason the ConfigMap has none that can be used;
        # never an exception: decide reports it, after the rules that leave
        # a MachineSet alone anyway.
        self.loaded = load_stream(json)
