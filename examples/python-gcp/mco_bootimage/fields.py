"""Checked access to fields of untyped Kubernetes JSON.

providerSpec values stay plain dicts so unknown fields survive untouched;
every read checks the type and names the exact field when it is wrong,
which is what an admin needs to fix the MachineSet.
"""


class FieldError(Exception):
    """A field that is present with the wrong JSON type."""

    def __init__(self, path, expected, value):
        super().__init__(f"{path} must be {expected}, got {kind_of(value)}")


def kind_of(value):
    """The JSON type of ``value``, phrased for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: bool is an int in Python
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def join(parent, key):
    return f"{parent}.{key}" if parent else key


def as_object(value, path):
    if not isinstance(value, dict):
        raise FieldError(path, "an object", value)
    return value


def _optional(parent, key, parent_path, expected, kind):
    # Missing and null read alike, as Go's decoder leaves both at zero.
    value = parent.get(key)
    if value is None:
        return None
    if not isinstance(value, kind):
        raise FieldError(join(parent_path, key), expected, value)
    return value


def opt_object(parent, key, parent_path):
    return _optional(parent, key, parent_path, "an object", dict)


def opt_str(parent, key, parent_path):
    return _optional(parent, key, parent_path, "a string", str)


def opt_bool(parent, key, parent_path):
    return _optional(parent, key, parent_path, "a boolean", bool)


def opt_array(parent, key, parent_path):
    return _optional(parent, key, parent_path, "an array", list)
