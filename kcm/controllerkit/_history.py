"""ControllerRevision history: immutable snapshots of a controller's template, by hash.

Kubernetes' ``pkg/controller/history``, which the DaemonSet and StatefulSet controllers keep
their rollout history with. A revision is a ``ControllerRevision`` owned by its parent (a
controller reference), named ``<parent>-<hash>``, labelled with the hash, holding the template
(``data``) and a revision number. The pure helpers build, hash, sort and compare revisions;
:class:`History` reads them from an informer's lister and writes them through the client.

The hash is byte-for-byte Go's ``HashControllerRevision``: FNV-32 (FNV-1, not FNV-1a) over
the raw JSON bytes of ``data``, then the collision count (the *probe*) as decimal text, the
32-bit sum written in decimal and then through ``SafeEncodeString``. The raw bytes are
``data`` itself when it is a ``msgspec.Raw`` (Go's ``Data.Raw``); otherwise what Go's
``json.Marshal`` writes for the same JSON value: compact, object keys sorted, ``<``, ``>``, ``&``,
U+2028 and U+2029 escaped, numbers as float64. That is how Go's controllers write ``data``, so
a revision read back from the API server hashes as Go hashed it.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, final

import msgspec

from kcm.client import ApiClient, PatchType
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.errors import AlreadyExists, AlreadyOwnedError, Conflict, Invalid, NotFound
from kcm.informers import Lister
from kcm.models import ResourceInfo
from kcm.models.apps_v1 import ControllerRevision
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import HasMetadata, get_controller_of, new_controller_ref
from kcm.selectors import LabelSelector

from ._safe_encoding import safe_encode_string

__all__ = [
    "CONTROLLER_REVISION_HASH_LABEL",
    "History",
    "controller_revision_name",
    "equal_revision",
    "find_equal_revisions",
    "hash_controller_revision",
    "new_controller_revision",
    "sort_controller_revisions",
]

logger = logging.getLogger(__name__)

CONTROLLER_REVISION_HASH_LABEL = "controller.kubernetes.io/hash"
"""The label holding the hash of a ControllerRevision's data (``ControllerRevisionHashLabel``)."""

_MAX_PREFIX = 223  # 253 (a name's limit) less room for "-" and the hash
_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193
_CONFLICT_RETRY_DELAYS = (0.01, 0.05, 0.25)
"""client-go's ``retry.DefaultBackoff`` (4 tries, 10 ms x 5 each time), without its jitter."""
_INT32 = re.compile(r"[+-]?[0-9]+")
_ZERO_TIME = datetime.min.replace(tzinfo=UTC)


# -- names and hashes -------------------------------------------------------------------------


def controller_revision_name(prefix: str, hash: str) -> str:
    """``<prefix>-<hash>``, the prefix cut to 223 characters so the name fits in 253
    (``ControllerRevisionName``)."""
    return f"{prefix[:_MAX_PREFIX]}-{hash}"


def hash_controller_revision(revision: ControllerRevision, probe: int | None = None) -> str:
    """The hash of ``revision.data`` with the collision count ``probe``
    (``HashControllerRevision``).

    FNV-32 over the data's raw JSON bytes (none when ``data`` is None) and, when ``probe`` is
    not None, its decimal text; the sum as decimal text through ``SafeEncodeString``. Equal to
    Go's for the same raw bytes (see the module docstring for how ``data`` becomes bytes).

    Raises:
        ValueError: ``data`` holds a value JSON cannot carry (NaN, infinity).
        TypeError: ``data`` holds something that is not JSON (bytes, a datetime...).
    """
    digest = _fnv32(_raw_data(revision.data))
    if probe is not None:
        digest = _fnv32(str(probe).encode(), digest)
    return safe_encode_string(str(digest))


def new_controller_revision(
    parent: HasMetadata,
    parent_kind: ResourceInfo,
    template_labels: Mapping[str, str] | None,
    data: Any,
    revision: int,
    collision_count: int | None,
) -> ControllerRevision:
    """A revision of ``parent`` holding ``data`` (``NewControllerRevision``), not yet created.

    Args:
        parent: the owner (a DaemonSet, StatefulSet, your kind), as the API server returned
            it: its name and UID go into the controller reference and the name.
        parent_kind: the parent's resource (``resource_info_for(StatefulSet)``), for the
            controller reference's apiVersion and kind.
        template_labels: copied into the revision's labels.
        data: the snapshot: a JSON value, or a ``msgspec.Raw`` of its exact bytes.
        revision: the revision number.
        collision_count: the parent's ``status.collisionCount`` (the hash's probe); None
            hashes without a probe.

    Returns:
        The revision named ``<parent>-<hash>`` with the hash also in its
        :data:`CONTROLLER_REVISION_HASH_LABEL` label; no namespace (it is created in the
        parent's).

    Raises:
        ValueError: the parent has no name or UID.
    """
    owner_ref = new_controller_ref(parent, parent_kind.api_version, parent_kind.kind)
    unnamed = ControllerRevision(
        metadata=ObjectMeta(labels=dict(template_labels or {}), owner_references=[owner_ref]),
        data=data,
        revision=revision,
    )
    hash = hash_controller_revision(unnamed, collision_count)
    labels = {**(template_labels or {}), CONTROLLER_REVISION_HASH_LABEL: hash}
    meta = msgspec.structs.replace(
        unnamed.metadata,
        name=controller_revision_name(str(parent.metadata.name or ""), hash),
        labels=labels,
    )
    return msgspec.structs.replace(unnamed, metadata=meta)


# -- sorting and comparing ----------------------------------------------------------------------


def sort_controller_revisions(revisions: Iterable[ControllerRevision]) -> list[ControllerRevision]:
    """``revisions`` by revision number, then creation time, then name (stable;
    ``SortControllerRevisions``). A missing number counts as 0, a missing time as the
    earliest."""

    def order(r: ControllerRevision) -> tuple[int, datetime, str]:
        created = r.metadata.creation_timestamp or _ZERO_TIME
        return (r.revision or 0, created, r.metadata.name or "")

    return sorted(revisions, key=order)


def equal_revision(lhs: ControllerRevision | None, rhs: ControllerRevision | None) -> bool:
    """Whether two revisions hold the same data (``EqualRevision``); two Nones are equal.

    Hash labels that both parse as 32-bit decimal integers and differ make them unequal
    without looking further (Go's shortcut; safe-encoded hashes rarely parse). Otherwise
    the data's raw JSON bytes decide.
    """
    if lhs is None or rhs is None:
        return lhs is rhs
    lhs_hash, rhs_hash = _label_hash(lhs), _label_hash(rhs)
    if lhs_hash is not None and rhs_hash is not None and lhs_hash != rhs_hash:
        return False
    return _raw_data(lhs.data) == _raw_data(rhs.data)


def find_equal_revisions(
    revisions: Iterable[ControllerRevision], needle: ControllerRevision | None
) -> list[ControllerRevision]:
    """The revisions :func:`equal_revision` to ``needle``, in their order
    (``FindEqualRevisions``)."""
    return [r for r in revisions if equal_revision(r, needle)]


# -- reading and writing ------------------------------------------------------------------------


@final
class History:
    """The ControllerRevisions of one kind of parent: read from a lister, written through the
    client (``NewHistory``'s ``realHistory``).

    Args:
        client: the API client revisions are created, updated, patched and deleted with.
        lister: the ControllerRevision informer's lister
            (``factory.lister_for(ControllerRevision)``).
        clock: sleeps between conflict retries of :meth:`update_controller_revision`.

    Errors:
        Every method raises the client's errors (``ApiError``, ``TransportError``) unless it
        says otherwise; the controller's sync is retried with backoff.
    """

    def __init__(
        self,
        client: ApiClient,
        lister: Lister[ControllerRevision],
        *,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._client = client
        self._lister = lister
        self._clock = clock

    def __repr__(self) -> str:
        return "<History of ControllerRevisions>"

    def list_controller_revisions(
        self, parent: HasMetadata, selector: LabelSelector
    ) -> list[ControllerRevision]:
        """The cached revisions in the parent's namespace that ``selector`` matches and that
        the parent controls or nobody does (orphans it may adopt)."""
        namespace = parent.metadata.namespace or ""
        return [
            revision
            for revision in self._lister.namespace(namespace).list(selector)
            if (ref := get_controller_of(revision)) is None or ref.uid == parent.metadata.uid
        ]

    async def create_controller_revision(
        self, parent: HasMetadata, revision: ControllerRevision, collision_count: int
    ) -> tuple[ControllerRevision, int]:
        """Create ``revision`` in the parent's namespace, renaming it on a name collision
        (``CreateControllerRevision``).

        The name is ``<parent>-<hash of revision with collision_count>``. When that name is
        taken by a revision with other data, ``collision_count`` goes up by one and the next
        name is tried; when it is taken by one with the same data, that one is the answer.
        The hash label is left as it was (as in Go).

        Returns:
            The created (or equal existing) revision, and the collision count to store in the
            parent's status.
        """
        namespace = parent.metadata.namespace or ""
        api = self._client.api(ControllerRevision, namespace)
        wanted = _raw_data(revision.data)
        while True:
            name = controller_revision_name(
                str(parent.metadata.name or ""), hash_controller_revision(revision, collision_count)
            )
            named = msgspec.structs.replace(
                revision, metadata=msgspec.structs.replace(revision.metadata, name=name)
            )
            try:
                return await api.create(named), collision_count
            except AlreadyExists:
                existing = await api.get(name)
                if _raw_data(existing.data) == wanted:
                    return existing, collision_count
                logger.debug("controller revision %s/%s: hash collision", namespace, name)
                collision_count += 1

    async def update_controller_revision(
        self, revision: ControllerRevision, new_revision: int
    ) -> ControllerRevision:
        """Set the revision number to ``new_revision`` (``UpdateControllerRevision``).

        A conflict (stale ``revision``) is retried up to three times, 10, 50 and 250 ms
        apart, from the lister's copy (client-go's ``RetryOnConflict`` with
        ``DefaultBackoff``); no request is made once the number is already right.

        Returns:
            The revision as the server stored it (Go returns its local copy).

        Raises:
            Conflict: the fourth attempt conflicted too.
        """
        api = self._client.api(ControllerRevision, revision.metadata.namespace or "")
        current = revision
        for delay in (*_CONFLICT_RETRY_DELAYS, None):
            if (current.revision or 0) == new_revision:
                return current
            try:
                return await api.update(
                    current, msgspec.structs.replace(current, revision=new_revision)
                )
            except Conflict:
                if delay is None:
                    raise
            cached = self._lister.namespace(current.metadata.namespace or "").get_or_none(
                str(current.metadata.name)
            )
            if cached is not None:
                current = cached
            await self._clock.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    async def delete_controller_revision(self, revision: ControllerRevision) -> None:
        """Delete ``revision`` (``DeleteControllerRevision``).

        Raises:
            NotFound: it is already gone.
        """
        api = self._client.api(ControllerRevision, revision.metadata.namespace or "")
        await api.delete(str(revision.metadata.name))

    async def adopt_controller_revision(
        self, parent: HasMetadata, parent_kind: ResourceInfo, revision: ControllerRevision
    ) -> ControllerRevision:
        """Make ``parent`` the controller of the orphan ``revision`` (``AdoptControllerRevision``):
        a strategic merge patch adding the controller reference, carrying the revision's UID
        so a re-created revision of the same name is refused.

        Raises:
            AlreadyOwnedError: the revision already has a controller (no request is made).
        """
        owner = get_controller_of(revision)
        if owner is not None:
            raise AlreadyOwnedError(
                f"attempt to adopt revision {revision.metadata.name!r} owned by "
                f"{owner.kind} {owner.name!r} (uid {owner.uid})",
                existing=owner,
                object_name=f"{revision.metadata.namespace}/{revision.metadata.name}",
            )
        ref = new_controller_ref(parent, parent_kind.api_version, parent_kind.kind)
        patch = {
            "metadata": {
                "ownerReferences": [msgspec.to_builtins(ref)],
                "uid": revision.metadata.uid,
            }
        }
        api = self._client.api(ControllerRevision, parent.metadata.namespace or "")
        return await api.patch(str(revision.metadata.name), patch, patch_type=PatchType.STRATEGIC)

    async def release_controller_revision(
        self, parent: HasMetadata, revision: ControllerRevision
    ) -> ControllerRevision | None:
        """Remove ``parent``'s reference from ``revision`` (``ReleaseControllerRevision``): a
        strategic merge patch deleting the owner reference by UID, carrying the revision's UID.

        Returns:
            The released revision, or None when it is gone (NotFound) or the patch is refused
            as Invalid (it was re-created, or is no longer the parent's).
        """
        patch = {
            "metadata": {
                "ownerReferences": [{"$patch": "delete", "uid": parent.metadata.uid}],
                "uid": revision.metadata.uid,
            }
        }
        api = self._client.api(ControllerRevision, revision.metadata.namespace or "")
        try:
            return await api.patch(
                str(revision.metadata.name), patch, patch_type=PatchType.STRATEGIC
            )
        except (NotFound, Invalid):
            return None


# -- raw bytes -------------------------------------------------------------------------------------


def _fnv32(data: bytes, digest: int = _FNV32_OFFSET) -> int:
    """FNV-1 32-bit (Go's ``fnv.New32``): multiply, then xor each byte."""
    for byte in data:
        digest = ((digest * _FNV32_PRIME) & 0xFFFFFFFF) ^ byte
    return digest


def _label_hash(revision: ControllerRevision) -> int | None:
    """The hash label as Go's ``strconv.ParseInt(hs, 10, 32)`` reads it, made unsigned."""
    text = (revision.metadata.labels or {}).get(CONTROLLER_REVISION_HASH_LABEL)
    if text is None or not _INT32.fullmatch(text):
        return None
    value = int(text)
    if not -(2**31) <= value < 2**31:
        return None
    return value & 0xFFFFFFFF


def _raw_data(data: Any) -> bytes:
    """The raw JSON bytes Go would hold as ``Data.Raw`` (empty for no data)."""
    if data is None:
        return b""
    if isinstance(data, msgspec.Raw):
        return bytes(data)
    out = bytearray()
    _write_go_json(out, data)
    return bytes(out)


_HTML_ESCAPES = (
    (b"<", b"\\u003c"),
    (b">", b"\\u003e"),
    (b"&", b"\\u0026"),
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
)


def _write_go_json(out: bytearray, value: Any) -> None:
    """Append what Go's ``json.Marshal`` writes for ``value`` decoded into ``interface{}``."""
    if value is None:
        out += b"null"
    elif isinstance(value, bool):
        out += b"true" if value else b"false"
    elif isinstance(value, str):
        out += _go_string(value)
    elif isinstance(value, int | float):
        out += _go_number(value)
    elif isinstance(value, Mapping):
        out += b"{"
        for i, key in enumerate(sorted(value)):  # Go writes a map's keys sorted
            if i:
                out += b","
            out += _go_string(key)
            out += b":"
            _write_go_json(out, value[key])
        out += b"}"
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        out += b"["
        for i, item in enumerate(value):
            if i:
                out += b","
            _write_go_json(out, item)
        out += b"]"
    else:
        raise TypeError(f"cannot write {type(value).__name__} as JSON revision data")


def _go_string(text: str) -> bytes:
    """A JSON string as Go writes it: msgspec's escapes (``\\b``, ``\\f``, ``\\u00XX``, as
    Go since 1.22) plus Go's HTML-safe ones."""
    encoded = msgspec.json.encode(text)
    for raw, escaped in _HTML_ESCAPES:
        encoded = encoded.replace(raw, escaped)
    return encoded


def _go_number(number: float) -> bytes:
    """A JSON number as Go writes a float64: the shortest digits that read back, fixed
    notation from 1e-6 up to 1e21, else an exponent without a leading zero (``1e-7``)."""
    value = float(number)
    if not math.isfinite(value):
        raise ValueError(f"{number!r} is not a JSON number")
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        text = repr(value)  # shortest digits in exponent form, as strconv's 'e' with -1
        if text[-4:-1] == "e-0":  # Go's clean-up of e-07 to e-7
            text = text[:-2] + text[-1]
        return text.encode()
    text = format(Decimal(repr(value)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text.encode()
