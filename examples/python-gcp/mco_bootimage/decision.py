"""The outcome for one MachineSet, and the checks the host will make of it.

The library holds its own decisions to the host's checks, so hostile
input (a Secret name the API server would refuse, a megabyte image
reference) becomes an ``error`` decision naming the problem instead of
output the host throws away as a broken guest.
"""

import re
from dataclasses import dataclass
from typing import Optional

MAX_REASON_TEXT = 4096
MAX_TARGET = 2048
_ELLIPSIS = "…"


def bounded(text, limit=MAX_REASON_TEXT):
    """At most ``limit`` UTF-8 bytes, cut on a character and marked."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    mark = _ELLIPSIS.encode()
    return data[: limit - len(mark)].decode("utf-8", "ignore") + _ELLIPSIS


@dataclass
class Patch:
    target: str
    patch: dict
    # (secret name, base64 stub, annotations) when the stub is upgraded.
    user_data_secret: Optional[tuple] = None


@dataclass
class Noop:
    reason: str

    def __post_init__(self):
        self.reason = bounded(self.reason)


@dataclass
class Skip:
    reason: str

    def __post_init__(self):
        self.reason = bounded(self.reason)


@dataclass
class Error:
    message: str

    def __post_init__(self):
        self.message = bounded(self.message)


_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")


def is_dns1123_subdomain(name):
    return 0 < len(name) <= 253 and all(_LABEL.match(label) for label in name.split("."))


def problem(decision, provider_spec_path):
    """What the host would refuse in ``decision``, or None."""
    if not isinstance(decision, Patch):
        text = decision.message if isinstance(decision, Error) else decision.reason
        return "empty reason or message" if not text else None
    if not 0 < len(decision.target.encode()) <= MAX_TARGET:
        return f"patch target of {len(decision.target.encode())} bytes (1 to {MAX_TARGET} allowed)"
    level = decision.patch
    for key in provider_spec_path:
        if not (isinstance(level, dict) and list(level) == [key]):
            return f"the merge patch touches more than {'.'.join(provider_spec_path)}"
        level = level[key]
    if not (isinstance(level, dict) and level):
        return "the merge patch changes no providerSpec field"
    secret = decision.user_data_secret
    if secret is not None and not is_dns1123_subdomain(secret[0]):
        return f"user-data Secret name {secret[0][:200]!r} is not a DNS-1123 subdomain"
    return None
