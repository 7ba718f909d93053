"""Model check of DeltaFIFO + Indexer + handler dispatch against a dict (no I/O).

A fake "server" dict is changed at random; each change is either delivered as a watch event or
missed (a disconnect). Relists replace the FIFO content, resyncs replay the cache, and the
informer's own delta processing drains the FIFO into the indexer and the handler buffers at
random moments. After a relist and a full drain the cache must equal the server, and every
handler's view must be a consistent event sequence at every step.
"""

from __future__ import annotations

from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kcm.informers import SharedIndexInformer
from kcm.informers._handlers import _Listener
from kcm.models import ObjectKey
from kcm.models.core_v1 import ConfigMap
from kcm.models.meta_v1 import ObjectMeta

NAMES = st.sampled_from(["a", "b", "c", "d", "e"])


def make(name: str, rv: int, uid: int) -> ConfigMap:
    return ConfigMap(
        metadata=ObjectMeta(
            name=name, namespace="ns", resource_version=str(rv), uid=f"{name}-{uid}"
        )
    )


class ConsistencyChecker:
    """A handler that fails on any inconsistent sequence for one object."""

    def __init__(self, *, coalescing: bool = False) -> None:
        self.coalescing = coalescing
        self.view: dict[str, ConfigMap] = {}
        self.problems: list[str] = []

    def on_add(self, obj: ConfigMap, *, is_in_initial_list: bool) -> None:
        name = obj.metadata.name or ""
        if name in self.view:
            self.problems.append(f"add of {name} which the handler already has")
        self.view[name] = obj

    def on_update(self, old: ConfigMap, new: ConfigMap) -> None:
        name = new.metadata.name or ""
        if name not in self.view:
            self.problems.append(f"update before add for {name}")
        elif self.view[name] is not old:
            self.problems.append(f"update of {name}: old is not the state last delivered")
        self.view[name] = new

    def on_delete(self, obj: ConfigMap, *, final_state_unknown: bool) -> None:
        name = obj.metadata.name or ""
        last = self.view.pop(name, None)
        if last is None:
            self.problems.append(f"delete of {name} which the handler does not have")
        elif int(obj.metadata.resource_version or 0) < int(last.metadata.resource_version or 0):
            # A tombstone carries the last state the cache knew, which a coalescing handler
            # may not have been shown; it is never older than what the handler saw.
            self.problems.append(f"delete of {name} carries an older state than delivered")
        elif (
            final_state_unknown
            and not self.coalescing
            and (obj.metadata.resource_version != last.metadata.resource_version)
        ):
            self.problems.append(f"tombstone of {name} is not the last state delivered")


class _NoLW:
    async def list(self, **kw: Any) -> Any:  # pragma: no cover - never called
        raise AssertionError

    def watch(self, **kw: Any) -> Any:  # pragma: no cover - never called
        raise AssertionError


class FifoIndexerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.informer: SharedIndexInformer[ConfigMap] = SharedIndexInformer(_NoLW())  # type: ignore[arg-type]
        self.fifo = self.informer._fifo
        self.rv = 0
        self.uid = 0
        self.server: dict[str, ConfigMap] = {}
        self.checkers = [ConsistencyChecker(), ConsistencyChecker(coalescing=True)]
        self.listeners: list[_Listener] = []
        for i, checker in enumerate(self.checkers):
            reg = self.informer.add_event_handler(checker, coalesce=bool(i))
            self.listeners.append(reg._listener)
        self.missed = False
        self.synced_once = False

    def _next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def _deliver(self, kind: str, obj: ConfigMap, watched: bool) -> None:
        if not watched or not self.synced_once:
            self.missed = True
            return
        getattr(self.fifo, kind)(obj)

    @rule(name=NAMES, watched=st.booleans())
    def create(self, name: str, watched: bool) -> None:
        if name in self.server:
            return
        self.uid += 1
        obj = make(name, self._next_rv(), self.uid)
        self.server[name] = obj
        self._deliver("add", obj, watched)

    @rule(name=NAMES, watched=st.booleans())
    def modify(self, name: str, watched: bool) -> None:
        old = self.server.get(name)
        if old is None:
            return
        obj = make(name, self._next_rv(), int((old.metadata.uid or "x-0").split("-")[1]))
        self.server[name] = obj
        self._deliver("update", obj, watched)

    @rule(name=NAMES, watched=st.booleans())
    def remove(self, name: str, watched: bool) -> None:
        old = self.server.pop(name, None)
        if old is None:
            return
        final = make(name, self._next_rv(), int((old.metadata.uid or "x-0").split("-")[1]))
        self._deliver("delete", final, watched)

    @rule()
    def relist(self) -> None:
        self.fifo.replace(list(self.server.values()))
        self.synced_once = True
        self.missed = False

    @rule()
    def resync(self) -> None:
        self.informer._should_resync()
        self.fifo.resync()

    @rule(n=st.integers(min_value=1, max_value=5))
    def process_some(self, n: int) -> None:
        for _ in range(n):
            item = self.fifo.pop()
            if item is None:
                return
            self.informer._handle_deltas(*item)

    @rule(n=st.integers(min_value=1, max_value=5), which=st.integers(0, 1))
    def deliver_some(self, n: int, which: int) -> None:
        listener = self.listeners[which]
        for _ in range(n):
            item = listener._take()
            if item is None:
                return
            for note in item if isinstance(item, list) else [item]:
                listener._deliver(note)

    @precondition(lambda self: self.synced_once and not self.missed)
    @rule()
    def drain_and_compare(self) -> None:
        while (item := self.fifo.pop()) is not None:
            self.informer._handle_deltas(*item)
        cache = {k: v.metadata.resource_version for k, v in self.informer.indexer.items()}
        want = {ObjectKey("ns", n): o.metadata.resource_version for n, o in self.server.items()}
        assert cache == want
        for listener, checker in zip(self.listeners, self.checkers, strict=True):
            while (item := listener._take()) is not None:
                for note in item if isinstance(item, list) else [item]:
                    listener._deliver(note)
            view = {n: o.metadata.resource_version for n, o in checker.view.items()}
            assert view == {n: o.metadata.resource_version for n, o in self.server.items()}

    @invariant()
    def handlers_consistent(self) -> None:
        for checker in self.checkers:
            assert checker.problems == []


FifoIndexerMachine.TestCase.settings = settings(
    max_examples=300, stateful_step_count=40, deadline=None
)
TestFifoIndexer = FifoIndexerMachine.TestCase
