"""MicroTime fields always carry six fractional digits; Time helpers."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import msgspec
import pytest

from kcm.models import (
    Event,
    Lease,
    MicroTime,
    ObjectMeta,
    coordination_v1,
    core_v1,
    decode,
    encode,
    events_v1,
    format_micro_time,
    format_time,
    from_dict,
    parse_time,
    to_dict,
)


def test_lease_times_encode_six_digits_even_when_whole_seconds() -> None:
    whole = datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)
    lease = Lease(
        metadata=ObjectMeta(name="leader", namespace="kube-system"),
        spec=coordination_v1.LeaseSpec(
            holder_identity="me", acquire_time=whole, renew_time=MicroTime.from_datetime(whole)
        ),
    )
    assert lease.spec is not None
    assert type(lease.spec.acquire_time) is MicroTime  # plain datetime converted on construction
    spec = json.loads(encode(lease))["spec"]
    assert spec["acquireTime"] == "2024-05-01T10:00:00.000000Z"
    assert spec["renewTime"] == "2024-05-01T10:00:00.000000Z"
    assert to_dict(lease)["spec"]["renewTime"] == "2024-05-01T10:00:00.000000Z"


def test_micro_time_decodes_to_micro_time_and_round_trips() -> None:
    wire = b'{"kind":"Lease","spec":{"renewTime":"2024-05-01T10:00:00.123456Z"}}'
    lease = decode(Lease, wire)
    assert lease.spec is not None
    assert type(lease.spec.renew_time) is MicroTime
    assert lease.spec.renew_time == datetime(2024, 5, 1, 10, 0, 0, 123456, tzinfo=UTC)
    assert json.loads(encode(lease))["spec"]["renewTime"] == "2024-05-01T10:00:00.123456Z"
    # A server that sent fewer digits still decodes; we re-encode with six.
    short = decode(Lease, b'{"spec":{"renewTime":"2024-05-01T10:00:00Z"}}')
    assert short.spec is not None
    assert json.loads(encode(short))["spec"]["renewTime"] == "2024-05-01T10:00:00.000000Z"


def test_micro_time_is_converted_to_utc() -> None:
    plus_two = timezone(timedelta(hours=2))
    value = MicroTime(2024, 5, 1, 12, 0, 0, 5, tzinfo=plus_two)
    assert format_micro_time(value) == "2024-05-01T10:00:00.000005Z"


@pytest.mark.parametrize(
    ("model", "path"),
    [
        (core_v1.Event, ("eventTime",)),
        (events_v1.Event, ("eventTime",)),
    ],
)
def test_event_times_are_micro_time(model: type[msgspec.Struct], path: tuple[str, ...]) -> None:
    event = from_dict(model, {"eventTime": "2024-05-01T10:00:00Z"})
    assert type(event.event_time) is MicroTime  # type: ignore[attr-defined]
    assert to_dict(event)["eventTime"] == "2024-05-01T10:00:00.000000Z"


def test_event_series_last_observed_time_is_micro_time() -> None:
    for model in (core_v1.EventSeries, events_v1.EventSeries):
        series = from_dict(model, {"lastObservedTime": "2024-05-01T10:00:00Z", "count": 2})
        assert to_dict(series)["lastObservedTime"] == "2024-05-01T10:00:00.000000Z"


def test_top_level_event_is_the_core_one() -> None:
    assert Event is core_v1.Event
    assert Event.resource_info.group == ""
    assert events_v1.Event.resource_info.group == "events.k8s.io"


def test_micro_time_field_rejects_non_datetimes() -> None:
    with pytest.raises(TypeError, match="renew_time"):
        coordination_v1.LeaseSpec(renew_time="2024-05-01T10:00:00Z")  # type: ignore[arg-type]


def test_time_helpers() -> None:
    assert parse_time("2024-05-01T10:00:00Z") == datetime(2024, 5, 1, 10, tzinfo=UTC)
    assert parse_time("2024-05-01T12:00:00.5+02:00") == datetime(
        2024, 5, 1, 10, 0, 0, 500000, tzinfo=UTC
    )
    assert format_time(datetime(2024, 5, 1, 10, 0, 0, 999, tzinfo=UTC)) == "2024-05-01T10:00:00Z"
    assert format_micro_time(datetime(2024, 5, 1, 10)) == "2024-05-01T10:00:00.000000Z"
    with pytest.raises(ValueError, match="RFC 3339"):
        parse_time("yesterday")
    with pytest.raises(ValueError, match="time zone"):
        parse_time("2024-05-01T10:00:00")
    now = MicroTime.now()
    assert isinstance(now, MicroTime)
    assert now.tzinfo is not None
