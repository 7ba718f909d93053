"""The structural types the informer machinery is written against.

The informers never import a concrete model: anything whose ``metadata`` has a name, a
namespace and a resourceVersion can be cached, and anything with ``list``/``watch`` methods of
the right shape (``kcm.client.Api[T]`` among them) can feed a reflector.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Protocol, TypeVar

__all__ = [
    "KubeObject",
    "ListMetaLike",
    "ListerWatcher",
    "ObjectListLike",
    "ObjectMetaLike",
    "WatchEventLike",
]

T_co = TypeVar("T_co", covariant=True)


class ObjectMetaLike(Protocol):
    """The parts of ``ObjectMeta`` the informers read."""

    @property
    def name(self) -> str | None: ...

    @property
    def namespace(self) -> str | None: ...

    @property
    def resource_version(self) -> str | None: ...

    @property
    def uid(self) -> str | None: ...

    @property
    def labels(self) -> Mapping[str, str] | None: ...

    @property
    def annotations(self) -> Mapping[str, str] | None: ...


class KubeObject(Protocol):
    """Any Kubernetes object: a frozen model, ``Unstructured`` or ``PartialObjectMetadata``."""

    @property
    def metadata(self) -> ObjectMetaLike: ...


class ListMetaLike(Protocol):
    """The parts of ``ListMeta`` the reflector reads."""

    @property
    def resource_version(self) -> str | None: ...

    @property
    def continue_(self) -> str | None: ...


class ObjectListLike(Protocol[T_co]):
    """One page of a LIST: ``ObjectList[T]``."""

    @property
    def metadata(self) -> ListMetaLike: ...

    @property
    def items(self) -> Sequence[T_co]: ...


class WatchEventLike(Protocol[T_co]):
    """One watch event: ``WatchEvent[T]`` (type ADDED, MODIFIED, DELETED or BOOKMARK)."""

    @property
    def type(self) -> str: ...

    @property
    def object(self) -> T_co: ...


class ListerWatcher(Protocol[T_co]):
    """What a reflector needs from the API: ``kcm.client.Api[T]`` satisfies it as is.

    ``list`` returns one page; ``watch`` is an async context manager yielding an async
    iterator of events. ERROR events and failures surface as :mod:`kcm.errors` exceptions
    (``ResourceExpired`` for 410, ``WatchDecodeError`` for a malformed line,
    ``TooManyRequests`` for 429, ``TransportError`` when the server cannot be reached).
    """

    async def list(
        self,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
    ) -> ObjectListLike[T_co]: ...

    def watch(
        self,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        allow_watch_bookmarks: bool = True,
        send_initial_events: bool | None = None,
    ) -> AbstractAsyncContextManager[AsyncIterator[WatchEventLike[T_co]]]: ...
