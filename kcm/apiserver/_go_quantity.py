"""Resource quantities as kube-apiserver decodes and writes them (``resource.Quantity``).

A quantity is parsed from its JSON string or number (``"0.5Gi"``, ``3``) and written back in
canonical form, keeping its format: ``2000m`` -> ``2``, ``0.5Gi`` -> ``512Mi``, ``1e3`` stays
``1e3``; a value already canonical is written exactly as sent. One that does not parse is
refused with Go's message (``quantities must match the regular expression ...``).
``kcm.models`` does the arithmetic of quantities; this is the server's exact wire form (the
printing is ``kcm.quota``'s, which quota's usage texts share).
"""

from __future__ import annotations

from decimal import ROUND_CEILING, Decimal, localcontext
from typing import Final

from kcm.quota import go_quantity_text

__all__ = ["QuantityError", "canonical_quantity"]

_FORMAT_WRONG: Final = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
_SUFFIX_ERROR: Final = "unable to parse quantity's suffix"
_NUMERIC_ERROR: Final = "unable to parse numeric part of quantity"

_DECIMAL_SI: Final = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SI: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_SUFFIX_CHARS: Final = frozenset("eEinumkKMGTP")
_MAX_INT64: Final = 2**63 - 1
_MAX_INT64_FACTORS: Final = 18


class QuantityError(ValueError):
    """Not a quantity; the message is Go's (``resource.ErrFormatWrong`` and friends)."""


def _split(text: str) -> tuple[bool, str, str, str, str]:
    """Go's ``parseQuantityString``: sign, the numeric text, numerator, fraction, suffix."""
    positive, pos, end = True, 0, len(text)
    if text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos].isdigit() and text[pos].isascii():
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and "0" <= text[pos] <= "9":
            pos += 1
        denom = text[start:pos]
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and "0" <= text[pos] <= "9":
        pos += 1
    if pos < end:
        raise QuantityError(_FORMAT_WRONG)
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """Base, exponent and format of a suffix (Go's ``quantitySuffixer.interpret``)."""
    if suffix in _DECIMAL_SI:
        return 10, _DECIMAL_SI[suffix], "DecimalSI"
    if suffix in _BINARY_SI:
        return 2, _BINARY_SI[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE":
        try:
            return 10, int(suffix[1:]), "DecimalExponent"
        except ValueError:
            pass
    raise QuantityError(_SUFFIX_ERROR)


def _fast_path(num: str, denom: str, exponent: int, fmt: str) -> tuple[bool, Decimal] | None:
    """Go's fast path for values that fit an int64: whether the text is already canonical
    (then it is written as sent), and the value. None: exact arithmetic instead."""
    if fmt == "BinarySI":
        if exponent < 0 or denom:
            return None
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        scale = 0
    else:
        precision = _MAX_INT64_FACTORS - len(num + denom)
        scale = exponent
    if precision < 0:
        return None
    scale -= len(denom)
    if scale < -9:
        return None
    shifted = num + denom
    mantissa = 1 << exponent if fmt == "BinarySI" else 1
    value = int(shifted) * mantissa
    if value > _MAX_INT64:
        return None
    if fmt == "BinarySI":
        kept = exponent % 10 == 0 and int(shifted) & 0x07 != 0
    else:
        kept = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
    return kept, Decimal(value).scaleb(scale)


def canonical_quantity(text: str, *, milli: bool = False) -> str:
    """The quantity ``text`` as kube-apiserver writes it back.

    Args:
        milli: round up to thousandths, as the defaults of every ``ResourceList`` do
            (``SetDefaults_ResourceList``: ``0.0001`` cpu is ``1m``).

    Raises:
        QuantityError: ``text`` is not a quantity (Go's message).
    """
    text = text.strip()
    if not text:
        raise QuantityError(_FORMAT_WRONG)
    if text == "0":
        return "0"
    positive, value, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix)
    with localcontext() as ctx:
        ctx.prec = 200
        fast = _fast_path(num, denom, exponent, fmt)
        if fast is not None:
            kept, magnitude = fast
            if milli and _finer_than_milli(magnitude):
                return go_quantity_text(_milli(magnitude, positive), fmt)
            if kept:
                return text
            return go_quantity_text(magnitude if positive else -magnitude, fmt)
        try:
            amount = abs(Decimal(value))
        except ArithmeticError:
            raise QuantityError(_NUMERIC_ERROR) from None
        amount = amount.scaleb(exponent) if base == 10 else amount * (Decimal(2) ** exponent)
        if amount != 0:
            amount = amount.quantize(Decimal("1e-9"), rounding=ROUND_CEILING)
        if fmt == "BinarySI" and amount > _MAX_INT64:
            amount = Decimal(_MAX_INT64)
        if fmt == "BinarySI" and 0 < amount < 1:
            fmt = "DecimalSI"
        if milli and _finer_than_milli(amount):
            return go_quantity_text(_milli(amount, positive), fmt)
        return go_quantity_text(amount if positive else -amount, fmt)


def _finer_than_milli(magnitude: Decimal) -> bool:
    return magnitude != magnitude.quantize(Decimal("1e-3"), rounding=ROUND_CEILING)


def _milli(magnitude: Decimal, positive: bool) -> Decimal:
    """Rounded up to thousandths (``Quantity.RoundUp(-3)``: away from zero)."""
    rounded = magnitude.quantize(Decimal("1e-3"), rounding=ROUND_CEILING)
    return rounded if positive else -rounded
