"""Finalizer helpers: test, add and remove one ``metadata.finalizers`` entry.

Writes go through ``Api.update(old, new)``: a JSON patch carrying ``old``'s resourceVersion, so
a stale object (an informer cache that has not seen the controller's last write yet) gets a 409
``Conflict`` instead of silently overwriting someone else's finalizer change. The controller
logs a ``Conflict`` at INFO and retries the key with backoff; the next reconcile reads the
fresh object.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

import msgspec

from kcm.models import Unstructured

from ._types import HasMetadata

__all__ = ["add_finalizer", "has_finalizer", "remove_finalizer"]

ObjT = TypeVar("ObjT", bound=HasMetadata)


class _Updater(Protocol[ObjT]):
    async def update(self, old: ObjT, new: ObjT) -> ObjT: ...


def has_finalizer(obj: HasMetadata, name: str) -> bool:
    """Whether ``obj`` carries the finalizer ``name``."""
    return name in (obj.metadata.finalizers or ())


async def add_finalizer(api: _Updater[ObjT], obj: ObjT, name: str) -> ObjT:
    """Add the finalizer ``name`` to ``obj`` on the server (appended after the existing ones).

    Args:
        api: the object's ``Api`` handle (``client.api(Model, namespace)``; for ``Unstructured``
            the handle built with its ``resource=``).
        obj: the object as last read (typed model or ``Unstructured``).
        name: a qualified finalizer name (``example.com/cleanup``).

    Returns:
        The updated object from the server, or ``obj`` itself when it already has the
        finalizer (no request is sent).

    Raises:
        Conflict: ``obj`` is stale (changed on the server since it was read); re-read and retry.
        NotFound: the object is gone.
    """
    if has_finalizer(obj, name):
        return obj
    finalizers = [*(obj.metadata.finalizers or ()), name]
    return await api.update(obj, _with_finalizers(obj, finalizers))


async def remove_finalizer(api: _Updater[ObjT], obj: ObjT, name: str) -> ObjT:
    """Remove every occurrence of the finalizer ``name`` from ``obj`` on the server.

    Removing the last finalizer of an object that is being deleted lets the server delete it;
    the returned object is then the server's last state of it.

    Returns:
        The updated object, or ``obj`` itself when it does not have the finalizer (no request).

    Raises:
        Conflict: ``obj`` is stale; re-read and retry.
        NotFound: the object is gone.
    """
    if not has_finalizer(obj, name):
        return obj
    finalizers = [f for f in obj.metadata.finalizers or () if f != name]
    return await api.update(obj, _with_finalizers(obj, finalizers))


def _with_finalizers(obj: ObjT, finalizers: list[str]) -> ObjT:
    if isinstance(obj, Unstructured):
        data: dict[str, Any] = obj.to_dict()
        meta = data.setdefault("metadata", {})
        if finalizers:
            meta["finalizers"] = finalizers
        else:
            meta.pop("finalizers", None)
        return Unstructured.from_dict(data)  # type: ignore[return-value]
    if not isinstance(obj, msgspec.Struct):
        raise TypeError(
            f"cannot change finalizers of a {type(obj).__name__}: use a typed model or Unstructured"
        )
    meta = msgspec.structs.replace(obj.metadata, finalizers=finalizers or None)
    return msgspec.structs.replace(obj, metadata=meta)
