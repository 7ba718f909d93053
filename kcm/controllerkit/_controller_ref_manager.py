"""Claiming children: adopt matching orphans, release owned children that stopped matching.

client-go's ``BaseControllerRefManager.ClaimObject`` (§0), shared by every
controller that manages children by a label selector (ReplicaSet pods, Deployment
ReplicaSets, Job pods, ...). It never touches a child that another controller owns.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar, final

import msgspec

from kcm.client import Api, PatchType
from kcm.errors import Conflict, Invalid, KcmError, NotFound
from kcm.models import Unstructured
from kcm.models.meta_v1 import OwnerReference
from kcm.runtime import HasMetadata, get_controller_of, new_controller_ref

__all__ = ["ControllerRefManager", "LabelMatcher", "recheck_deletion_timestamp"]

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=HasMetadata)


class LabelMatcher(Protocol):
    """What the manager needs of a selector: ``kcm.selectors.LabelSelector`` fits."""

    def matches(self, labels: Mapping[str, str] | None) -> bool: ...


def recheck_deletion_timestamp(
    get_fresh: Callable[[], Awaitable[HasMetadata]], uid: str | None
) -> Callable[[], Awaitable[None]]:
    """A ``can_adopt`` check (client-go ``RecheckDeletionTimestamp``): a live GET of the owner.

    Args:
        get_fresh: reads the owner from the API server (not the cache), e.g.
            ``lambda: api.get(name)``.
        uid: the UID of the owner the caller is syncing.

    Returns:
        An async callable that raises if adoption must not happen.

    Raises (from the returned callable):
        Conflict: the owner was deleted and re-created (UID changed) or has a
            deletionTimestamp; the sync should be retried.
        NotFound: the owner is gone.
    """

    async def check() -> None:
        fresh = await get_fresh()
        meta = fresh.metadata
        if meta.uid != uid:
            raise Conflict(
                f"original {meta.namespace}/{meta.name} is gone: got uid {meta.uid}, wanted {uid}"
            )
        if meta.deletion_timestamp is not None:
            raise Conflict(
                f"{meta.namespace}/{meta.name} has just been deleted at "
                f"{meta.deletion_timestamp.isoformat()}"
            )

    return check


def _owner_reference_dict(ref: OwnerReference) -> dict[str, Any]:
    """The wire form (camelCase dict) of an owner reference, for patches."""
    return msgspec.to_builtins(ref)  # type: ignore[no-any-return]


def _is_builtin_group(group: str) -> bool:
    # Custom resources live in dotted groups outside *.k8s.io; they take no strategic merge.
    return "." not in group or group.endswith(".k8s.io")


@final
class ControllerRefManager(Generic[T]):
    """Adopts and releases the children of one owner (client-go's ``ControllerRefManager``).

    Create one per sync: the ``can_adopt`` check runs at most once per instance.

    Args:
        api: the children's :class:`~kcm.client.Api`, used for the adopt/release patches.
        owner: the owner as last read (from the cache); its UID, namespace and
            deletionTimestamp decide what may happen.
        owner_api_version: the owner's ``group/version`` for the controllerRef.
        owner_kind: the owner's kind for the controllerRef.
        selector: which children the owner wants (``.matches(labels)``).
        can_adopt: awaited once, before the first adoption; raises to forbid adopting. Use
            :func:`recheck_deletion_timestamp` for a live GET of the owner (always, in
            production: the cached owner may already be deleted). None: no check.
        finalizers: added to each child in the adoption patch and removed on release (Job's
            tracking finalizer).
        filter: a further test a child must pass besides the selector (StatefulSet: its
            name is ``<set>-<ordinal>``); a child of ours that fails it is released, an
            orphan that fails it is left alone (client-go's ``ClaimPods`` filters).
        strategic: use strategic merge patches (built-in kinds) instead of JSON patches of
            the whole ``ownerReferences`` list (custom resources, which take no strategic
            merge). Default: strategic for typed models of built-in API groups.

    Guarantees:
        * A child whose controllerRef names another UID is never patched.
        * Adoption patches carry the child's UID, release patches the owner's UID, so a
          child that was deleted and re-created under the same name is not touched.
        * Nothing is adopted or released while the owner is being deleted.
    """

    def __init__(
        self,
        api: Api[T],
        owner: HasMetadata,
        owner_api_version: str,
        owner_kind: str,
        selector: LabelMatcher,
        *,
        can_adopt: Callable[[], Awaitable[None]] | None,
        finalizers: Sequence[str] = (),
        strategic: bool | None = None,
        filter: Callable[[T], bool] | None = None,
    ) -> None:
        self._api = api
        self._owner = owner
        self._owner_api_version = owner_api_version
        self._owner_kind = owner_kind
        self._selector = selector
        self._can_adopt = can_adopt
        self._can_adopt_done = False
        self._can_adopt_error: Exception | None = None
        self._finalizers = tuple(finalizers)
        self._filter = filter
        if strategic is None:
            strategic = api.model is not Unstructured and _is_builtin_group(api.resource.group)
        self._strategic = strategic

    @property
    def owner(self) -> HasMetadata:
        """The owner this manager claims for."""
        return self._owner

    def _match(self, child: T) -> bool:
        if not self._selector.matches(child.metadata.labels):
            return False
        return self._filter is None or self._filter(child)

    async def claim(self, children: Iterable[T]) -> list[T]:
        """Claim ``children``: keep what we own and still match, adopt matching orphans,
        release what we own but no longer match; ignore everything else.

        Args:
            children: candidates, usually every child in the owner's namespace (from a lister).

        Returns:
            The children owned after the claim (adopted ones as the patch returned them),
            in input order.

        Raises:
            ApiError, TransportError, Conflict: an adopt or release failed (NotFound is
                ignored, and Invalid on release). Every child is tried first; one failure is
                raised as is, several as an ``ExceptionGroup``. Retry the sync.
        """
        claimed, errors = await self.claim_with_errors(children)
        if len(errors) == 1:
            raise errors[0]
        if errors:
            raise ExceptionGroup(f"claiming children of {self._owner_name()} failed", errors)
        return claimed

    async def claim_with_errors(self, children: Iterable[T]) -> tuple[list[T], list[Exception]]:
        """:meth:`claim`, but returning the errors instead of raising them."""
        claimed: list[T] = []
        errors: list[Exception] = []
        for child in children:
            try:
                result = await self._claim_one(child)
            except KcmError as exc:
                if not any(e is exc for e in errors):  # a refused can_adopt fails them all
                    errors.append(exc)
                continue
            if result is not None:
                claimed.append(result)
        return claimed, errors

    async def _claim_one(self, child: T) -> T | None:
        owner_meta = self._owner.metadata
        ref = get_controller_of(child)
        if ref is not None:
            if ref.uid != owner_meta.uid:
                return None  # another controller's
            if self._match(child):
                return child  # ours; allowed even while we are being deleted (no action)
            if owner_meta.deletion_timestamp is not None:
                return None
            await self._release(child)
            return None
        # An orphan.
        if owner_meta.deletion_timestamp is not None or not self._match(child):
            return None
        meta = child.metadata
        if meta.deletion_timestamp is not None:
            return None
        if owner_meta.namespace and owner_meta.namespace != meta.namespace:
            return None
        await self._check_can_adopt()  # its errors (even NotFound) fail the adoption
        try:
            return await self._adopt(child)
        except NotFound:
            return None

    async def _check_can_adopt(self) -> None:
        if self._can_adopt is None:
            return
        if not self._can_adopt_done:
            self._can_adopt_done = True
            try:
                await self._can_adopt()
            except KcmError as exc:
                exc.add_note(f"{self._owner_name()} may not adopt children now")
                self._can_adopt_error = exc
        if self._can_adopt_error is not None:
            raise self._can_adopt_error

    def _owner_name(self) -> str:
        meta = self._owner.metadata
        return f"{self._owner_kind} {meta.namespace}/{meta.name}"

    async def _adopt(self, child: T) -> T:
        meta = child.metadata
        ref = new_controller_ref(self._owner, self._owner_api_version, self._owner_kind)
        name = str(meta.name)
        if self._strategic:
            patch_meta: dict[str, Any] = {
                "ownerReferences": [_owner_reference_dict(ref)],
                "uid": meta.uid,
            }
            if self._finalizers:
                patch_meta["finalizers"] = list(self._finalizers)
            adopted = await self._api.patch(
                name, {"metadata": patch_meta}, patch_type=PatchType.STRATEGIC
            )
        else:
            refs = [_owner_reference_dict(r) for r in meta.owner_references or ()]
            refs.append(_owner_reference_dict(ref))
            finalizers = list(meta.finalizers or ())
            finalizers += [f for f in self._finalizers if f not in finalizers]
            adopted = await self._api.patch(
                name,
                self._json_ops(child, refs, finalizers),
                patch_type=PatchType.JSON,
            )
        logger.debug("%s adopted %s/%s", self._owner_name(), meta.namespace, name)
        return adopted

    async def _release(self, child: T) -> None:
        meta = child.metadata
        owner_uid = self._owner.metadata.uid
        name = str(meta.name)
        try:
            if self._strategic:
                patch_meta: dict[str, Any] = {
                    "ownerReferences": [{"$patch": "delete", "uid": owner_uid}],
                    "uid": meta.uid,
                }
                if self._finalizers:
                    patch_meta["$deleteFromPrimitiveList/finalizers"] = list(self._finalizers)
                await self._api.patch(
                    name, {"metadata": patch_meta}, patch_type=PatchType.STRATEGIC
                )
            else:
                refs = [
                    _owner_reference_dict(r)
                    for r in meta.owner_references or ()
                    if r.uid != owner_uid
                ]
                finalizers = [f for f in meta.finalizers or () if f not in self._finalizers]
                await self._api.patch(
                    name, self._json_ops(child, refs, finalizers), patch_type=PatchType.JSON
                )
        except (NotFound, Invalid):
            # Gone, or re-created under the same name (UID mismatch), or no longer ours.
            return
        logger.debug("%s released %s/%s", self._owner_name(), meta.namespace, name)

    @staticmethod
    def _json_ops(
        child: HasMetadata, refs: list[dict[str, Any]], finalizers: list[str]
    ) -> list[dict[str, Any]]:
        meta = child.metadata
        ops: list[dict[str, Any]] = [{"op": "test", "path": "/metadata/uid", "value": meta.uid}]
        if meta.resource_version:
            # Optimistic concurrency: a stale child gets 409 Conflict instead of losing refs.
            ops.append(
                {
                    "op": "replace",
                    "path": "/metadata/resourceVersion",
                    "value": meta.resource_version,
                }
            )
        ops.append({"op": "add", "path": "/metadata/ownerReferences", "value": refs})
        if finalizers or meta.finalizers:
            ops.append({"op": "add", "path": "/metadata/finalizers", "value": finalizers})
        return ops
