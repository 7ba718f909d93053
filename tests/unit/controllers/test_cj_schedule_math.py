"""CronJob schedule parsing and the missed-start-time arithmetic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kcm.controllers.cronjob import (
    MAX_MISSED,
    ScheduleError,
    job_name_for,
    local_time_zone,
    most_recent_time,
    parse_go_duration,
    parse_schedule,
    resolve_time_zone,
)

UTC_TZ = resolve_time_zone(None)
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_most_recent_time_and_count() -> None:
    every5 = parse_schedule("*/5 * * * *", UTC_TZ)
    latest, count = most_recent_time(every5, T0, T0 + timedelta(minutes=12))
    assert latest == T0 + timedelta(minutes=10)
    assert count == 2
    assert most_recent_time(every5, T0, T0 + timedelta(minutes=4)) == (None, 0)


def test_too_many_missed_is_capped_but_still_reports_the_latest() -> None:
    minutely = parse_schedule("* * * * *", UTC_TZ)
    now = T0 + timedelta(days=2, seconds=30)
    latest, count = most_recent_time(minutely, T0, now)
    assert latest == T0 + timedelta(days=2)
    assert count == MAX_MISSED + 1


def test_descriptors_and_time_zones() -> None:
    hourly = parse_schedule("@hourly", UTC_TZ)
    assert hourly.next_after(T0) == T0 + timedelta(hours=1)
    ny = parse_schedule("0 9 * * *", resolve_time_zone("America/New_York"))
    assert ny.next_after(T0).astimezone(UTC) == datetime(2026, 1, 1, 14, tzinfo=UTC)
    # Summer time: 09:00 EDT is 13:00 UTC.
    july = datetime(2026, 7, 1, tzinfo=UTC)
    assert ny.next_after(july).astimezone(UTC) == datetime(2026, 7, 1, 13, tzinfo=UTC)


@pytest.mark.parametrize(
    "bad",
    [
        "not a cron",
        "* * * *",
        "61 * * * *",
        "@fortnightly",
        "@every",
        "@every 5",
        "@every 1d",
        "@every m",
        "CRON_TZ=UTC * * * * *",
    ],
)
def test_bad_schedules_are_rejected(bad: str) -> None:
    with pytest.raises(ScheduleError):
        parse_schedule(bad, UTC_TZ)


def test_unknown_time_zone() -> None:
    with pytest.raises(ScheduleError, match="Mars/Olympus"):
        resolve_time_zone("Mars/Olympus")


def test_job_name_is_minutes_since_epoch() -> None:
    assert job_name_for("cj", T0 + timedelta(minutes=1)) == f"cj-{int(T0.timestamp()) // 60 + 1}"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("0", 0.0),
        ("90s", 90.0),
        ("5m", 300.0),
        ("1h30m", 5400.0),
        ("1.5h", 5400.0),
        (".5m", 30.0),
        ("1m30.5s", 90.5),
        ("300ms", 0.3),
        ("2us", 2e-6),
        ("-2m", -120.0),
        ("+1h", 3600.0),
    ],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)


def test_every_counts_whole_seconds_from_the_earliest_time() -> None:
    every = parse_schedule("@every 1h30m", UTC_TZ)
    assert every.every == 5400.0
    assert every.next_after(T0 + timedelta(microseconds=500)) == T0 + timedelta(minutes=90)
    # robfig/cron: rounded down to whole seconds, at least one second
    assert parse_schedule("@every 2.7s", UTC_TZ).every == 2.0
    assert parse_schedule("@every 10ms", UTC_TZ).every == 1.0
    created = T0 + timedelta(minutes=7)  # not on any cron boundary: @every ignores the clock
    assert most_recent_time(every, created, created + timedelta(minutes=89)) == (None, 0)
    latest, count = most_recent_time(every, created, created + timedelta(minutes=90))
    assert (latest, count) == (created + timedelta(minutes=90), 1)
    latest, count = most_recent_time(every, created, created + timedelta(hours=7))
    assert (latest, count) == (created + timedelta(hours=6), 4)
    minutely = parse_schedule("@every 1m", UTC_TZ)
    latest, count = most_recent_time(minutely, T0, T0 + timedelta(days=1, seconds=59))
    assert latest == T0 + timedelta(days=1)
    assert count == MAX_MISSED + 1
    with pytest.raises(ScheduleError):
        every.prev_at_or_before(T0)


@pytest.mark.parametrize("descriptor", ["@yearly", "@annually", "@monthly", "@weekly", "@daily"])
def test_more_descriptors(descriptor: str) -> None:
    start = datetime(2026, 3, 4, 5, 6, tzinfo=UTC)  # a Wednesday
    nxt = parse_schedule(descriptor, UTC_TZ).next_after(start)
    expected = {
        "@yearly": datetime(2027, 1, 1, tzinfo=UTC),
        "@annually": datetime(2027, 1, 1, tzinfo=UTC),
        "@monthly": datetime(2026, 4, 1, tzinfo=UTC),
        "@weekly": datetime(2026, 3, 8, tzinfo=UTC),  # Sunday midnight
        "@daily": datetime(2026, 3, 5, tzinfo=UTC),
    }
    assert nxt == expected[descriptor]


def test_unset_time_zone_takes_the_default() -> None:
    kathmandu = ZoneInfo("Asia/Kathmandu")
    assert resolve_time_zone(None, default=kathmandu) is kathmandu
    assert resolve_time_zone("", default=kathmandu) is kathmandu
    assert resolve_time_zone("Europe/Paris", default=kathmandu) == ZoneInfo("Europe/Paris")
    assert resolve_time_zone(None) == ZoneInfo("UTC")


def test_local_time_zone_follows_tz_then_etc_localtime(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    assert local_time_zone() == ZoneInfo("America/New_York")
    monkeypatch.setenv("TZ", ":Asia/Tokyo")
    assert local_time_zone() == ZoneInfo("Asia/Tokyo")
    for utc in ("", "UTC", "Not/AZone"):  # as Go: empty, UTC or unknown means UTC
        monkeypatch.setenv("TZ", utc)
        assert local_time_zone() == ZoneInfo("UTC")
    monkeypatch.delenv("TZ")
    zone = local_time_zone()
    if Path("/etc/localtime").exists():
        winter, summer = datetime(2026, 1, 15, 12), datetime(2026, 7, 15, 12)
        with Path("/etc/localtime").open("rb") as f:
            expected = ZoneInfo.from_file(f)
        for t in (winter, summer):
            assert zone.utcoffset(t) == expected.utcoffset(t)
