"""Resource quantities (``500m``, ``128Mi``, ``1.5G``, ``1e3``): parse to and format from Decimal.

Models keep quantities as the ``str`` the server sent (so they round-trip byte for byte); these
helpers do the arithmetic, following k8s.io/apimachinery/pkg/api/resource.
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Decimal, InvalidOperation

__all__ = ["format_quantity", "parse_quantity"]

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_QUANTITY = re.compile(
    r"(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?"
)


def parse_quantity(value: str | int | float) -> Decimal:
    """The exact value of a quantity (``"500m"`` -> ``Decimal("0.5")``, ``"1Ki"`` -> 1024).

    Raises:
        ValueError: ``value`` is not a Kubernetes quantity.
    """
    if isinstance(value, bool):
        raise ValueError(f"not a quantity: {value!r}")
    if isinstance(value, int | float):
        return Decimal(str(value))
    match = _QUANTITY.fullmatch(value.strip())
    if match is None:
        raise ValueError(
            f"not a quantity: {value!r} (expected a number with an optional suffix such as "
            "m, k, M, G, Ki, Mi, Gi or an exponent like e3)"
        )
    try:
        number = Decimal(match.group("num"))
    except InvalidOperation:  # pragma: no cover - the regex only lets numbers through
        raise ValueError(f"not a quantity: {value!r}") from None
    suffix = match.group("suffix") or ""
    if suffix in _BINARY:
        return number * (Decimal(1024) ** _BINARY[suffix])
    if len(suffix) > 1 and suffix[0] in "eE":  # exponent; a lone "E" is exa
        return number.scaleb(int(suffix[1:]))
    return number.scaleb(_DECIMAL[suffix])


def format_quantity(value: Decimal | int | float | str, *, binary: bool = False) -> str:
    """The canonical string of a quantity (``Decimal("0.5")`` -> ``"500m"``, 2048 -> ``"2Ki"``).

    Decimal SI suffixes are used unless ``binary`` is true and the value is a whole number of
    at least 1Ki that is a multiple of 1024; like Kubernetes, values finer than ``1n`` are
    rounded up to the next nano.

    Raises:
        ValueError: ``value`` is a string that is not a quantity.
    """
    number = parse_quantity(value) if isinstance(value, str) else Decimal(str(value))
    if number == 0:
        return "0"
    if binary and number == number.to_integral_value() and abs(number) >= 1024:
        exp = 0
        whole = int(number)
        while exp < 6 and whole % 1024 == 0:
            whole //= 1024
            exp += 1
        if exp:
            suffix = next(s for s, e in _BINARY.items() if e == exp)
            return f"{whole}{suffix}"
    nanos = (number.scaleb(9)).to_integral_value(rounding=ROUND_CEILING)
    exp = -9
    while exp < 18 and nanos % 1000 == 0:
        nanos //= 1000
        exp += 3
    suffix = next(s for s, e in _DECIMAL.items() if e == exp)
    return f"{int(nanos)}{suffix}"
