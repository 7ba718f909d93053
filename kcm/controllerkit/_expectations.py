"""Expectations: remember the creates and deletes a controller issued until its cache sees them.

client-go's ``ControllerExpectations`` (§0). A controller that creates N pods
and syncs again before its informer has delivered them would see too few pods and create
them again. So before issuing writes it records "expect N adds / M deletes" for the owner's
key; informer events lower the counts; while any are outstanding the owner is not managed
(only its status is written). A record expires after ``ttl`` seconds (5 minutes) so a lost
event cannot wedge an owner for ever.

Synchronous and cheap: handlers call ``*_observed`` on the informer's notification path.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from cachetools import TTLCache

from kcm.clock import SYSTEM_CLOCK, Clock

__all__ = [
    "EXPECTATIONS_TIMEOUT",
    "ControllerExpectations",
    "UIDTrackingControllerExpectations",
]

logger = logging.getLogger(__name__)

EXPECTATIONS_TIMEOUT = 300.0
"""client-go's ``ExpectationsTimeout``: 5 minutes."""


@dataclass(slots=True)
class _Record:
    add: int
    delete: int

    @property
    def fulfilled(self) -> bool:
        return self.add <= 0 and self.delete <= 0


class _Expectations:
    """The counting core shared by both public classes (they differ in how deletes are
    expected and observed)."""

    def __init__(self, *, clock: Clock = SYSTEM_CLOCK, ttl: float = EXPECTATIONS_TIMEOUT) -> None:
        if ttl <= 0:
            raise ValueError(f"ttl must be > 0, got {ttl}")
        self._clock = clock
        self.ttl = ttl
        self._records: TTLCache[Hashable, _Record] = TTLCache(
            maxsize=math.inf, ttl=ttl, timer=clock.monotonic
        )

    def get(self, key: Hashable) -> tuple[int, int] | None:
        """The outstanding ``(adds, deletes)`` for ``key``, or None (no record, or expired)."""
        record = self._records.get(key)
        return None if record is None else (record.add, record.delete)

    def satisfied(self, key: Hashable) -> bool:
        """Whether the controller may act on ``key``: every expected create and delete was
        observed, the record expired, or there is none (a new owner, or a restart)."""
        record = self._records.get(key)
        return record is None or record.fulfilled

    def _set(self, key: Hashable, add: int, delete: int) -> None:
        self._records[key] = _Record(add, delete)  # a fresh record: the TTL starts now

    def expect_creations(self, key: Hashable, n: int) -> None:
        """Expect ``n`` creates for ``key`` (replaces any record and restarts its TTL)."""
        self._set(key, n, 0)

    def raise_expectations(self, key: Hashable, add: int, delete: int) -> None:
        """Add to the outstanding counts of an existing record (no record: no-op)."""
        record = self._records.get(key)
        if record is not None:
            record.add += add
            record.delete += delete

    def lower_expectations(self, key: Hashable, add: int, delete: int) -> None:
        """Subtract from the outstanding counts (creates that were skipped or failed, ...)."""
        self.raise_expectations(key, -add, -delete)

    def creation_observed(self, key: Hashable) -> None:
        """One expected create was seen (informer add) or failed."""
        self.lower_expectations(key, 1, 0)

    def delete_expectations(self, key: Hashable) -> None:
        """Forget ``key`` (its owner was deleted)."""
        self._records.pop(key, None)


class ControllerExpectations(_Expectations):
    """Outstanding creates/deletes per controller key, each record expiring after ``ttl``.

    Args:
        clock: the clock the TTL runs on (``cachetools.TTLCache(timer=clock.monotonic)``).
        ttl: seconds after :meth:`expect_creations`/:meth:`expect_deletions` set a record
            until it expires (then it counts as satisfied); raising or lowering the counts
            does not extend it.

    Keys are any hashable (usually ``ObjectKey``). Not thread-safe; use it from one event loop.

    Example::

        if expectations.satisfied(key):
            expectations.expect_creations(key, 3)
            ...  # create 3 pods; lower_expectations(key, failed, 0) for each that failed
        # in the pod informer's add handler:
        expectations.creation_observed(owner_key)
    """

    def expect_deletions(self, key: Hashable, n: int) -> None:
        """Expect ``n`` deletes for ``key`` (replaces any record and restarts its TTL)."""
        self._set(key, 0, n)

    def deletion_observed(self, key: Hashable) -> None:
        """One expected delete was seen (informer delete) or failed."""
        self.lower_expectations(key, 0, 1)


class UIDTrackingControllerExpectations(_Expectations):
    """Like :class:`ControllerExpectations`, but remembering *which* children are expected to
    be deleted, so a delete event counts once and only for a child this owner deleted
    (a graceful delete shows up as an update with a deletionTimestamp and later as a
    delete; both report the same child key).

    Args and keys as :class:`ControllerExpectations`; child keys are any hashable (usually
    the pod's ``ObjectKey``).
    """

    def __init__(self, *, clock: Clock = SYSTEM_CLOCK, ttl: float = EXPECTATIONS_TIMEOUT) -> None:
        super().__init__(clock=clock, ttl=ttl)
        self._uids: TTLCache[Hashable, set[Hashable]] = TTLCache(
            maxsize=math.inf, ttl=ttl, timer=clock.monotonic
        )

    def expected_deletions(self, key: Hashable) -> frozenset[Hashable]:
        """The child keys still expected to be deleted for ``key`` (client-go ``GetUIDs``)."""
        return frozenset(self._uids.get(key, ()))

    def expect_deletions(self, key: Hashable, child_keys: Iterable[Hashable]) -> None:
        """Expect the deletion of exactly these children of ``key`` (replaces any record)."""
        keys = set(child_keys)
        stale = self._uids.get(key)
        if stale:
            logger.warning(
                "expectations for %s: clobbering %d delete expectations not yet observed",
                key,
                len(stale),
            )
        self._uids[key] = keys
        self._set(key, 0, len(keys))

    def deletion_observed(self, key: Hashable, child_key: Hashable) -> None:
        """``child_key`` was deleted (or its delete failed); counts only if it was expected."""
        keys = self._uids.get(key)
        if keys is not None and child_key in keys:
            keys.discard(child_key)
            self.lower_expectations(key, 0, 1)

    def delete_expectations(self, key: Hashable) -> None:
        """Forget ``key`` and its expected child deletions."""
        self._uids.pop(key, None)
        super().delete_expectations(key)
