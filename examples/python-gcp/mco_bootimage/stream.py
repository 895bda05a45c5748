"""CoreOS stream metadata (the ``coreos-bootimages`` ConfigMap, key ``stream``).

The document is read against the same model the Rust guest deserializes
(stream-metadata-go's types), so a field of the wrong type anywhere is the
same error, worded as serde_json words it, with its line and column. Every
field may be missing or ``null``, as Go's decoder allows.
"""

import json

from . import jsontext

PREFIX = "failed to parse CoreOS stream metadata: "


class StreamError(Exception):
    """The stream cannot be read at all."""

    def __init__(self, detail):
        super().__init__(PREFIX + detail)


class NotInStream(Exception):
    """A lookup in a well-formed stream that found nothing."""


# The model: a struct is (name, {json key: type}), a map is ("map", type),
# a string is STR. Unknown keys are ignored, so newer streams stay readable.
STR = "string"


def _struct(name, fields):
    return ("struct", name, fields)


def _map(value):
    return ("map", value)


_ARTIFACT = _struct("Artifact", dict.fromkeys(
    ["location", "signature", "sha256", "uncompressed-sha256"], STR))
_FORMAT = _struct("ImageFormat", dict.fromkeys(
    ["disk", "kernel", "initramfs", "rootfs"], _ARTIFACT))
_SINGLE_IMAGE = _struct("SingleImage", {"release": STR, "image": STR})
_REPLICATED_IMAGE = _struct("ReplicatedImage", {"regions": _map(_SINGLE_IMAGE)})
_SINGLE_OBJECT = _struct("SingleObject", dict.fromkeys(
    ["release", "object", "bucket", "url"], STR))
_REPLICATED_OBJECT = _struct("ReplicatedObject", {"regions": _map(_SINGLE_OBJECT)})
_MARKETPLACE_IMAGE = _struct("AzureMarketplaceImage", dict.fromkeys(
    ["publisher", "offer", "sku", "version"], STR))
_MARKETPLACE_IMAGES = _struct("AzureMarketplaceImages", dict.fromkeys(
    ["hyperVGen1", "hyperVGen2"], _MARKETPLACE_IMAGE))
_AZURE_MARKETPLACE = _struct("AzureMarketplace", dict.fromkeys(
    ["no-purchase-plan", "ocp", "opp", "oke", "ocp-emea", "opp-emea", "oke-emea"],
    _MARKETPLACE_IMAGES))
_EXTENSIONS = _struct("Extensions", {
    "aws-winli": _REPLICATED_IMAGE,
    "azure-disk": _struct("AzureDisk", {"release": STR, "url": STR}),
    "marketplace": _struct("Marketplace", {"azure": _AZURE_MARKETPLACE}),
})
_IMAGES = _struct("Images", {
    "aws": _REPLICATED_IMAGE,
    "aliyun": _REPLICATED_IMAGE,
    "gcp": _struct("GcpImage", dict.fromkeys(["release", "project", "family", "name"], STR)),
    "ibmcloud": _REPLICATED_OBJECT,
    "powervs": _REPLICATED_OBJECT,
    "kubevirt": _struct("ContainerImage", dict.fromkeys(["release", "image", "digest-ref"], STR)),
})
_ARCH = _struct("Arch", {
    "artifacts": _map(_struct("PlatformArtifacts", {"release": STR, "formats": _map(_FORMAT)})),
    "images": _IMAGES,
    "rhel-coreos-extensions": _EXTENSIONS,
})
_STREAM = _struct("Stream", {
    "stream": STR,
    "metadata": _struct("Metadata", {"last-modified": STR, "generator": STR}),
    "architectures": _map(_ARCH),
})


class Stream:
    """A parsed stream; lookups fail the way stream-metadata-go's do."""

    def __init__(self, doc):
        self.name = doc.get("stream") or ""
        self.architectures = doc.get("architectures") or {}

    def architecture(self, arch):
        found = self.architectures.get(arch, _MISSING)
        if found is _MISSING:
            raise NotInStream(f"stream:{self.name} does not have architecture '{arch}'")
        return found or {}

    def gcp_image_path(self, arch):
        """The full GCP image path. A missing or half-filled entry is an
        error here, where upstream's Go would index a nil pointer."""
        gcp = (self.architecture(arch).get("images") or {}).get("gcp") or {}
        project, name = gcp.get("project") or "", gcp.get("name") or ""
        if not project or not name:
            raise NotInStream(
                f"stream:{self.name} architecture '{arch}' has no GCP image "
                "(images.gcp is missing or incomplete)"
            )
        return f"projects/{project}/global/images/{name}"


_MISSING = object()


def parse(text):
    """The stream in ``text``, or a StreamError saying why it has none."""
    start = text.lstrip()
    if not start:
        raise StreamError("the stream is empty")
    found = _not_an_object(start)
    if found:
        raise StreamError(f"expected a JSON object, got {found}")
    try:
        doc = jsontext.loads(text)
    except jsontext.JsonError as e:
        raise StreamError(str(e)) from None
    _check(text, doc, _STREAM, [])
    return Stream(doc)


def _not_an_object(start):
    first = start[0]
    if first == "[":
        return "an array"
    if first == '"':
        return "a string"
    if start.startswith("null"):
        return "null"
    if start.startswith(("true", "false")):
        return "a boolean"
    if first == "-" or first.isdigit():
        return "a number"
    return None


def _check(text, value, model, path):
    """Raises StreamError at the first value of the wrong type."""
    if value is None:
        return
    if model == STR:
        if not isinstance(value, str):
            _wrong(text, path, value, "a string")
    elif model[0] == "map":
        if not isinstance(value, dict):
            _wrong(text, path, value, "a map")
        for key, item in value.items():
            _check(text, item, model[1], path + [key])
    else:
        _, name, fields = model
        if not isinstance(value, dict):
            _wrong(text, path, value, f"struct {name}")
        for key, field in fields.items():
            if key in value:
                _check(text, value[key], field, path + [key])


def _wrong(text, path, value, expected):
    line, column = _position(text, path, value)
    raise StreamError(
        f"invalid type: {_unexpected(value)}, expected {expected} at line {line} column {column}"
    )


def _unexpected(value):
    """serde's name for what it found."""
    if isinstance(value, bool):
        return f"boolean `{'true' if value else 'false'}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value!r}`"
    if isinstance(value, str):
        return "string " + json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "sequence"
    return "map"


def _position(text, path, value):
    """Where serde_json reports a wrongly typed value: at the opening
    bracket of an array or object, after the end of a scalar."""
    start, end = _locate(text, path)
    pos = start if isinstance(value, (list, dict)) else end
    line = text.count("\n", 0, pos) + 1
    return line, jsontext.byte_column(text, pos)


_decoder = json.JSONDecoder()
_WS = " \t\n\r"


def _skip_ws(text, pos):
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos


def _locate(text, path):
    """Start and end offsets of the value at ``path`` (keys from the root).
    Only called on an error, for a document that already parsed: the last
    occurrence of a duplicate key wins, as it does in ``json.loads``."""
    start = _skip_ws(text, 0)
    for key in path:
        pos = start + 1
        found = None
        while True:
            pos = _skip_ws(text, pos)
            if text[pos] == "}":
                break
            name, pos = json.decoder.scanstring(text, pos + 1)
            pos = _skip_ws(text, pos) + 1  # the colon
            value_start = _skip_ws(text, pos)
            _, pos = _decoder.raw_decode(text, value_start)
            if name == key:
                found = value_start
            pos = _skip_ws(text, pos)
            if text[pos] == ",":
                pos += 1
        start = found
    _, end = _decoder.raw_decode(text, start)
    return start, end
