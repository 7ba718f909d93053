"""LIST's consistency and paging: which snapshot a list reads, and one page of it.

As kube-apiserver 1.24 decides between its watch cache and etcd: ``resourceVersion="0"``, or
N without ``limit`` (``NotOlderThan``), is served from the cache, fresh enough for N (504
``Too large resource version`` with Retry-After when N is ahead of the server), whole: the
cache cannot page, so ``limit`` is ignored. ``resourceVersion`` unset reads the latest state;
``Exact`` (or N with a ``limit``) reads the state at N from the history (500, as etcd, for a
future N; 410 when N left the history); a ``continue`` token carries the snapshot's RV and the
last key of the previous page, so every page comes from one snapshot.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ._continue import decode_continue, encode_continue
from ._options import ListOptions
from ._registry import Resource
from ._status import StatusError
from ._store import HistoryExpired, Obj, OKey, Store

__all__ = [
    "ListPage",
    "ListSource",
    "cache_read",
    "list_source",
    "page",
    "parse_resource_version",
]

_UINT64_MAX = 2**64 - 1
_TOO_LARGE_RETRY_SECONDS = 1


@dataclass(frozen=True, slots=True)
class ListSource:
    """The objects a list reads: a snapshot as of ``rv``, after ``start``, ``limit`` a page."""

    rv: int
    objects: dict[OKey, Obj]
    start: OKey | None = None
    limit: int = 0


@dataclass(slots=True)
class ListPage:
    """One page: its items, the token for the next page ("" at the end) and how many remain."""

    items: list[Obj] = field(default_factory=list)
    continue_token: str = ""
    remaining: int = 0


def list_source(store: Store, res: Resource, ns: str | None, options: ListOptions) -> ListSource:
    """The snapshot ``options`` ask for (``resourceVersion``, ``resourceVersionMatch``,
    ``continue``, ``limit``); ``ns`` is the request's namespace (None: across them).

    Raises:
        StatusError: 400 for a bad resourceVersion or token, or a token with a
            resourceVersion; 500 (no reason) for a resourceVersion that is not a number (cache)
            or an exact one in the future; 504 for a future one otherwise; 410 for a
            resourceVersion or token older than the history.
    """
    rv_param = options.resource_version
    limit = max(0, options.limit)
    objects = store.objects.get(res.storage_key, {})
    if not _from_storage(options):
        cache_read(store, rv_param)
        return ListSource(store.rv, objects)
    at = _storage_rv(rv_param) if rv_param else 0
    if options.continue_token:
        token_rv, start = decode_continue(options.continue_token, ns)
        if rv_param not in ("", "0"):
            raise StatusError.bad_request(
                "specifying resource version is not allowed when using continue"
            )
        return ListSource(token_rv, _snapshot(store, res, token_rv, continuing=True), start, limit)
    match = options.resource_version_match
    if match == "Exact" or (not match and limit and at > 0):
        if at > store.rv:
            raise StatusError.internal("etcdserver: mvcc: required revision is a future revision")
        return ListSource(at, _snapshot(store, res, at, continuing=False), None, limit)
    if at > store.rv:  # etcd's answer is older than the minimum asked for
        raise _too_large(at, store.rv, retry=0)
    return ListSource(store.rv, objects, None, limit)


def cache_read(store: Store, rv_param: str) -> None:
    """What a read served by the watch cache checks of ``resourceVersion`` (GET with one,
    LIST with ``0`` or N): a number (else a 500, as ``ParseResourceVersion``'s error reaches
    the client unconverted) the server has reached (else 504 after the cache's wait; kcm
    answers at once).

    Raises:
        StatusError: 500 or 504 as above.
    """
    if rv_param in ("", "0"):
        return
    requested = parse_resource_version(rv_param)
    if requested > store.rv:
        raise _too_large(requested, store.rv, retry=_TOO_LARGE_RETRY_SECONDS)


def parse_resource_version(rv_param: str) -> int:
    """The watch cache's ``ParseResourceVersion`` (GET, LIST from the cache, WATCH).

    Raises:
        StatusError: 500 without a reason, ``resourceVersion: Invalid value: "abc": ...``
            (a storage error kube-apiserver does not convert).
    """
    requested = _parse_rv(rv_param)
    if requested is None:
        raise StatusError.internal(_invalid_rv_message(rv_param))
    return requested


def _from_storage(options: ListOptions) -> bool:
    """Whether kube-apiserver sends this list to etcd rather than its watch cache
    (``shouldDelegateList``)."""
    rv = options.resource_version
    return (
        rv == ""
        or bool(options.continue_token)
        or (options.limit > 0 and rv != "0")
        or options.resource_version_match == "Exact"
    )


def _storage_rv(rv_param: str) -> int:
    """The resourceVersion of a list etcd serves; 400 when it is not a number."""
    requested = _parse_rv(rv_param)
    if requested is None:
        raise StatusError.bad_request(f"invalid resource version: {_invalid_rv_message(rv_param)}")
    return requested


def _parse_rv(rv_param: str) -> int | None:
    """``strconv.ParseUint(rv, 10, 64)``: None when it fails."""
    if not rv_param.isascii() or not rv_param.isdigit() or int(rv_param) > _UINT64_MAX:
        return None
    return int(rv_param)


def _invalid_rv_message(rv_param: str) -> str:
    """The text of ``ParseResourceVersion``'s error (a ``field.Invalid`` on resourceVersion)."""
    digits = rv_param.isascii() and rv_param.isdigit()
    reason = "value out of range" if digits else "invalid syntax"
    quoted = json.dumps(rv_param, ensure_ascii=False)
    return (
        f"resourceVersion: Invalid value: {quoted}: strconv.ParseUint: parsing {quoted}: {reason}"
    )


def page(
    source: ListSource,
    ns: str | None,
    matcher: Callable[[Obj], bool] | None,
    present: Callable[[Obj], Obj],
    *,
    across_namespaces: bool = False,
) -> ListPage:
    """The next page of ``source``: objects in ``ns`` (None: all) that ``matcher`` accepts,
    in key order, each as ``present`` serves it (``across_namespaces``: the continue token
    names keys with their namespace)."""
    found = ListPage()
    next_key: OKey | None = None
    for key in sorted(source.objects):
        if source.start is not None and key <= source.start:
            continue
        if ns is not None and key[0] != ns:
            continue
        obj = source.objects[key]
        if matcher is not None and not matcher(obj):
            continue
        if source.limit and len(found.items) >= source.limit:
            if next_key is None:
                last = found.items[-1]["metadata"]
                next_key = (last.get("namespace", ""), last["name"])
            found.remaining += 1
            continue
        found.items.append(present(obj))
    if next_key is not None:
        found.continue_token = encode_continue(
            source.rv, next_key, across_namespaces=across_namespaces
        )
    return found


def _snapshot(store: Store, res: Resource, at: int, *, continuing: bool) -> dict[OKey, Obj]:
    try:
        return store.snapshot(res.storage_key, at)
    except HistoryExpired as exc:
        if continuing:
            raise StatusError.gone(
                "The provided continue parameter is too old to display a consistent list "
                "result. You can start a new list without the continue parameter, or use "
                "the continue token in this response to retrieve the remainder of the "
                "results. Continuing with the provided token results in an inconsistent "
                "list - objects that were created, modified, or deleted between the time "
                "the first chunk was returned and now may show up in the list."
            ) from exc
        raise StatusError.gone("The resourceVersion for the provided list is too old.") from exc


def _too_large(requested: int, current: int, *, retry: int) -> StatusError:
    """``storage.NewTooLargeResourceVersionError``: a Timeout (with Retry-After when ``retry``)."""
    details: dict[str, Any] = {
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]
    }
    if retry:
        details["retryAfterSeconds"] = retry
    return StatusError(
        504,
        "Timeout",
        f"Timeout: Too large resource version: {requested}, current: {current}",
        details=details,
    )
