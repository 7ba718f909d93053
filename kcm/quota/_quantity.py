"""Quantities as quota counts them: an exact value and the format Go prints it in.

kube's ``resource.Quantity`` remembers how it was written (``DecimalSI``, ``BinarySI`` or
``DecimalExponent``) and prints its value in that format: ``1Gi`` plus ``512Mi`` is ``1536Mi``,
``100m`` plus ``200m`` is ``300m``. A sum takes the format of its left side unless that side
is zero (then the right side's), so usage summed from zero keeps the first object's format,
and the texts in ``status.used`` and in quota's 403s are the ones kube-apiserver writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Final

from kcm.models import parse_quantity

__all__ = ["DECIMAL_SI", "Quantity", "go_quantity_text"]

DECIMAL_SI: Final = "DecimalSI"
_BINARY_SI: Final = "BinarySI"
_EXPONENT: Final = "DecimalExponent"
_DECIMAL_SUFFIXES: Final = {
    -9: "n",
    -6: "u",
    -3: "m",
    0: "",
    3: "k",
    6: "M",
    9: "G",
    12: "T",
    15: "P",
    18: "E",
}
_BINARY_SUFFIXES: Final = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def _format_of(text: str) -> str:
    """The format Go's ``ParseQuantity`` gives ``text`` (from its suffix)."""
    stripped = text.strip().rstrip("0123456789+-")
    if stripped.endswith(_BINARY_SUFFIXES[1:]):
        return _BINARY_SI
    if stripped[-1:] in ("e", "E") and len(stripped) < len(text.strip()):
        return _EXPONENT
    return DECIMAL_SI


@dataclass(frozen=True, order=False)
class Quantity:
    """An exact quantity and its print format; compares by value only."""

    value: Decimal
    format: str = DECIMAL_SI

    @classmethod
    def parse(cls, text: str | int) -> Quantity:
        """A quantity from its JSON form (``"500m"``, ``"1Gi"``, ``3``).

        Raises:
            ValueError: not a quantity.
        """
        if isinstance(text, int):
            return cls(Decimal(text))
        return cls(parse_quantity(text), _format_of(text))

    @classmethod
    def count(cls, n: int) -> Quantity:
        """``resource.NewQuantity(n, DecimalSI)``: what object counts are."""
        return cls(Decimal(n))

    def __add__(self, other: Quantity) -> Quantity:
        fmt = other.format if self.value == 0 else self.format
        return Quantity(self.value + other.value, fmt)

    def __sub__(self, other: Quantity) -> Quantity:
        fmt = other.format if self.value == 0 else self.format
        return Quantity(self.value - other.value, fmt)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __le__(self, other: Quantity) -> bool:
        return self.value <= other.value

    def __gt__(self, other: Quantity) -> bool:
        return self.value > other.value

    def __ge__(self, other: Quantity) -> bool:
        return self.value >= other.value

    def round_up(self) -> Quantity:
        """To a whole number, away from zero (``Quantity.RoundUp(0)``)."""
        return Quantity(_round_up(self.value), self.format)

    def __str__(self) -> str:
        return go_quantity_text(self.value, self.format)


def go_quantity_text(amount: Decimal, fmt: str) -> str:
    """Go's ``Quantity.String`` (``CanonicalizeBytes``): base 1024 for ``BinarySI`` whole
    numbers of at least 1024, else a mantissa and an exponent that is a multiple of three
    (an SI suffix, or ``e<n>`` for ``DecimalExponent``)."""
    if amount == 0:
        return "0"
    if fmt == _BINARY_SI:
        rounded = _round_up(amount)
        if -1024 < amount < 1024 or rounded != amount:
            fmt = DECIMAL_SI
        else:
            whole, power = int(rounded), 0
            while whole % 1024 == 0 and power < 6:
                whole //= 1024
                power += 1
            return f"{whole}{_BINARY_SUFFIXES[power]}"
    nanos = amount.scaleb(9)
    if nanos != nanos.to_integral_value():  # finer than a nano: Go rounds up
        amount = _round_up(nanos).scaleb(-9)
    sign, digits, exp = amount.normalize().as_tuple()
    mantissa = int("".join(map(str, digits)) or "0")
    exponent = int(exp)
    shift = exponent % 3
    mantissa *= 10**shift
    exponent -= shift
    number = f"{'-' if sign else ''}{mantissa}"
    if fmt == _EXPONENT:
        return number if exponent == 0 else f"{number}e{exponent}"
    suffix = _DECIMAL_SUFFIXES.get(exponent)
    return f"{number}{suffix}" if suffix is not None else f"{number}e{exponent}"


def _round_up(amount: Decimal) -> Decimal:
    """Away from zero, to a whole number (``inf.RoundUp`` to scale 0)."""
    rounding = ROUND_CEILING if amount > 0 else ROUND_FLOOR
    return amount.quantize(Decimal(1), rounding=rounding)
