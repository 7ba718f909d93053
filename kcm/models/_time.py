"""Kubernetes time values: ``metav1.Time`` (RFC 3339, seconds) and ``metav1.MicroTime``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec

__all__ = ["MicroTime", "coerce_micro_time", "format_micro_time", "format_time", "parse_time"]


class MicroTime(datetime):
    """A ``datetime`` that always encodes with exactly six fractional digits.

    kube-apiserver rejects ``metav1.MicroTime`` values (``Lease.spec.renewTime``,
    ``Event.eventTime``, ...) without them. Model fields typed ``MicroTime`` also accept a plain
    ``datetime``: it is converted on construction.
    """

    __slots__ = ()

    @classmethod
    def from_datetime(cls, value: datetime) -> MicroTime:
        """The same instant as a MicroTime (naive values are taken as UTC)."""
        if isinstance(value, cls):
            return value
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return cls(
            value.year,
            value.month,
            value.day,
            value.hour,
            value.minute,
            value.second,
            value.microsecond,
            tzinfo=value.tzinfo,
            fold=value.fold,
        )

    @classmethod
    def now(cls, tz: Any = UTC) -> MicroTime:
        """The current time in UTC (or ``tz``)."""
        return cls.from_datetime(datetime.now(tz))


def parse_time(value: str) -> datetime:
    """Parse an RFC 3339 timestamp (``2024-05-01T10:00:00Z``, optional fraction) to aware UTC.

    Raises:
        ValueError: ``value`` is not an RFC 3339 timestamp.
    """
    try:
        parsed = msgspec.json.decode(msgspec.json.encode(value), type=datetime)
    except msgspec.ValidationError as exc:
        raise ValueError(f"not an RFC 3339 timestamp: {value!r}") from exc
    if parsed.tzinfo is None:
        raise ValueError(f"timestamp has no time zone: {value!r}")
    return parsed.astimezone(UTC)


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def format_time(value: datetime) -> str:
    """Format as ``metav1.Time`` does: UTC, whole seconds (``2024-05-01T10:00:00Z``)."""
    return _utc(value).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(value: datetime) -> str:
    """Format as ``metav1.MicroTime`` does: UTC, six fractional digits."""
    return _utc(value).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def coerce_micro_time(obj: msgspec.Struct, names: tuple[str, ...]) -> None:
    """Turn plain datetimes in ``names`` of a (frozen) model into MicroTime, in place.

    Called from the ``__post_init__`` of generated models that have MicroTime fields.
    """
    for name in names:
        value = getattr(obj, name)
        if value is not None and type(value) is not MicroTime:
            if not isinstance(value, datetime):
                raise TypeError(f"{name} must be a datetime, not {type(value).__name__}")
            msgspec.structs.force_setattr(obj, name, MicroTime.from_datetime(value))
