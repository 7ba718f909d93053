"""MultiLock: hold two locks at once while migrating from one lock type to another (L3)."""

from __future__ import annotations

from typing import final

import msgspec

from kcm.errors import AlreadyExists, ConfigError, NotFound

from ._record import UNKNOWN_LEADER, LeaderElectionRecord
from ._resourcelock import ResourceLock

__all__ = ["MultiLock"]


@final
class MultiLock:
    """Two locks acting as one: the primary (old) decides, the secondary (new) follows.

    The migration path is client-go's: run one release with
    ``MultiLock(ConfigMapLock(...), LeaseLock(...))`` so old replicas (ConfigMap only) and new
    ones (both) exclude each other, then switch to the Lease alone.

    * ``get`` reads both; a missing secondary is fine while someone else holds the primary (an
      old replica); if the holders differ the record names :data:`UNKNOWN_LEADER`, so every
      candidate waits a full lease before taking both over.
    * ``create`` creates the primary (tolerating AlreadyExists), then the secondary.
    * ``update`` updates the primary (optimistic concurrency), then creates or updates the
      secondary from a fresh read.

    Raises:
        kcm.errors.ConfigError: the two locks have different identities.
    """

    def __init__(self, primary: ResourceLock, secondary: ResourceLock) -> None:
        if primary.identity != secondary.identity:
            raise ConfigError(
                f"MultiLock needs one identity, got {primary.identity!r} and"
                f" {secondary.identity!r}",
                field="identity",
            )
        self.primary = primary
        self.secondary = secondary

    @property
    def identity(self) -> str:
        return self.primary.identity

    def describe(self) -> str:
        return self.primary.describe()

    def record_event(self, message: str) -> None:
        self.primary.record_event(message)

    async def get(self) -> tuple[LeaderElectionRecord, bytes]:
        primary, primary_raw = await self.primary.get()
        try:
            secondary, secondary_raw = await self.secondary.get()
        except NotFound:
            if primary.holder_identity != self.identity:
                return primary, primary_raw  # held by an old replica that knows no secondary
            raise
        if primary.holder_identity != secondary.holder_identity:
            primary = msgspec.structs.replace(primary, holder_identity=UNKNOWN_LEADER)
            primary_raw = msgspec.json.encode(primary)
        return primary, primary_raw + b"," + secondary_raw

    async def create(self, record: LeaderElectionRecord) -> None:
        try:
            await self.primary.create(record)
        except AlreadyExists:
            pass
        await self.secondary.create(record)

    async def update(self, record: LeaderElectionRecord) -> None:
        await self.primary.update(record)
        try:
            await self.secondary.get()
        except NotFound:
            await self.secondary.create(record)
            return
        await self.secondary.update(record)
