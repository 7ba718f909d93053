"""JSON as kube-apiserver's decoder reads it: Go's syntax errors, duplicate keys kept.

Go checks the whole body's syntax before decoding (``encoding/json``'s scanner), so a body
that does not parse answers with the scanner's message (``unexpected end of JSON input``,
``invalid character '}' looking for beginning of object key string``). A body that parses is
decoded into the kind's Go struct, where a key given twice is decoded twice into the same
field (two ``data`` maps merge); :class:`JsonObject` keeps every key/value pair in order so
the typed decoder can do the same. Numbers keep their literal (``number 1.5`` in Go's type
errors); invalid UTF-8 becomes U+FFFD, as Go reads it.
"""

from __future__ import annotations

import json
from typing import Any, Final

__all__ = ["JsonFloat", "JsonObject", "JsonSyntaxError", "parse_json"]

_MAX_DEPTH: Final = 10000


class JsonObject(list[tuple[str, Any]]):
    """A JSON object as its key/value pairs, in order, duplicates included."""


class JsonFloat(float):
    """A JSON number that is not a plain integer, with the literal it was written as."""

    literal: str

    def __new__(cls, literal: str) -> JsonFloat:
        number = super().__new__(cls, literal)
        number.literal = literal
        return number


class JsonSyntaxError(ValueError):
    """The body is not JSON; the message is Go's (``encoding/json.SyntaxError``)."""


def _reject_constant(name: str) -> Any:
    raise ValueError(name)  # NaN and Infinity are not JSON; the scanner says why


def parse_json(data: bytes) -> Any:
    """The JSON value of ``data``, objects as :class:`JsonObject`, non-integers as
    :class:`JsonFloat`.

    Raises:
        JsonSyntaxError: ``data`` is not one JSON value (Go's message).
    """
    text = data.decode("utf-8", errors="replace")
    try:
        return json.loads(
            text,
            object_pairs_hook=JsonObject,
            parse_float=JsonFloat,
            parse_constant=_reject_constant,
        )
    except (ValueError, RecursionError):
        raise JsonSyntaxError(syntax_error(data) or "invalid JSON") from None


_GO_ESCAPES: Final = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r"}


def _quote_char(c: int) -> str:
    """Go's ``quoteChar``: how the scanner shows the offending byte (as a rune)."""
    if c == ord("'"):
        return "'\\''"
    if c == ord('"'):
        return "'\"'"
    if c == ord("\\"):
        return "'\\\\'"
    if c in _GO_ESCAPES:
        return f"'{_GO_ESCAPES[c]}'"
    if c < 0x20 or c == 0x7F:
        return f"'\\x{c:02x}'"
    if chr(c).isprintable():
        return f"'{chr(c)}'"
    return f"'\\u{c:04x}'"


_SPACE: Final = frozenset(b" \t\r\n")
_DIGITS: Final = frozenset(b"0123456789")
_HEX: Final = frozenset(b"0123456789abcdefABCDEF")
_ESCAPES: Final = frozenset(b'bfnrt\\/"')
_LITERALS: Final = {ord("t"): b"true", ord("f"): b"false", ord("n"): b"null"}


class _Scanner:
    """Go's ``encoding/json`` scanner, run only to name why a body does not parse."""

    def __init__(self) -> None:
        self.stack: list[str] = []  # "key", "value" (of an object), "array"
        self.state = self.begin_value
        self.done = False

    @staticmethod
    def error(c: int, context: str) -> str:
        return f"invalid character {_quote_char(c)} {context}"

    def push(self, kind: str) -> str | None:
        self.stack.append(kind)
        return "exceeded max depth" if len(self.stack) > _MAX_DEPTH else None

    def begin_value(self, c: int) -> str | None:
        if c in _SPACE:
            return None
        if c == ord("{"):
            self.state = self.begin_key_or_empty
            return self.push("key")
        if c == ord("["):
            self.state = self.begin_value_or_empty
            return self.push("array")
        if c == ord('"'):
            self.state = self.in_string
            return None
        if c == ord("-"):
            self.state = self.neg
            return None
        if c == ord("0"):
            self.state = self.zero
            return None
        if c in _DIGITS:
            self.state = self.digits
            return None
        if c in _LITERALS:
            self.state = self.literal(_LITERALS[c], 1)
            return None
        return self.error(c, "looking for beginning of value")

    def begin_value_or_empty(self, c: int) -> str | None:
        if c in _SPACE:
            return None
        if c == ord("]"):
            return self.end_value(c)
        return self.begin_value(c)

    def begin_key_or_empty(self, c: int) -> str | None:
        if c in _SPACE:
            return None
        if c == ord("}"):
            self.stack[-1] = "value"
            return self.end_value(c)
        return self.begin_key(c)

    def begin_key(self, c: int) -> str | None:
        if c in _SPACE:
            return None
        if c == ord('"'):
            self.state = self.in_string
            return None
        return self.error(c, "looking for beginning of object key string")

    def end_value(self, c: int) -> str | None:
        if not self.stack:
            self.done = True
            self.state = self.end_top
            return self.end_top(c)
        if c in _SPACE:
            self.state = self.end_value
            return None
        top = self.stack[-1]
        if top == "key":
            if c == ord(":"):
                self.stack[-1] = "value"
                self.state = self.begin_value
                return None
            return self.error(c, "after object key")
        if top == "value":
            if c == ord(","):
                self.stack[-1] = "key"
                self.state = self.begin_key
                return None
            if c == ord("}"):
                self.stack.pop()
                self.end_value_after_close()
                return None
            return self.error(c, "after object key:value pair")
        if c == ord(","):
            self.state = self.begin_value
            return None
        if c == ord("]"):
            self.stack.pop()
            self.end_value_after_close()
            return None
        return self.error(c, "after array element")

    def end_value_after_close(self) -> None:
        """After a closing bracket: the enclosing value goes on, or the document ends."""
        self.state = self.end_value
        if not self.stack:
            self.done = True
            self.state = self.end_top

    def end_top(self, c: int) -> str | None:
        if c not in _SPACE:
            return self.error(c, "after top-level value")
        return None

    def in_string(self, c: int) -> str | None:
        if c == ord('"'):
            self.state = self.end_value
            return None
        if c == ord("\\"):
            self.state = self.in_escape
            return None
        if c < 0x20:
            return self.error(c, "in string literal")
        return None

    def in_escape(self, c: int) -> str | None:
        if c in _ESCAPES:
            self.state = self.in_string
            return None
        if c == ord("u"):
            self.state = self.hex_escape(4)
            return None
        return self.error(c, "in string escape code")

    def hex_escape(self, left: int) -> Any:
        def state(c: int) -> str | None:
            if c not in _HEX:
                return self.error(c, "in \\u hexadecimal character escape")
            self.state = self.in_string if left == 1 else self.hex_escape(left - 1)
            return None

        return state

    def neg(self, c: int) -> str | None:
        if c == ord("0"):
            self.state = self.zero
            return None
        if c in _DIGITS:
            self.state = self.digits
            return None
        return self.error(c, "in numeric literal")

    def digits(self, c: int) -> str | None:
        if c in _DIGITS:
            return None
        return self.zero(c)

    def zero(self, c: int) -> str | None:
        if c == ord("."):
            self.state = self.dot
            return None
        if c in b"eE":
            self.state = self.exp
            return None
        return self.end_value(c)

    def dot(self, c: int) -> str | None:
        if c in _DIGITS:
            self.state = self.fraction
            return None
        return self.error(c, "after decimal point in numeric literal")

    def fraction(self, c: int) -> str | None:
        if c in _DIGITS:
            return None
        if c in b"eE":
            self.state = self.exp
            return None
        return self.end_value(c)

    def exp(self, c: int) -> str | None:
        if c in b"+-":
            self.state = self.exp_sign
            return None
        return self.exp_sign(c)

    def exp_sign(self, c: int) -> str | None:
        if c in _DIGITS:
            self.state = self.exp_digits
            return None
        return self.error(c, "in exponent of numeric literal")

    def exp_digits(self, c: int) -> str | None:
        if c in _DIGITS:
            return None
        return self.end_value(c)

    def literal(self, word: bytes, at: int) -> Any:
        def state(c: int) -> str | None:
            if c != word[at]:
                name = word.decode()
                return self.error(c, f"in literal {name} (expecting {_quote_char(word[at])})")
            self.state = self.end_value if at + 1 == len(word) else self.literal(word, at + 1)
            return None

        return state


def syntax_error(data: bytes) -> str:
    """Why Go's scanner refuses ``data`` (``unexpected end of JSON input`` when it stops
    short; ``""`` if it is valid)."""
    scanner = _Scanner()
    for c in data:
        error = scanner.state(c)
        if error is not None:
            return error
    if not scanner.done:
        scanner.state(ord(" "))  # a number at the end of the input ends here
    return "" if scanner.done else "unexpected end of JSON input"
