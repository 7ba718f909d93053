"""The seam between the elector and the object that stores the election record."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ._record import LeaderElectionRecord

__all__ = ["ResourceLock"]


@runtime_checkable
class ResourceLock(Protocol):
    """Stores one :class:`LeaderElectionRecord` with optimistic concurrency.

    A lock caches the object it last read or wrote; :meth:`update` sends the new record with
    that object's ``resourceVersion``, so a write made by anyone else in between makes it fail
    with :class:`kcm.errors.Conflict` instead of overwriting (L4).

    Errors: any :class:`Exception` from a method is a failed attempt; the elector logs it and
    tries again later, so implementations need not retry themselves.
    """

    @property
    def identity(self) -> str:
        """The identity this process writes as ``holderIdentity``."""
        ...

    async def get(self) -> tuple[LeaderElectionRecord, bytes]:
        """Read the record and remember the object's version.

        Returns:
            The record and its raw form; the elector compares raw forms to notice changes.

        Raises:
            kcm.errors.NotFound: the lock object does not exist yet.
        """
        ...

    async def create(self, record: LeaderElectionRecord) -> None:
        """Create the lock object holding ``record``.

        Raises:
            kcm.errors.AlreadyExists: someone else created it first.
        """
        ...

    async def update(self, record: LeaderElectionRecord) -> None:
        """Replace the record, conditional on the version last read or written.

        Raises:
            kcm.errors.Conflict: the object changed since this lock last saw it.
            RuntimeError: neither :meth:`get` nor :meth:`create` has succeeded yet.
        """
        ...

    def record_event(self, message: str) -> None:
        """Report a leadership change (``"<identity> became leader"``); may do nothing."""
        ...

    def describe(self) -> str:
        """A name for logs and metrics, e.g. ``"kube-system/kube-controller-manager"``."""
        ...
