"""Subresources: what ``<kind>/<name>/<subresource>`` does, as the kind's strategy says.

GET reads through :meth:`Subresource.read`; PUT and PATCH run the update verb with the
subresource's ``prepare_for_update``/``default_on_update``/``validate_update`` in place of the
kind's own; POST (``pods/binding``, ``pods/eviction``) calls :meth:`Subresource.post`. A
subresource that streams (kube's Connecter and GetterWithOptions: ``pods/log``, ``exec``,
``attach``, ``portforward``) sets :attr:`Subresource.connects`; GET and POST then reach
:meth:`Subresource.connect` with the query and answer a :class:`StreamReply`. A
subresource that speaks another kind (``scale``) sets :attr:`Subresource.view` and converts with
``read``/``write`` instead. The default (:class:`Subresource`) is what kcm does for a
subresource without rules: GET reads the object, PUT/PATCH update it as the main resource does
but without defaults or validation, POST is 405.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from .._field_errors import Cause
from .._status import StatusError
from .._store import Obj, deep_copy
from ._context import Verbs

if TYPE_CHECKING:
    from ._base import Strategy

__all__ = ["StatusSubresource", "StreamReply", "Subresource"]


@dataclass(frozen=True, slots=True)
class StreamReply:
    """What a streaming subresource answers: a status code and a body that is no object (a
    log's text; nothing, for a pod that never ran)."""

    code: int
    body: bytes = b""
    content_type: str = "text/plain"


class Subresource:
    """A subresource of ``strategy``'s kind without rules of its own."""

    view: ClassVar[bool] = False
    """GET, PUT and PATCH speak another kind (:meth:`read`/:meth:`write` convert)."""

    connects: ClassVar[bool] = False
    """GET and POST stream through :meth:`connect` instead of reading or acting."""

    def __init__(self, strategy: Strategy) -> None:
        self.strategy = strategy

    def read(self, obj: Obj) -> Obj:
        """What GET returns for the stored ``obj``."""
        return self.strategy.present(obj)

    def write(self, old: Obj, body: Any, name: str) -> Obj:
        """The whole object a PUT of a view's ``body`` makes of ``old`` (views only)."""
        raise NotImplementedError

    def prepare_for_update(self, new: Obj, old: Obj) -> Obj:
        """The object to store for a PUT of ``new`` here (the main resource's rules)."""
        return self.strategy.prepare_for_update(new, old)

    def default_on_update(self, obj: Obj) -> None:
        """Defaults for an updated object: none on a subresource."""

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]:
        """Field errors of an update here: none on a subresource."""
        return []

    def stamp_update(self, new: Obj, old: Obj, now: str) -> None:
        """Times an update here records: none on a subresource without rules."""

    def post(
        self,
        verbs: Verbs,
        ns: str,
        name: str,
        body: Any,
        *,
        query: Mapping[str, str] | None = None,
    ) -> Obj:
        """What POST does on the object's subresource (answered 201); 405 unless a kind says.
        ``query``: the request's query (``dryRun``)."""
        raise StatusError.method_not_allowed()

    def missing(self, name: str, *, write: bool) -> StatusError:
        """The 404 for a subresource of a missing object (``write``: PUT or PATCH): the
        parent's NotFound, unless a subresource names itself."""
        res = self.strategy.resource
        return StatusError.not_found(res.group, res.plural, name)

    def connect(
        self, verbs: Verbs, ns: str, name: str, query: dict[str, str], *, upgrade: bool
    ) -> StreamReply:
        """GET or POST on a streaming subresource; ``upgrade``: the client asked for a
        websocket or SPDY stream. Only where :attr:`connects` is set."""
        raise StatusError.method_not_allowed()


_NOT_SPEC = ("metadata", "status", "apiVersion", "kind")


class StatusSubresource(Subresource):
    """``/status`` (the status strategy's PrepareForUpdate): the spec stays. A built-in
    kind's status strategy resets only the spec, so metadata changes (annotations, finalizers,
    labels unless the kind keeps them) apply too; a custom resource's keeps all but status."""

    def prepare_for_update(self, new: Obj, old: Obj) -> Obj:
        if self.strategy.status_writes_metadata:
            return _reset_spec(new, old, self.strategy.status_keeps_metadata)
        merged = deep_copy(old)
        if "status" in new:
            merged["status"] = new["status"]
        else:
            merged.pop("status", None)
        fields = (new.get("metadata") or {}).get("managedFields")
        if fields is not None:  # what an apply to /status recorded
            merged["metadata"]["managedFields"] = fields
        return merged


def _reset_spec(new: Obj, old: Obj, kept_metadata: tuple[str, ...]) -> Obj:
    """``new`` with ``old``'s spec (every field but metadata and status) and the metadata
    fields ``kept_metadata`` of ``old``."""
    merged = {k: v for k, v in deep_copy(new).items() if k in _NOT_SPEC}
    merged.update({k: deep_copy(v) for k, v in old.items() if k not in _NOT_SPEC})
    meta = merged.setdefault("metadata", {})
    for key in kept_metadata:
        if key in old["metadata"]:
            meta[key] = deep_copy(old["metadata"][key])
        else:
            meta.pop(key, None)
    return merged
