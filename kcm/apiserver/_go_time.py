"""``metav1.Time`` and ``metav1.MicroTime`` as kube-apiserver decodes them, errors included.

Both are parsed with Go's ``time.Parse``: Time with ``RFC3339`` (any fraction accepted, then
dropped), MicroTime with ``RFC3339Micro`` (exactly six fractional digits). Both are written in
UTC. A value that does not parse is refused with ``time.ParseError``'s text, e.g.
``parsing time "2001-02-03" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "T"``.
"""

from __future__ import annotations

import calendar
from datetime import UTC, datetime, timedelta
from typing import Final

__all__ = ["RFC3339", "RFC3339_MICRO", "TimeParseError", "format_time", "parse_time"]

RFC3339: Final = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO: Final = "2006-01-02T15:04:05.000000Z07:00"

# The layouts as Go's nextStdChunk splits them: (literal prefix, element).
_CHUNKS: Final = {
    RFC3339: (
        ("", "2006"),
        ("-", "01"),
        ("-", "02"),
        ("T", "15"),
        (":", "04"),
        (":", "05"),
        ("", "Z07:00"),
    ),
    RFC3339_MICRO: (
        ("", "2006"),
        ("-", "01"),
        ("-", "02"),
        ("T", "15"),
        (":", "04"),
        (":", "05"),
        ("", ".000000"),
        ("", "Z07:00"),
    ),
}


class TimeParseError(ValueError):
    """The value is not a time in the layout; the message is Go's ``time.ParseError``."""


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _Bad(Exception):
    """``errBad``: the element does not match."""


def _is_digit(value: str, at: int) -> bool:
    return len(value) > at and "0" <= value[at] <= "9"


def _number(value: str, *, fixed: bool) -> tuple[int, str]:
    """Go's ``getnum``: two digits, or one when not ``fixed`` (the hour)."""
    if not _is_digit(value, 0):
        raise _Bad
    if not _is_digit(value, 1):
        if fixed:
            raise _Bad
        return int(value[0]), value[1:]
    return int(value[:2]), value[2:]


def _fraction(value: str, width: int) -> tuple[int, str]:
    """Go's ``parseNanoseconds`` over ``width`` bytes (the dot included)."""
    digits = value[1:width]
    if value[0] not in ".," or not digits.isascii() or not digits.isdigit():
        raise _Bad
    return int(digits[:9].ljust(9, "0")), value[width:]


def parse_time(value: str, layout: str) -> datetime:
    """``time.Parse(layout, value)`` for :data:`RFC3339` and :data:`RFC3339_MICRO`, in UTC.

    Raises:
        TimeParseError: with Go's message.
    """
    fields = {"year": 0, "month": 0, "day": 0, "hour": 0, "minute": 0, "second": 0}
    nanos = offset = 0
    rest = value
    chunks = _CHUNKS[layout]
    for index, (prefix, element) in enumerate(chunks):
        if not rest.startswith(prefix):
            raise TimeParseError(_cannot(value, layout, rest, prefix))
        rest = rest[len(prefix) :]
        hold = rest
        range_error = ""
        try:
            if element == "2006":
                if len(rest) < 4 or not rest[:4].isascii() or not rest[:4].isdigit():
                    raise _Bad
                fields["year"], rest = int(rest[:4]), rest[4:]
            elif element in ("01", "02", "04", "05", "15"):
                number, rest = _number(rest, fixed=element != "15")
                name = {"01": "month", "02": "day", "15": "hour", "04": "minute", "05": "second"}
                fields[name[element]] = number
                limits = {"01": (1, 12), "15": (0, 23), "04": (0, 59), "05": (0, 59)}
                low, high = limits.get(element, (0, 99))
                if not low <= number <= high:
                    range_error = name[element]
                next_element = chunks[index + 1][1] if index + 1 < len(chunks) else ""
                if element == "05" and next_element != ".000000" and _has_fraction(rest):
                    width = 2
                    while _is_digit(rest, width):
                        width += 1
                    nanos, rest = _fraction(rest, width)
            elif element == ".000000":
                if len(rest) < 7:
                    raise _Bad
                nanos, rest = _fraction(rest, 7)
            else:  # Z07:00
                if rest.startswith("Z"):
                    rest = rest[1:]
                else:
                    if len(rest) < 6 or rest[3] != ":" or rest[0] not in "+-":
                        raise _Bad
                    hours, minutes = rest[1:3], rest[4:6]
                    if not (hours + minutes).isascii() or not (hours + minutes).isdigit():
                        raise _Bad
                    offset = (int(hours) * 60 + int(minutes)) * 60
                    offset = -offset if rest[0] == "-" else offset
                    rest = rest[6:]
        except _Bad:
            raise TimeParseError(_cannot(value, layout, hold, element)) from None
        if range_error:
            raise TimeParseError(f"parsing time {_quote(value)}: {range_error} out of range")
    if rest:
        raise TimeParseError(f"parsing time {_quote(value)}: extra text: {_quote(rest)}")
    year, month, day = fields["year"], fields["month"], fields["day"]
    if not 1 <= day <= calendar.monthrange(max(year, 1), month)[1]:
        raise TimeParseError(f"parsing time {_quote(value)}: day out of range")
    try:
        local = datetime(
            max(year, 1), month, day, fields["hour"], fields["minute"], fields["second"]
        )
    except ValueError:
        raise TimeParseError(f"parsing time {_quote(value)}: day out of range") from None
    moment = local - timedelta(seconds=offset) + timedelta(microseconds=nanos // 1000)
    return moment.replace(tzinfo=UTC)


def _has_fraction(rest: str) -> bool:
    return len(rest) >= 2 and rest[0] in ".," and _is_digit(rest, 1)


def _cannot(value: str, layout: str, value_elem: str, layout_elem: str) -> str:
    return (
        f"parsing time {_quote(value)} as {_quote(layout)}: cannot parse "
        f"{_quote(value_elem)} as {_quote(layout_elem)}"
    )


def format_time(moment: datetime, layout: str) -> str:
    """``moment`` as ``metav1.Time`` (whole seconds) or ``MicroTime`` writes it, in UTC."""
    utc = moment.astimezone(UTC)
    if layout == RFC3339_MICRO:
        return utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return utc.strftime("%Y-%m-%dT%H:%M:%SZ")
