"""The leader-election record every lock stores, and the default holder identity."""

from __future__ import annotations

import socket
import uuid
from datetime import UTC, datetime

import msgspec

__all__ = ["UNKNOWN_LEADER", "LeaderElectionRecord", "default_identity"]

UNKNOWN_LEADER = "leaderelection.k8s.io/unknown"
"""Holder reported by :class:`MultiLock` when its two locks name different holders."""


class LeaderElectionRecord(msgspec.Struct, kw_only=True, frozen=True, rename="camel"):
    """Who holds the lock, for how long, and since when (client-go's ``LeaderElectionRecord``).

    Attributes:
        holder_identity: the holder's identity; ``""`` means nobody (a released lock).
        lease_duration_seconds: how long candidates must wait, after they *observe* this
            record, before they may take the lock over.
        acquire_time: when the current holder acquired the lock (informational).
        renew_time: when the holder last renewed (informational: expiry is never judged from
            timestamps written by another machine's clock).
        leader_transitions: how many times the lock changed hands.
    """

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: datetime | None = None
    renew_time: datetime | None = None
    leader_transitions: int = 0


def default_identity() -> str:
    """``<hostname>_<uuid4>``, as kube-controller-manager builds it: unique per process."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def utc(value: datetime) -> datetime:
    """``value`` as an aware UTC datetime (naive values are taken to be UTC)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)
