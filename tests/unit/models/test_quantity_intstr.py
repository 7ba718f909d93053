"""Quantities, IntOrString scaling and ObjectKey."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kcm.models import (
    ObjectKey,
    ObjectMeta,
    Pod,
    Unstructured,
    format_quantity,
    object_key,
    parse_quantity,
    scaled_value,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", Decimal(0)),
        ("500m", Decimal("0.5")),
        ("1", Decimal(1)),
        ("1.5", Decimal("1.5")),
        ("100n", Decimal("0.0000001")),
        ("2u", Decimal("0.000002")),
        ("1k", Decimal(1000)),
        ("128Mi", Decimal(128 * 1024**2)),
        ("1Gi", Decimal(1024**3)),
        ("1.5G", Decimal(1_500_000_000)),
        ("1e3", Decimal(1000)),
        ("1E-3", Decimal("0.001")),
        ("-2Ki", Decimal(-2048)),
        (".5", Decimal("0.5")),
        ("3Ei", Decimal(3 * 1024**6)),
        ("2E", Decimal(2 * 10**18)),
        ("2e2", Decimal(200)),
    ],
)
def test_parse_quantity(text: str, value: Decimal) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("bad", ["", "abc", "1.2.3", "5 m", "1Kb", "Mi", "1ki"])
def test_parse_quantity_rejects_garbage(bad: str) -> None:
    with pytest.raises(ValueError, match="quantity"):
        parse_quantity(bad)


@pytest.mark.parametrize(
    ("value", "binary", "text"),
    [
        (Decimal("0.5"), False, "500m"),
        (Decimal(1000), False, "1k"),
        (Decimal(1500), False, "1500"),
        (0, False, "0"),
        (2048, True, "2Ki"),
        (128 * 1024**2, True, "128Mi"),
        (1000, True, "1k"),
        (Decimal("0.0000000001"), False, "1n"),  # rounded up to the next nano
        ("1.5Gi", True, "1536Mi"),
    ],
)
def test_format_quantity(value: Decimal | int | str, binary: bool, text: str) -> None:
    assert format_quantity(value, binary=binary) == text


@given(st.integers(min_value=-(10**15), max_value=10**15), st.sampled_from([-9, -6, -3, 0, 3]))
def test_quantity_round_trip(mantissa: int, exp: int) -> None:
    value = Decimal(mantissa).scaleb(exp)
    assert parse_quantity(format_quantity(value)) == value


@given(st.integers(min_value=0, max_value=2**50))
def test_binary_quantity_round_trip(value: int) -> None:
    assert parse_quantity(format_quantity(value, binary=True)) == value


@pytest.mark.parametrize(
    ("value", "total", "up", "expected"),
    [
        (3, 10, True, 3),
        ("25%", 10, True, 3),
        ("25%", 10, False, 2),
        ("100%", 7, False, 7),
        ("0%", 7, True, 0),
        ("33%", 3, True, 1),
        ("33%", 3, False, 0),
    ],
)
def test_scaled_value(value: int | str, total: int, up: bool, expected: int) -> None:
    assert scaled_value(value, total, round_up=up) == expected


@given(st.integers(0, 1000), st.integers(0, 10_000))
def test_scaled_value_bounds(percent: int, total: int) -> None:
    down = scaled_value(f"{percent}%", total, round_up=False)
    up = scaled_value(f"{percent}%", total, round_up=True)
    assert down <= percent * total / 100 <= up
    assert up - down in (0, 1)


@pytest.mark.parametrize("bad", ["25", "x%", "%", "2.5%", True])
def test_scaled_value_rejects(bad: object) -> None:
    with pytest.raises(ValueError, match="IntOrString"):
        scaled_value(bad, 10, round_up=True)  # type: ignore[arg-type]


def test_object_key() -> None:
    key = object_key(Pod(metadata=ObjectMeta(name="a", namespace="ns")))
    assert key == ObjectKey("ns", "a")
    assert type(key) is ObjectKey  # built with tuple.__new__: still the named type
    assert (key.namespace, key.name) == ("ns", "a")
    assert str(key) == "ns/a"
    assert str(ObjectKey("", "node-1")) == "node-1"
    assert ObjectKey.parse("ns/a") == key
    assert ObjectKey.parse("node-1") == ObjectKey("", "node-1")
    assert object_key(Unstructured({"kind": "W", "metadata": {"name": "w"}})) == ("", "w")
    assert len({key, ObjectKey("ns", "a")}) == 1
    with pytest.raises(ValueError, match=r"no metadata\.name"):
        object_key(Pod())
    for bad in ("a/b/c", "ns/", "/a", ""):
        with pytest.raises(ValueError, match="object key"):
            ObjectKey.parse(bad)
