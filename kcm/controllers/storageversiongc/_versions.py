"""What the storage version garbage collector decides for one StorageVersion: which API
servers' entries stay, and the common encoding version and its condition after a removal."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import msgspec

from kcm.models.internal_v1alpha1 import (
    ServerStorageVersion,
    StorageVersion,
    StorageVersionCondition,
    StorageVersionStatus,
)

__all__ = ["ALL_ENCODING_VERSIONS_EQUAL", "live_entries", "with_entries"]

ALL_ENCODING_VERSIONS_EQUAL = "AllEncodingVersionsEqual"


def live_entries(
    version: StorageVersion, is_live: Callable[[str], bool]
) -> list[ServerStorageVersion] | None:
    """The entries of API servers that are alive (``is_live(apiServerID)``), or None if all
    are (nothing to do)."""
    entries = list((version.status.storage_versions if version.status else None) or ())
    kept = [e for e in entries if is_live(e.api_server_id or "")]
    return None if len(kept) == len(entries) else kept


def with_entries(
    version: StorageVersion, entries: list[ServerStorageVersion], now: datetime
) -> StorageVersion:
    """``version`` keeping only ``entries``, with kube's ``SetCommonEncodingVersion``: the
    encoding version all entries agree on (else none) and the ``AllEncodingVersionsEqual``
    condition saying so (its transition time moves only when its status changes)."""
    encodings = {e.encoding_version for e in entries}
    common = next(iter(encodings)) if len(encodings) == 1 else None
    status = version.status or StorageVersionStatus()
    condition = StorageVersionCondition(
        type=ALL_ENCODING_VERSIONS_EQUAL,
        status="True" if common is not None else "False",
        observed_generation=version.metadata.generation,
        last_transition_time=now,
        reason="CommonEncodingVersionSet" if common is not None else "CommonEncodingVersionUnset",
        message="Common encoding version set"
        if common is not None
        else "Common encoding version unset",
    )
    conditions = list(status.conditions or ())
    for i, existing in enumerate(conditions):
        if existing.type == ALL_ENCODING_VERSIONS_EQUAL:
            if existing.status == condition.status:
                condition = msgspec.structs.replace(
                    condition, last_transition_time=existing.last_transition_time
                )
            conditions[i] = condition
            break
    else:
        conditions.append(condition)
    return msgspec.structs.replace(
        version,
        status=msgspec.structs.replace(
            status,
            storage_versions=entries,
            common_encoding_version=common,
            conditions=conditions,
        ),
    )
