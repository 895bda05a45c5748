"""Which stream architecture a MachineSet's machines run on.

Streams name architectures as RPM does (``x86_64``, ``aarch64``), labels
as Go does (``amd64``, ``arm64``); a wrong pick puts x86 images on arm
workers (OCPBUGS-69674), so anything unexpected is an error or a skip.
"""

ARCH_ANNOTATION = "capacity.cluster-autoscaler.kubernetes.io/labels"
_ARCH_LABEL_PREFIX = "kubernetes.io/arch="
_STREAM_ARCH = {"amd64": "x86_64", "arm64": "aarch64", "ppc64le": "ppc64le", "s390x": "s390x"}


class ArchError(Exception):
    pass


class NoAnnotation(ArchError):
    """Multi-arch cluster, no annotation: wait until MAPI annotates it."""


def machineset_arch(ms, control_plane_arch, multi_arch):
    """``getArchFromMachineSet``: the annotation wins; without it a
    single-arch cluster uses the control plane's arch. A
    ControlPlaneMachineSet's machines are the control plane."""
    if ms.control_plane:
        return control_plane_arch
    annotation = ms.annotations.get(ARCH_ANNOTATION)
    if annotation is None:
        if multi_arch:
            raise NoAnnotation(f"no architecture annotation found on machineset {ms.name}")
        return control_plane_arch
    for item in annotation.split(","):
        item = item.strip()
        if item.startswith(_ARCH_LABEL_PREFIX):
            value = item[len(_ARCH_LABEL_PREFIX):]
            if value not in _STREAM_ARCH:
                raise ArchError(f"invalid architecture value found in annotation: {value}")
            return _STREAM_ARCH[value]
    raise ArchError(f"kubernetes.io/arch label not found in annotation: {annotation}")
