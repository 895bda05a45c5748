"""JSON text from the cluster, read as the Rust guest's serde_json reads it.

Nesting is bounded before parsing (at serde_json's own limit of 128): the
C stack of CPython in WebAssembly overflows long before Python's recursion
limit, and an overflow traps the whole instance where the Rust guest
answers with an ``error`` decision. NaN and Infinity are not JSON. The
common syntax errors are worded as serde_json words them.
"""

import json
import re
from itertools import accumulate

MAX_DEPTH = 128

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_WORDS = {
    "Expecting property name enclosed in double quotes": "key must be a string",
    "Expecting value": "expected value",
    "Extra data": "trailing characters",
    "Expecting ':' delimiter": "expected `:`",
}


class JsonError(ValueError):
    pass


def loads(text):
    """The value in ``text``, or JsonError worded as serde_json would."""
    if _too_deep(text):
        raise JsonError(f"recursion limit exceeded (nesting deeper than {MAX_DEPTH})")
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise JsonError(_syntax_error(e)) from None


def _too_deep(text):
    """Whether brackets outside strings open deeper than MAX_DEPTH, however
    they close: the parser recurses before it sees what is wrong."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > MAX_DEPTH


def _no_constant(name):
    raise JsonError(f"expected value ({name} is not JSON)")


def _syntax_error(e):
    column = byte_column(e.doc, e.pos) + 1
    if e.pos >= len(e.doc) and e.msg == "Expecting value":
        return f"EOF while parsing a value at line {e.lineno} column {column - 1}"
    return f"{_WORDS.get(e.msg, e.msg)} at line {e.lineno} column {column}"


def byte_column(text, pos):
    """serde_json counts columns in bytes since the last newline."""
    line_start = text.rfind("\n", 0, pos) + 1
    return len(text[line_start:pos].encode("utf-8", "surrogatepass"))
