"""Event recording: what ``recorder.event()`` costs a reconciler, and how fast Events are written.

Part 1 (synchronous, no I/O): the time of one ``recorder.event(obj, ...)`` call, which builds the
core/v1 Event and appends it to the broadcaster's buffer, for a typed ConfigMap and an
``Unstructured`` object, and when the buffer is full (the drop path).

Part 2 (asyncio, the embedded API server on loopback): events written per second by
``EventBroadcaster.run()`` for N distinct events (one create each), N repeats of one event (one
patch each, ``count`` going up), and as a baseline the same N creates sent straight through
``client.api(Event).create`` by one task. The client's rate limit (20 qps) is switched off, and
the spam filter is widened (a burst of 10^6), else client-go's 25-per-object limit would filter
the repeats. Each scenario is the best of 3 interleaved rounds.

Run: ``python benchmarks/events.py [--quick]``. Prints a table, writes
benchmarks/results/events.json and docs/benchmarks/events.png.
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import msgspec

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.models import Unstructured
from kcm.models.core_v1 import ConfigMap, Event, ObjectReference
from kcm.models.meta_v1 import ObjectMeta
from kcm.record import EventBroadcaster, EventCorrelator
from kcm.testing import client_config_for

ROOT = Path(__file__).resolve().parents[1]


def time_calls(n: int, fn: Any) -> float:
    """Best-of-5 microseconds per call of ``fn(i)``."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for i in range(n):
            fn(i)
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1e6


def part1(n: int) -> dict[str, float]:
    cm = ConfigMap(metadata=ObjectMeta(name="web", namespace="prod", uid="u", resource_version="1"))
    un = Unstructured.from_dict(
        {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": "a"},
        }
    )
    results: dict[str, float] = {}
    for label, obj in (("typed", cm), ("unstructured", un)):
        recorder = EventBroadcaster(None, sink=_NoSink(), queue_size=10**8).recorder("bench")
        results[label] = time_calls(
            n, lambda i, r=recorder, o=obj: r.event(o, "Normal", "Synced", "ok")
        )
    full = EventBroadcaster(None, sink=_NoSink(), queue_size=1)
    recorder = full.recorder("bench")
    recorder.event(cm, "Normal", "Synced", "ok")
    results["dropped (full)"] = time_calls(n, lambda i: recorder.event(cm, "Normal", "X", "ok"))
    return results


class _NoSink:
    async def create(self, event: Event) -> Event:
        return event

    async def patch(self, event: Event, patch: dict[str, Any]) -> Event:
        return event


async def part2(n: int) -> dict[str, float]:
    async with ApiServer() as server:
        config = msgspec.structs.replace(client_config_for(server), qps=-1)  # no client rate limit
        async with ApiClient(config) as client:
            return await _write_rates(client, n)


async def _write_rates(client: ApiClient, n: int, rounds: int = 3) -> dict[str, float]:
    """Best of ``rounds`` interleaved rounds per scenario (events/s)."""
    objects = [
        ConfigMap(metadata=ObjectMeta(name=f"cm-{i}", namespace="default", uid=f"u{i}"))
        for i in range(n)
    ]
    results: dict[str, float] = {}
    for r in range(rounds):
        for label, repeat in (
            ("broadcaster: distinct (create)", False),
            ("broadcaster: repeat (patch)", True),
        ):
            correlator = EventCorrelator(spam_burst=10**6)
            broadcaster = EventBroadcaster(client, correlator=correlator, queue_size=n + 1)
            recorder = broadcaster.recorder(f"bench-{r}-{int(repeat)}")
            async with anyio.create_task_group() as tg:
                await tg.start(broadcaster.run)
                if repeat:  # the first one is a create; time the patches
                    recorder.event(objects[0], "Normal", "Again", "same")
                    await broadcaster.wait_idle()
                start = time.perf_counter()
                for i in range(n):
                    obj = objects[0] if repeat else objects[i]
                    recorder.event(obj, "Normal", "Again" if repeat else "Created", "same")
                await broadcaster.wait_idle()
                rate = n / (time.perf_counter() - start)
                results[label] = max(results.get(label, 0.0), rate)
                tg.cancel_scope.cancel()
        api = client.api(Event, "default")
        start = time.perf_counter()
        for i in range(n):
            await api.create(
                Event(
                    metadata=ObjectMeta(name=f"raw.{r}.{i:x}", namespace="default"),
                    involved_object=ObjectReference(
                        api_version="v1", kind="ConfigMap", name=f"cm-{i}"
                    ),
                    reason="Created",
                    message="same",
                    type="Normal",
                    count=1,
                )
            )
        label = "raw client create (baseline)"
        results[label] = max(results.get(label, 0.0), n / (time.perf_counter() - start))
    return results


def plot(sync: dict[str, float], rates: dict[str, float]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.barh(list(sync), list(sync.values()), color="tab:blue")
    left.set_xlabel("µs per recorder.event() call")
    left.set_title("recording (synchronous)")
    right.barh(list(rates), list(rates.values()), color="tab:green")
    right.set_xlabel("events written per second")
    right.set_title("writing to the embedded API server")
    fig.tight_layout()
    out = ROOT / "docs" / "benchmarks" / "events.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls and events")
    args = parser.parse_args()
    sync_n, n = (2_000, 200) if args.quick else (20_000, 1_000)
    logging.getLogger("kcm").setLevel(logging.CRITICAL)  # the drop path logs its first drop
    sync = part1(sync_n)
    rates = anyio.run(part2, n)
    print(f"{'recording':<32} {'µs/call':>10}")
    for label, us in sync.items():
        print(f"{label:<32} {us:>10.2f}")
    print(f"\n{'writing (' + str(n) + ' events)':<32} {'events/s':>10}")
    for label, rate in rates.items():
        print(f"{label:<32} {rate:>10.0f}")
    out = ROOT / "benchmarks" / "results" / "events.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "python": sys.version.split()[0],
                "platform": platform.platform(),
                "quick": args.quick,
                "record_us_per_call": sync,
                "events": n,
                "write_events_per_s": rates,
            },
            indent=2,
        )
        + "\n"
    )
    plot(sync, rates)


if __name__ == "__main__":
    main()
