"""Continue tokens as kube-apiserver writes and reads them, errors included.

A token is unpadded base64url of ``{"v":"meta.k8s.io/v1","rv":<list RV>,"start":<key>}``,
where the key is the next page's first key relative to the list's prefix: ``<name>\\x00``
(just after the last name served) in a namespace or for cluster-scoped kinds,
``<namespace>/<name>\\x00`` across namespaces. A token that does not decode is a 400 whose
message is Go's (``invalid continue token: continue key is not valid: illegal base64 data at
input byte 4``, ``... invalid character '\\u009e' looking for beginning of value``).
"""

from __future__ import annotations

import base64
import json
import posixpath
import string
from typing import Any

from ._status import StatusError
from ._store import OKey

__all__ = ["decode_continue", "encode_continue"]

_VERSION = "meta.k8s.io/v1"
_ALPHABET = frozenset(string.ascii_letters + string.digits + "-_")
_VALUE_START = frozenset(b'{["-0123456789tfn')


def encode_continue(rv: int, last: OKey, *, across_namespaces: bool) -> str:
    """The token for the page after ``last`` (the last key served) of a list at ``rv``."""
    key = f"{last[0]}/{last[1]}" if across_namespaces else last[1]
    token = json.dumps({"v": _VERSION, "rv": rv, "start": key + "\x00"}, separators=(",", ":"))
    return base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")


def decode_continue(token: str, ns: str | None) -> tuple[int, OKey]:
    """The list RV and the last key served before the token's page (``ns``: the request's
    namespace, None across namespaces).

    Raises:
        StatusError: 400 ``invalid continue token: continue key is not valid: ...``.
    """
    try:
        rv, start = _decode(token)
    except ValueError as exc:
        raise StatusError.bad_request(
            f"invalid continue token: continue key is not valid: {exc}"
        ) from exc
    key = start[:-1] if start.endswith("\x00") else start
    if ns is None and "/" in key:
        namespace, _, name = key.partition("/")
        return rv, (namespace, name)
    return rv, (ns or "", key)


def _decode(token: str) -> tuple[int, str]:
    data = _raw_url_base64(token)
    try:
        parsed: Any = json.loads(data)
    except ValueError:
        raise ValueError(_json_error(data)) from None
    if parsed is None:  # null unmarshals into a struct as nothing at all
        parsed = {}
    if not isinstance(parsed, dict):
        raise ValueError(
            f"json: cannot unmarshal {_json_type(parsed)} into Go value of type etcd3.continueToken"
        )
    version = parsed.get("v", "")
    if version != _VERSION:
        raise ValueError(f'server does not recognize this encoded version "{version}"')
    rv = parsed.get("rv", 0)
    start = parsed.get("start", "")
    if not isinstance(rv, int) or rv == 0:
        raise ValueError("incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    if not isinstance(start, str) or not start:
        raise ValueError("encoded start key empty (version meta.k8s.io/v1)")
    key = start if start.startswith("/") else "/" + start
    if posixpath.normpath(key) != key:  # path.Clean: no climbing out of the list's prefix
        raise ValueError(start)
    return rv, start


def _raw_url_base64(token: str) -> bytes:
    """``base64.RawURLEncoding.DecodeString`` (no padding), with Go's error."""
    for i, ch in enumerate(token):
        if ch not in _ALPHABET:
            raise ValueError(f"illegal base64 data at input byte {i}")
    if len(token) % 4 == 1:
        raise ValueError(f"illegal base64 data at input byte {len(token) - 1}")
    return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))


def _json_error(data: bytes) -> str:
    """What Go's ``json.Unmarshal`` says about bytes that are not JSON (the common cases)."""
    stripped = data.lstrip(b" \t\r\n")
    if not stripped:
        return "unexpected end of JSON input"
    first = stripped[0]
    if first not in _VALUE_START:
        return f"invalid character {_quote_char(first)} looking for beginning of value"
    return "unexpected end of JSON input"


def _quote_char(byte: int) -> str:
    """Go's ``quoteChar``: the byte as a rune, quoted with single quotes."""
    if byte == ord("'"):
        return "'\\''"
    if byte == ord('"'):
        return "'\"'"
    ch = chr(byte)
    escapes = {
        "\a": "\\a",
        "\b": "\\b",
        "\f": "\\f",
        "\n": "\\n",
        "\r": "\\r",
        "\t": "\\t",
        "\v": "\\v",
    }
    if ch in escapes:
        return f"'{escapes[ch]}'"
    if ch == "\\":
        return "'\\\\'"
    if ch.isprintable():
        return f"'{ch}'"
    if byte < 0x20 or byte == 0x7F:
        return f"'\\x{byte:02x}'"
    return f"'\\u{byte:04x}'"


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if value is None:
        return "null"
    return "number"
