"""The seam between the shared rules and one cloud's providerSpec.

A platform rule has a ``platform_type`` and a ``reconcile(stream, arch,
provider_spec, known_images)`` that returns one of these outcomes. It may
raise FieldError or a stream lookup error instead of returning ``Error``:
the caller turns either into an ``error`` decision. The common rules, the
stub upgrade and the patch envelope are the caller's, so every platform
gets them alike.
"""

from dataclasses import dataclass


@dataclass
class OnTarget:
    """The boot image already is ``target``."""
    target: str


@dataclass
class Noop:
    reason: str


@dataclass
class Skip:
    """Leave the MachineSet alone (a custom image, ...)."""
    reason: str


@dataclass
class Error:
    message: str


@dataclass
class Update:
    """Move to ``target``; ``fragment`` is an RFC 7386 merge patch of
    providerSpec.value touching only the boot image fields."""
    target: str
    fragment: dict
