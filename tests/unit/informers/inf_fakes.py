"""Test doubles for the informer tests: objects and a scripted ListerWatcher (kube-rs mock
tests): every list/watch call must match the next scripted step, and a test fails if a step is
never consumed (``await lw.wait_done()`` under a deadline)."""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio

from kcm.clock import Clock
from kcm.models import ObjectList, WatchEvent
from kcm.models.core_v1 import ConfigMap
from kcm.models.meta_v1 import ListMeta, ObjectMeta


def cm(
    name: str,
    rv: str | int = "1",
    *,
    ns: str = "default",
    labels: dict[str, str] | None = None,
    data: dict[str, str] | None = None,
    uid: str | None = None,
    annotations: dict[str, str] | None = None,
) -> ConfigMap:
    return ConfigMap(
        metadata=ObjectMeta(
            name=name,
            namespace=ns,
            resource_version=str(rv),
            labels=labels,
            uid=uid or f"uid-{name}",
            annotations=annotations,
        ),
        data=data,
    )


def bookmark(rv: str | int, *, end: bool = False) -> WatchEvent[ConfigMap]:
    ann = {"k8s.io/initial-events-end": "true"} if end else None
    return WatchEvent(
        type="BOOKMARK",
        object=ConfigMap(metadata=ObjectMeta(resource_version=str(rv), annotations=ann)),
    )


def ev(kind: str, obj: ConfigMap) -> WatchEvent[ConfigMap]:
    return WatchEvent(type=kind, object=obj)


@dataclass
class ListStep:
    items: Sequence[ConfigMap] = ()
    rv: str = "1"
    continue_: str | None = None
    error: Exception | None = None
    expect: dict[str, Any] = field(default_factory=dict)


@dataclass
class WatchStep:
    events: Sequence[WatchEvent[ConfigMap] | Exception | float | anyio.Event] = ()
    """Events to send; an exception is raised there; a number sleeps that long (virtual); an
    ``anyio.Event`` waits until the test sets it."""
    open_error: Exception | None = None
    end_error: Exception | None = None
    duration: float = 5.0
    """Virtual seconds the stream stays open after its events (so it is not 'very short')."""
    hold: bool = False
    """Keep the stream open until cancelled (a live watch)."""
    expect: dict[str, Any] = field(default_factory=dict)


class ScriptedListerWatcher:
    """A ListerWatcher that plays a script. Unscripted calls block for ever."""

    def __init__(self, clock: Clock, steps: Sequence[ListStep | WatchStep] = ()) -> None:
        self.clock = clock
        self.steps: deque[ListStep | WatchStep] = deque(steps)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.failures: list[str] = []
        self._changed = anyio.Event()

    def add(self, *steps: ListStep | WatchStep) -> None:
        self.steps.extend(steps)

    @property
    def done(self) -> bool:
        return not self.steps

    async def wait_done(self) -> None:
        while self.steps:
            self._changed = anyio.Event()
            await self._changed.wait()

    def _next(self, kind: str, kwargs: dict[str, Any]) -> ListStep | WatchStep | None:
        self.calls.append((kind, kwargs))
        if not self.steps:
            return None
        step = self.steps[0]
        want = ListStep if kind == "list" else WatchStep
        if not isinstance(step, want):
            self.failures.append(
                f"call {len(self.calls)}: expected {type(step).__name__}, got {kind}"
            )
            raise AssertionError(self.failures[-1])
        for key, value in step.expect.items():
            if kwargs.get(key) != value:
                got = kwargs.get(key)
                n = len(self.calls)
                self.failures.append(f"call {n} ({kind}): {key}={got!r}, expected {value!r}")
        self.steps.popleft()
        self._changed.set()
        return step

    async def list(self, **kwargs: Any) -> ObjectList[ConfigMap]:
        step = self._next("list", kwargs)
        if step is None:
            await anyio.sleep_forever()
        assert isinstance(step, ListStep)
        if step.error is not None:
            raise step.error
        return ObjectList(
            metadata=ListMeta(resource_version=step.rv, continue_=step.continue_),
            items=list(step.items),
        )

    @asynccontextmanager
    async def watch(self, **kwargs: Any) -> AsyncIterator[AsyncIterator[WatchEvent[ConfigMap]]]:
        step = self._next("watch", kwargs)
        if step is None:
            await anyio.sleep_forever()
        assert isinstance(step, WatchStep)
        if step.open_error is not None:
            raise step.open_error
        yield self._stream(step)

    async def _stream(self, step: WatchStep) -> AsyncIterator[WatchEvent[ConfigMap]]:
        for item in step.events:
            await anyio.lowlevel.checkpoint()
            if isinstance(item, float | int):
                await self.clock.sleep(item)
                continue
            if isinstance(item, anyio.Event):
                await item.wait()
                continue
            if isinstance(item, Exception):
                raise item
            yield item
        if step.hold:
            await anyio.sleep_forever()
        if step.duration:
            await self.clock.sleep(step.duration)
        if step.end_error is not None:
            raise step.end_error


class Recorder:
    """A handler that records what it saw as tuples."""

    def __init__(self, *, block: anyio.Event | None = None, fail_on: str | None = None) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.block = block
        self.fail_on = fail_on

    def on_add(self, obj: ConfigMap, *, is_in_initial_list: bool) -> None:
        if self.fail_on == obj.metadata.name:
            raise RuntimeError("boom")
        self.events.append(
            ("add", obj.metadata.name, obj.metadata.resource_version, is_in_initial_list)
        )

    def on_update(self, old: ConfigMap, new: ConfigMap) -> None:
        self.events.append(
            (
                "update",
                new.metadata.name,
                old.metadata.resource_version,
                new.metadata.resource_version,
            )
        )

    def on_delete(self, obj: ConfigMap, *, final_state_unknown: bool) -> None:
        self.events.append(
            ("delete", obj.metadata.name, obj.metadata.resource_version, final_state_unknown)
        )


def names(objs: Sequence[Any]) -> list[str]:
    return sorted(o.metadata.name for o in objs)


Check = Callable[[], bool]
