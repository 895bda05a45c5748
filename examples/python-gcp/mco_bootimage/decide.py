"""The per-MachineSet algorithm (``syncMAPIMachineSet`` on MCO main) and its
ControlPlaneMachineSet twin, minus the host's parts (informers, gates,
hot-loop bookkeeping, the PATCH call)."""

import base64
import copy

from . import arch, ignition, platform
from .decision import Error, Noop, Patch, Skip, problem
from .fields import FieldError
from .stream import NotInStream

OS_STREAM_LABEL = "machineconfiguration.openshift.io/osstream"
SUPPORTED_OS_STREAM = "rhel-9"
OS_ID_LABEL = "machine.openshift.io/os-id"


def quoted(text):
    """A string as Rust's ``{:?}`` shows it, for the reasons that quote one."""
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{{{ord(ch):x}}}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def fail(ms, detail):
    return Error(f"failed to reconcile {ms.noun} {ms.name}, err: {detail}")


def left_alone(ms, reason):
    """A MachineSet left alone counts as skipped; upstream counts a
    ControlPlaneMachineSet as reconciled in every such case."""
    if ms.control_plane:
        return Noop(f"{reason} (a ControlPlaneMachineSet left alone counts as reconciled)")
    return Skip(reason)


def common_rules(ms, cluster):
    """Owner references, OS stream, Windows, architecture: the stream arch
    to use, or the decision that ends it."""
    if ms.owner_references:
        return None, left_alone(ms, f"{ms.noun} {ms.name} has OwnerReference: "
                                    f"{ms.owner_references[0]}, skipping boot image update")
    os_stream = ms.labels.get(OS_STREAM_LABEL)
    if os_stream is not None and os_stream != SUPPORTED_OS_STREAM:
        return None, Noop(f"{ms.noun} {ms.name} uses OS stream {quoted(os_stream)}; boot image "
                          f"updates only manage the {SUPPORTED_OS_STREAM} stream")
    if ms.template_labels.get(OS_ID_LABEL) == "Windows":
        return None, Noop(f"{ms.noun} {ms.name} is a Windows {ms.kind}; "
                          "boot image updates do not apply")
    try:
        return arch.machineset_arch(ms, cluster.control_plane_arch, cluster.multi_arch), None
    except arch.NoAnnotation as e:
        return None, Skip(f"{e}, skipping boot image update until the MachineSet is "
                          "annotated with its architecture")
    except arch.ArchError as e:
        return None, fail(ms, f"failed to determine architecture: {e}")


def decide(rule, stream, ms, cluster, user_data):
    """The decision for one MachineSet. ``stream`` answers the rule's
    lookups, or is the reason the ConfigMap carries no usable stream: the common rules and the providerSpec check
    come first, so a MachineSet left alone anyway never sees a broken
    ConfigMap."""
    target_arch, decision = common_rules(ms, cluster)
    if decision is None:
        if ms.provider_spec is None:
            decision = fail(ms, "providerSpec field was empty")
        elif isinstance(stream, str):
            decision = fail(ms, stream)
        else:
            decision = _reconcile(rule, stream, target_arch, ms, cluster, user_data)
    why = problem(decision, ms.provider_spec_path)
    if why is not None:
        return fail(ms, f"the decision would not pass the host's checks: {why}")
    return decision


def merge_patch(target, patch):
    """RFC 7386: objects merge key by key, null deletes, the rest replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _outcome(rule, stream, target_arch, spec, known):
    try:
        return rule.reconcile(stream, target_arch, spec, known)
    except (FieldError, NotInStream) as e:
        return platform.Error(str(e))


def _reconcile(rule, stream, target_arch, ms, cluster, user_data):
    spec = ms.provider_spec
    known = cluster.known_images
    outcome = _outcome(rule, stream, target_arch, spec, known)
    if isinstance(outcome, platform.OnTarget):
        what = "ControlPlaneMachineSet" if ms.control_plane else "MAPI machineset"
        return Noop(f"No patching required for {what} {ms.name}: "
                    f"boot image is already {outcome.target}")
    if isinstance(outcome, platform.Noop):
        return Noop(f"{ms.noun} {ms.name}: {outcome.reason}")
    if isinstance(outcome, platform.Skip):
        return left_alone(ms, f"{outcome.reason}, skipping boot image update of "
                              f"{ms.noun} {ms.name}")
    if isinstance(outcome, platform.Error):
        return fail(ms, outcome.message)

    # A patch that does not converge would be applied again on the update
    # event it causes: refuse it here rather than let the host hot-loop.
    patched = merge_patch(spec, outcome.fragment)
    if patched == spec:
        return fail(ms, f"internal error: the {rule.platform_type} rule produced "
                        "a patch that changes nothing")
    again = _outcome(rule, stream, target_arch, patched, known)
    if again != platform.OnTarget(outcome.target):
        return fail(ms, f"internal error: the {rule.platform_type} rule's patch does not "
                        f"converge (re-evaluation gave {again!r})")

    # The stub must be readable by the new image: it is upgraded before
    # the MachineSet is patched, and a stub that cannot be blocks the patch.
    grabbing = "error grabbing user data secret referenced in machineset: "
    try:
        secret = ms.user_data_secret_name()
    except FieldError as e:
        return fail(ms, f"{grabbing}{e}")
    if secret is None:
        return fail(ms, f"{grabbing}providerSpec.value.userDataSecret.name is not set")
    upgrade = None
    if user_data is not None:
        try:
            converted = ignition.upgrade_stub(user_data)
        except ignition.StubError as e:
            return fail(ms, str(e))
        if converted is not None:
            encoded = base64.b64encode(converted.encode()).decode()
            annotations = [(ignition.ANNOTATION_UPGRADED_TO, ignition.STUB_TARGET_VERSION)]
            upgrade = (secret, encoded, annotations)

    patch = outcome.fragment
    for key in reversed(ms.provider_spec_path):
        patch = {key: patch}
    return Patch(outcome.target, patch, upgrade)
