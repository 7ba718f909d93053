"""The informer against the embedded API server under faults, as a Hypothesis state machine.

Random creates, updates and deletes interleave with the server's faults: closed watches,
compacted history, 429/500 bursts and restarts. After each run the faults stop and, once the
system is quiet, the informer's cache must equal the server's state exactly, and every
handler must have seen a consistent sequence per object (no update before add, nothing after
a delete unless re-created, deletes carry the final state or the last known one as a
tombstone) whose end state is the server's state.

The server, client and informer run in an event loop thread (an anyio blocking portal); the
rules call into it.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import msgspec
import pytest
from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.errors import AlreadyExists, InternalError, NotFound, TooManyRequests, TransportError
from kcm.informers import Backoff, SharedIndexInformer
from kcm.models.core_v1 import ConfigMap
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import client_config_for

NAMES = st.sampled_from([f"cm{i}" for i in range(6)])
INFORMER_AGENT = "kcm-informer-under-test"
EXAMPLES = int(os.environ.get("KCM_INFORMER_EXAMPLES", "40"))
"""Examples per run; raise it for a soak (the report quotes a 300-example run)."""
BACKEND = os.environ.get("KCM_INFORMER_BACKEND", "asyncio")
"""The event loop the server, client and informer run on (``asyncio`` or ``trio``)."""
STEPS = 15


class Checker:
    """A handler that records problems instead of raising (handler errors are swallowed)."""

    def __init__(self, *, coalescing: bool = False) -> None:
        self.coalescing = coalescing
        self.view: dict[str, ConfigMap] = {}
        self.problems: list[str] = []
        self.events = 0

    def on_add(self, obj: ConfigMap, *, is_in_initial_list: bool) -> None:
        self.events += 1
        name = obj.metadata.name or ""
        if name in self.view:
            self.problems.append(f"second add of {name} without a delete")
        self.view[name] = obj

    def on_update(self, old: ConfigMap, new: ConfigMap) -> None:
        self.events += 1
        name = new.metadata.name or ""
        if name not in self.view:
            self.problems.append(f"update before add: {name}")
        elif self.view[name].metadata.resource_version != old.metadata.resource_version:
            # Not identity: a relist that found an object unchanged replaces the cached
            # instance with an equal one without notifying (it is not a change).
            self.problems.append(
                f"update of {name}: old has RV {old.metadata.resource_version}, the last state "
                f"delivered has {self.view[name].metadata.resource_version}"
            )
        self.view[name] = new

    def on_delete(self, obj: ConfigMap, *, final_state_unknown: bool) -> None:
        self.events += 1
        name = obj.metadata.name or ""
        last = self.view.pop(name, None)
        if last is None:
            self.problems.append(f"delete of {name} never added (or already deleted)")
        elif int(obj.metadata.resource_version or 0) < int(last.metadata.resource_version or 0):
            # Final state or tombstone (the last state the cache knew, which a coalescing
            # handler may not have been shown): never older than what the handler saw.
            self.problems.append(f"delete of {name} carries an older state than delivered")
        elif (
            final_state_unknown
            and not self.coalescing
            and (obj.metadata.resource_version != last.metadata.resource_version)
        ):
            self.problems.append(f"tombstone of {name} is not the last state delivered")


async def retrying(op: Callable[[], Awaitable[Any]]) -> Any:
    """A write by the test itself: injected faults hit it too, so retry them."""
    with anyio.fail_after(20):
        while True:
            try:
                return await op()
            except (InternalError, TooManyRequests, TransportError):
                await anyio.sleep(0.005)


class InformerUnderFaults(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self._portal_cm = start_blocking_portal(BACKEND)
        self.portal = self._portal_cm.__enter__()
        self._server_cm = self.portal.wrap_async_context_manager(ApiServer())
        self.server = self._server_cm.__enter__()
        config = msgspec.structs.replace(client_config_for(self.server), qps=10_000.0, burst=10_000)
        self._client_cm = self.portal.wrap_async_context_manager(ApiClient(config))
        self.client = self._client_cm.__enter__()
        self.api = self.client.api(ConfigMap, "default")
        # The informer has its own client (user agent) so that it alone can be partitioned.
        self._informer_client_cm = self.portal.wrap_async_context_manager(
            ApiClient(msgspec.structs.replace(config, user_agent=INFORMER_AGENT))
        )
        self.informer_client = self._informer_client_cm.__enter__()
        self.checkers = [Checker(), Checker(coalescing=True)]
        self.errors: list[Exception] = []
        self.informer: SharedIndexInformer[ConfigMap] | None = None
        self._future: Any = None
        self.faults = 0

    @initialize(watch_list=st.booleans(), coalesce=st.booleans())
    def start(self, watch_list: bool, coalesce: bool) -> None:
        self.informer = SharedIndexInformer(
            self.informer_client.api(ConfigMap, "default"),
            watch_list=watch_list,
            backoff=Backoff(initial=0.005, cap=0.05),
            watch_error_handler=self.errors.append,
        )
        self.informer.add_event_handler(self.checkers[0])
        self.informer.add_event_handler(self.checkers[1], coalesce=coalesce)
        self._future, _ = self.portal.start_task(self.informer.run)

    # -- writes ----------------------------------------------------------------------------

    @rule(name=NAMES)
    def create(self, name: str) -> None:
        async def op() -> None:
            try:
                await self.api.create(ConfigMap(metadata=ObjectMeta(name=name), data={"v": "0"}))
            except AlreadyExists:
                pass

        self.portal.call(retrying, op)

    @rule(name=NAMES, value=st.integers(0, 1000))
    def update(self, name: str, value: int) -> None:
        async def op() -> None:
            try:
                await self.api.patch(name, {"data": {"v": str(value)}})
            except NotFound:
                pass

        self.portal.call(retrying, op)

    @rule(name=NAMES)
    def delete(self, name: str) -> None:
        async def op() -> None:
            try:
                await self.api.delete(name)
            except NotFound:
                pass

        self.portal.call(retrying, op)

    # -- faults ----------------------------------------------------------------------------

    @rule()
    def close_watches(self) -> None:
        self.faults += 1
        self.portal.call(self.server.faults.close_watches)

    @rule()
    def compact(self) -> None:
        self.faults += 1
        self.portal.call(self.server.faults.compact)

    @rule(n=st.integers(1, 4), code=st.sampled_from([429, 500]))
    def error_burst(self, n: int, code: int) -> None:
        self.faults += 1
        self.portal.call(lambda: self.server.faults.fail_next(n, code=code, retry_after=0))

    @rule()
    def partition_informer(self) -> None:
        """The informer's requests and watch events are held: it misses what follows."""
        self.faults += 1
        self.portal.call(self.server.faults.partition, INFORMER_AGENT)

    @rule(
        writes=st.lists(
            st.tuples(st.sampled_from(["create", "update", "delete"]), NAMES),
            min_size=1,
            max_size=4,
        ),
        restart=st.booleans(),
    )
    def miss_events_then_compact(self, writes: list[tuple[str, str]], restart: bool) -> None:
        """The informer misses writes, then the history is compacted (or the server restarts)
        before it reconnects: its next watch gets 410 and it must relist."""
        self.faults += 1
        self.portal.call(self.server.faults.partition, INFORMER_AGENT)
        for op, name in writes:
            getattr(self, op)(name) if op != "update" else self.update(name, len(writes))
        if restart:
            self.portal.call(self.server.restart)
        else:
            self.portal.call(self.server.faults.compact)
            self.portal.call(self.server.faults.close_watches)
        self.portal.call(self.server.faults.heal)

    @rule()
    def heal(self) -> None:
        self.portal.call(self.server.faults.heal)

    @rule()
    def restart(self) -> None:
        self.faults += 1
        self.portal.call(self.server.restart)

    @rule()
    def let_it_run(self) -> None:
        self.portal.call(anyio.sleep, 0.02)

    @invariant()
    def handlers_consistent(self) -> None:
        for checker in self.checkers:
            assert checker.problems == []

    # -- the end ---------------------------------------------------------------------------

    async def _quiesce(self) -> None:
        assert self.informer is not None
        self.server.faults.fail_next(0)
        self.server.faults.heal()
        listed = await retrying(self.api.list)
        want = {o.metadata.name: o.metadata.resource_version for o in listed.items}
        informer = self.informer

        def states() -> list[dict[str | None, str | None]]:
            cache = {o.metadata.name: o.metadata.resource_version for o in informer.indexer.list()}
            views = [
                {n: o.metadata.resource_version for n, o in c.view.items()} for c in self.checkers
            ]
            return [cache, *views]

        with anyio.move_on_after(15):
            while any(s != want for s in states()):  # noqa: ASYNC110 (polls informer state)
                await anyio.sleep(0.01)
        got = states()
        assert got[0] == want, "the cache differs from the server after quiescence"
        assert got[1] == want, "the handler's view differs from the server"
        assert got[2] == want, "the second handler's view differs from the server"

    def teardown(self) -> None:
        try:
            if self.informer is not None:
                self.portal.call(self._quiesce)
                for checker in self.checkers:
                    assert checker.problems == []
        finally:
            if self._future is not None:
                self._future.cancel()
            self._informer_client_cm.__exit__(None, None, None)
            self._client_cm.__exit__(None, None, None)
            self._server_cm.__exit__(None, None, None)
            # Cancel whatever is left (nothing should be) rather than wait for it.
            self.portal.call(self.portal.stop, True)
            self._portal_cm.__exit__(None, None, None)


InformerUnderFaults.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=STEPS,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.mark.slow
class TestInformerUnderFaults(InformerUnderFaults.TestCase):  # type: ignore[name-defined,misc]
    pass
