"""Stub Ignition upgrade (spec 2.0, 2.1, 2.2 -> 3.5) of a MachineSet's user-data Secret.

Clusters installed before OpenShift 4.6 boot workers from a spec 2 stub
that newer RHCOS images cannot read, so the stub is converted before the
MachineSet moves. As MCO's ``ParseAndConvertConfig`` does: read the spec
2.2 stub (a 2.0 or 2.1 one as Ignition's 2.2 parser reads it, through
that version's own types), drop duplicate users (only ``core`` may exist), refuse what the
converter refuses, and map the ``ignition`` and ``passwd`` sections to
spec 3.5. An installer stub carries nothing else; this guest refuses a
stub with storage or systemd content (an error blocks the patch, so no
machine is moved to an image it could not boot), where the Rust guest
converts those sections too.

The output is compact JSON with the keys in the order of Ignition's Go
types and empty values left out, byte for byte what the Rust guest and
the host's own converter write.
"""

import json

from . import jsontext
from .fields import kind_of

STUB_TARGET_VERSION = "3.5.0"
ANNOTATION_UPGRADED_TO = "machineconfiguration.openshift.io/stub-ignition-upgraded-to"
_SUPPORTED = "Supported spec versions: 2.2, 3.0, 3.1, 3.2, 3.3, 3.4, 3.5"
_PREFIX = "converting ignition stub failed: "
_PARSE = "failed to parse Ignition config: "
_V2 = _PARSE + "parsing Ignition spec v2 failed with error: "
_CONVERT = ("failed to convert Ignition config spec v2 to v3: "
            "unable to convert Ignition spec v2 config to v3: ")


class StubError(Exception):
    def __init__(self, detail):
        super().__init__(_PREFIX + detail)


def upgrade_stub(text):
    """The converted stub as JSON text, or None when it is spec 3 already."""
    try:
        raw = jsontext.loads(text)
    except jsontext.JsonError as e:
        raise StubError(_not_json(str(e))) from None
    version = _version(raw)
    if not isinstance(raw, dict):
        raise StubError(_not_json(f"expected a JSON object, got {kind_of(raw)}"))
    if version.startswith("3"):
        return None
    if version in _OLDER:
        _as_v2_2(raw, version)
    elif version != "2.2.0":
        what = "unknown" if _is_semver(version) else "invalid"
        raise StubError(f"{_PARSE}parsing Ignition config failed: {what} version. {_SUPPORTED}")
    ignition = _obj(raw, "ignition", "struct Ignition")
    passwd = _obj(raw, "passwd", "struct Passwd")
    users = _dedupe_users(_list(passwd, "users", "struct User"))
    _refuse(raw, users)
    out = {"ignition": _ignition(ignition)}
    converted_passwd = _passwd(passwd, users)
    if converted_passwd:
        out["passwd"] = converted_passwd
    return json.dumps(out, separators=(",", ":"), ensure_ascii=False)


# Spec 2.2 keys an older spec lacks, by the object holding them: Go drops
# them whatever their type (a 2.1 stub cannot carry certificate
# authorities). Storage and systemd content is refused below, so only the
# sections this guest converts are listed.
_OLDER = {
    "2.1.0": {"ignition": ("security",)},
    "2.0.0": {"ignition": ("security", "timeouts"),
              "storage": ("directories", "links"),
              "user": ("uid", "gecos", "homeDir", "noCreateHome", "primaryGroup", "groups",
                       "noUserGroup", "system", "noLogInit", "shell")},
}


def _as_v2_2(raw, version):
    """The stub as Ignition's spec 2.2 parser sees a 2.0 or 2.1 one, in place."""
    dropped = _OLDER[version]
    passwd = raw.get("passwd")
    users = passwd.get("users") if isinstance(passwd, dict) else None
    users = [u for u in users if isinstance(u, dict)] if isinstance(users, list) else []
    groups = passwd.get("groups") if isinstance(passwd, dict) else None
    groups = [g for g in groups if isinstance(g, dict)] if isinstance(groups, list) else []
    if version == "2.0.0":
        _check_v2_0(raw.get("ignition"), users, groups)
    for section in ("ignition", "storage"):
        if isinstance(raw.get(section), dict):
            for key in dropped.get(section, ()):
                raw[section].pop(key, None)
    for user in users:
        for key in dropped.get("user", ()):
            user.pop(key, None)
        # 2.0 holds the hash as a plain string; "" becomes absent.
        if version == "2.0.0" and user.get("passwordHash") == "":
            del user["passwordHash"]


def _check_v2_0(ignition, users, groups):
    """What the spec 2.0 types refuse to decode: a hash without a function
    prefix, a negative uid or gid (unsigned there)."""
    config = ignition.get("config") if isinstance(ignition, dict) else None
    refs = []
    if isinstance(config, dict):
        append = config.get("append")
        refs = list(append) if isinstance(append, list) else []
        refs.append(config.get("replace"))
    for ref in refs:
        verification = ref.get("verification") if isinstance(ref, dict) else None
        digest = verification.get("hash") if isinstance(verification, dict) else None
        if isinstance(digest, str) and "-" not in digest:
            raise StubError(f"{_V2}hash is malformed: {json.dumps(digest, ensure_ascii=False)}")
    create = [u.get("create") for u in users]
    for where, item, key in ([("/passwd/users", c, "uid") for c in create]
                             + [("/passwd/groups", g, "gid") for g in groups]):
        value = item.get(key) if isinstance(item, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            field = "/create/uid" if key == "uid" else "/gid"
            raise StubError(f"{_V2}{where}[]{field}: {value} is negative; spec 2.0 holds it unsigned")


def _not_json(detail):
    return f"failed to unmarshal decoded user-data to json: {detail}"


def _version(raw):
    ignition = raw.get("ignition") if isinstance(raw, dict) else None
    if ignition is None:
        return ""
    if not isinstance(ignition, dict):
        raise StubError(_accessor(".ignition", ignition, "object"))
    version = ignition.get("version")
    if version is None:
        return ""
    if not isinstance(version, str):
        raise StubError(_accessor(".ignition.version", version, "string"))
    return version


def _accessor(path, value, expected):
    shown = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return (f"failed to find version field in ignition: {path} accessor error: "
            f"{shown} is of the type {kind_of(value)}, expected {expected}")


def _is_semver(version):
    """``x.y.z`` with an optional suffix: "unknown" rather than "invalid"."""
    core = version.replace("+", "-").split("-")[0]
    parts = core.split(".")
    return len(parts) == 3 and all(p.isascii() and p.isdigit() for p in parts)


# Reading spec 2.2 as serde reads it into the Go-shaped types: a field of
# the wrong type is an error naming what was expected.

def _wrong(value, expected):
    found = {
        "null": "null", "a boolean": f"boolean `{json.dumps(value)}`",
        "a number": f"integer `{value}`" if isinstance(value, int) else f"floating point `{value!r}`",
        "a string": "string " + json.dumps(value, ensure_ascii=False),
        "an array": "sequence", "an object": "map",
    }[kind_of(value)]
    return StubError(f"{_V2}invalid type: {found}, expected {expected}")


def _get(parent, key, kind, expected):
    value = parent.get(key)
    if value is None:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _wrong(value, expected)
    return value


def _obj(parent, key, expected):
    return _get(parent, key, dict, expected) or {}


def _str(parent, key):
    return _get(parent, key, str, "a string")


def _list(parent, key, item):
    items = _get(parent, key, list, "a sequence") or []
    for entry in items:
        if item.startswith("struct") and not isinstance(entry, dict):
            raise _wrong(entry, item)
        if item == "a string" and not isinstance(entry, str):
            raise _wrong(entry, item)
    return items


def _dedupe_users(users):
    """``removeIgnDuplicateFilesUnitsUsers``: spec 3 forbids duplicates, so
    the last user survives with every user's SSH keys, and each must be
    ``core``."""
    if not users:
        return []
    for user in reversed(users):
        name = _str(user, "name") or ""
        if name != "core":
            raise StubError(f"unexpected user with name: {name}. Only core user is supported")
    keys = []
    for user in reversed(users):
        for key in _list(user, "sshAuthorizedKeys", "a string"):
            if key not in keys:
                keys.append(key)
    last = dict(users[-1])
    last["sshAuthorizedKeys"] = keys
    return [last]


def _refuse(raw, users):
    """What the converter refuses, in its order, then what this guest
    does not convert."""
    networkd = _obj(raw, "networkd", "struct Networkd")
    if _list(networkd, "units", "any"):
        raise StubError(_CONVERT + "config includes a networkd section, which "
                        "Ignition spec 3 does not support")
    if any(user.get("create") is not None for user in users):
        raise StubError(_CONVERT + "Invalid input config: the create field has been "
                        "deprecated in favor of user-level options")
    storage = _obj(raw, "storage", "struct Storage")
    for key in ("disks", "raid", "filesystems", "files", "directories", "links"):
        if _list(storage, key, "any"):
            raise StubError(_CONVERT + f"storage.{key} is not converted by this guest "
                            "(it converts the ignition and passwd sections of a stub)")
    systemd = _obj(raw, "systemd", "struct Systemd")
    if _list(systemd, "units", "any"):
        raise StubError(_CONVERT + "systemd.units is not converted by this guest "
                        "(it converts the ignition and passwd sections of a stub)")


def _resource(reference):
    out = {"source": _str(reference, "source") or ""}
    verification = _obj(reference, "verification", "struct Verification")
    digest = _str(verification, "hash")
    if digest is not None:
        out["verification"] = {"hash": digest}
    return out


def _ignition(ignition):
    out = {}
    config = _obj(ignition, "config", "struct IgnitionConfig")
    merged = {}
    merge = [_resource(r) for r in _list(config, "append", "struct Reference")]
    if merge:
        merged["merge"] = merge
    replace = _get(config, "replace", dict, "struct Reference")
    if replace is not None:
        merged["replace"] = _resource(replace)
    if merged:
        out["config"] = merged
    tls = _obj(_obj(ignition, "security", "struct Security"), "tls", "struct Tls")
    authorities = [_resource(r) for r in _list(tls, "certificateAuthorities", "struct Reference")]
    if authorities:
        out["security"] = {"tls": {"certificateAuthorities": authorities}}
    timeouts = _obj(ignition, "timeouts", "struct Timeouts")
    converted = {}
    for key in ("httpResponseHeaders", "httpTotal"):
        value = _get(timeouts, key, int, "i64")
        if value is not None:
            converted[key] = value
    if converted:
        out["timeouts"] = converted
    out["version"] = STUB_TARGET_VERSION
    return out


def _passwd(passwd, users):
    out = {}
    groups = [_group(g) for g in _list(passwd, "groups", "struct Group")]
    if groups:
        out["groups"] = groups
    if users:
        out["users"] = [_user(u) for u in users]
    return out


def _set(out, key, value, keep):
    if keep(value):
        out[key] = value


def _present(value):
    return value is not None


def _non_empty(value):
    return bool(value)


def _true(value):
    return value is True


def _group(group):
    out = {}
    _set(out, "gid", _get(group, "gid", int, "i64"), _present)
    out["name"] = _str(group, "name") or ""
    _set(out, "passwordHash", _str(group, "passwordHash"), _non_empty)
    _set(out, "system", _get(group, "system", bool, "a boolean"), _true)
    return out


def _user(user):
    """Spec 3 field order; empty strings and false flags left out."""
    flag = lambda key: _get(user, key, bool, "a boolean")  # noqa: E731
    out = {}
    _set(out, "gecos", _str(user, "gecos"), _non_empty)
    _set(out, "groups", _list(user, "groups", "a string"), _non_empty)
    _set(out, "homeDir", _str(user, "homeDir"), _non_empty)
    out["name"] = _str(user, "name") or ""
    _set(out, "noCreateHome", flag("noCreateHome"), _true)
    _set(out, "noLogInit", flag("noLogInit"), _true)
    _set(out, "noUserGroup", flag("noUserGroup"), _true)
    _set(out, "passwordHash", _str(user, "passwordHash"), _present)
    _set(out, "primaryGroup", _str(user, "primaryGroup"), _non_empty)
    _set(out, "shell", _str(user, "shell"), _non_empty)
    _set(out, "sshAuthorizedKeys", user.get("sshAuthorizedKeys") or [], _non_empty)
    _set(out, "system", flag("system"), _true)
    _set(out, "uid", _get(user, "uid", int, "i64"), _present)
    return out
