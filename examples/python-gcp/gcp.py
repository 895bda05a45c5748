"""The GCP boot image rule (``GCPMachineProviderSpec``).

GCP images are global, so the target depends on the architecture only.
Only boot disks change (data disks may carry any image, OCPBUGS-55830),
and a boot disk on an image that is no published RHCOS image leaves the
whole MachineSet alone: the admin chose it (marketplace, custom, another
project), and replacing it would silently undo that choice
(OCPBUGS-57348).
"""

from mco_bootimage import fields
from mco_bootimage.decide import quoted
from mco_bootimage.platform import Noop, OnTarget, Skip, Update

RHCOS_IMAGE_PREFIX = "projects/rhcos-cloud/global/images"
_SPEC = "providerSpec.value"


class Gcp:
    platform_type = "GCP"
    # The providerSpec fields the rule reads: the guest asks the host for
    # these, as the Rust guest does (``Platform::provider_spec_fields``).
    provider_spec_fields = ("disks",)

    def reconcile(self, stream, arch, provider_spec, known_images):
        spec = fields.as_object(provider_spec, _SPEC)
        # Upstream computes the target first, so missing stream data is an
        # error even for a MachineSet without boot disks.
        target = stream.gcp_image_path(arch)
        disks = fields.opt_array(spec, "disks", _SPEC)
        if disks is None:
            return Noop(f"{_SPEC}.disks is empty, there is no boot disk to update")
        new_disks = []
        boot_disks = 0
        changed = False
        for i, disk in enumerate(disks):
            path = f"{_SPEC}.disks[{i}]"
            fields.as_object(disk, path)
            if not fields.opt_bool(disk, "boot", path):
                new_disks.append(disk)
                continue
            boot_disks += 1
            image = fields.opt_str(disk, "image", path) or ""
            if image == target:
                new_disks.append(disk)
                continue
            if not image.startswith(RHCOS_IMAGE_PREFIX) and image not in known_images:
                return Skip(f"current boot image {quoted(image)} of disk {i} is unknown "
                            f"(not a published RHCOS image under {RHCOS_IMAGE_PREFIX})")
            new_disks.append({**disk, "image": target})
            changed = True
        if boot_disks == 0:
            return Noop(f"{_SPEC}.disks has no boot disk to update")
        if not changed:
            return OnTarget(target)
        # A merge patch replaces arrays whole, so it carries every disk.
        return Update(target, {"disks": new_disks})
