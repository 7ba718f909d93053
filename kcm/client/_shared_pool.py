"""One aiohttp connection pool per event loop and TLS setting, shared by every client using it.

A controller manager opens a client per controller (kcm's ~30, each with its own user agent,
rate limit and credentials) against one server. With a pool each, every controller opened and
TLS-handshook its own connections and let them idle separately; client-go shares one
transport between all clients with the same TLS settings (its ``tlsCache``), so
kube-controller-manager's controllers send over the same connections. Credentials and user
agents are request headers, so sharing the pool shares nothing else.

The pool is reference-counted: the first user creates it, the last :func:`release` closes it.
Its connection limit is the sum of its users' limits (0, no limit, if any user has none), so a
client that shares gets at least the connections it would have had alone, and the long watches
of one client never starve another's requests.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING

import anyio.lowlevel

if TYPE_CHECKING:
    import aiohttp

__all__ = ["PoolKey", "acquire", "release", "shared_sessions"]

PoolKey = tuple[Hashable, ...]
"""What makes two clients' connections interchangeable: the SSL context (contexts are cached by
their settings, so equal settings give the same object), the proxy, the TLS server name, the
keep-alive."""


class _Pool:
    __slots__ = ("limits", "session")

    def __init__(self, session: aiohttp.ClientSession) -> None:
        self.session = session
        self.limits: list[int] = []

    def set_limit(self) -> None:
        connector = self.session.connector
        if connector is not None:  # aiohttp reads the limit on every acquire (no public setter)
            connector._limit = 0 if 0 in self.limits else sum(self.limits)


_pools: weakref.WeakKeyDictionary[object, dict[PoolKey, _Pool]] = weakref.WeakKeyDictionary()


def _loop() -> object:
    """The running event loop (aiohttp sessions belong to one)."""
    return anyio.lowlevel.current_token().native_token


def acquire(
    key: PoolKey, limit: int, new_session: Callable[[], aiohttp.ClientSession]
) -> aiohttp.ClientSession:
    """The running loop's session for ``key`` (made with ``new_session`` by the first user),
    with ``limit`` more connections; pair every call with :func:`release`."""
    pools = _pools.setdefault(_loop(), {})
    pool = pools.get(key)
    if pool is None or pool.session.closed:
        pool = pools[key] = _Pool(new_session())
    pool.limits.append(limit)
    pool.set_limit()
    return pool.session


async def release(key: PoolKey, limit: int, session: aiohttp.ClientSession) -> None:
    """Give back what :func:`acquire` gave; the last user closes the session."""
    pools = _pools.get(_loop(), {})
    pool = pools.get(key)
    if pool is None or pool.session is not session:  # already closed and replaced
        if not session.closed:
            await session.close()
        return
    pool.limits.remove(limit)
    if pool.limits:
        pool.set_limit()
        return
    del pools[key]
    await session.close()


def shared_sessions() -> int:
    """How many shared sessions are open on the running loop (for tests)."""
    return len(_pools.get(_loop(), {}))
