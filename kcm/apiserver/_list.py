"""LIST's consistency and paging: which snapshot a list reads, and one page of it.

``resourceVersion`` unset or "0" reads the latest state; N with ``resourceVersionMatch=Exact``
(or with a ``limit``) reads the state at N from the history; a ``continue`` token carries the
snapshot's RV and the last key of the previous page, so every page comes from one snapshot.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ._registry import Resource
from ._status import StatusError
from ._store import HistoryExpired, Obj, OKey, Store

__all__ = ["ListPage", "ListSource", "list_source", "page"]


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


def list_source(store: Store, res: Resource, query: dict[str, str]) -> ListSource:
    """The snapshot ``query`` asks for (``resourceVersion``, ``resourceVersionMatch``,
    ``continue``, ``limit``).

    Raises:
        StatusError: 400 for a bad parameter or token, 422 for ``resourceVersionMatch``
            without ``resourceVersion``, 504 for a future RV, 410 for an RV or token older
            than the history.
    """
    limit = _int_param(query, "limit")
    rv_param = query.get("resourceVersion", "")
    match = query.get("resourceVersionMatch", "")
    cont = query.get("continue", "")
    if match and not rv_param:
        raise StatusError.invalid(
            "meta.k8s.io",
            "ListOptions",
            "",
            [
                {
                    "reason": "FieldValueForbidden",
                    "message": "Forbidden: resourceVersionMatch is forbidden unless "
                    "resourceVersion is provided",
                    "field": "resourceVersionMatch",
                }
            ],
        )
    if cont:
        at, start = _decode_continue(cont)
        return ListSource(at, _snapshot(store, res, at, continuing=True), start, limit)
    if rv_param not in ("", "0"):
        try:
            at = int(rv_param)
        except ValueError as exc:
            raise StatusError.bad_request(f"invalid resource version: {rv_param}") from exc
        if at > store.rv:
            raise _too_large(at, store.rv)
        if match == "Exact" or (not match and limit):
            return ListSource(at, _snapshot(store, res, at, continuing=False), None, limit)
    return ListSource(store.rv, store.objects.get(res.storage_key, {}), None, limit)


def page(
    source: ListSource,
    ns: str | None,
    matcher: Callable[[Obj], bool] | None,
    present: Callable[[Obj], Obj],
) -> ListPage:
    """The next page of ``source``: objects in ``ns`` (None: all) that ``matcher`` accepts,
    in key order, each as ``present`` serves it."""
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
        found.continue_token = _encode_continue(source.rv, next_key)
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
        raise StatusError.gone(str(exc)) from exc


def _int_param(query: dict[str, str], name: str) -> int:
    raw = query.get(name, "")
    if not raw:
        return 0
    try:
        return max(0, int(raw))
    except ValueError as exc:
        raise StatusError.bad_request(f"invalid {name}: {raw!r}") from exc


def _encode_continue(rv: int, key: OKey) -> str:
    token = msgspec.json.encode({"v": "meta.k8s.io/v1", "rv": rv, "start": list(key)})
    return base64.urlsafe_b64encode(token).decode()


def _decode_continue(token: str) -> tuple[int, OKey]:
    try:
        data: Any = json.loads(base64.urlsafe_b64decode(token.encode()))
        return int(data["rv"]), (str(data["start"][0]), str(data["start"][1]))
    except (ValueError, KeyError, IndexError, TypeError, binascii.Error) as exc:
        raise StatusError.bad_request(f"continue key is not valid: {exc}") from exc


def _too_large(requested: int, current: int) -> StatusError:
    return StatusError(
        504,
        "Timeout",
        f"Too large resource version: {requested}, current: {current}",
        details={
            "causes": [
                {
                    "reason": "ResourceVersionTooLarge",
                    "message": f"Too large resource version: {requested}, current: {current}",
                }
            ],
            "retryAfterSeconds": 1,
        },
    )
