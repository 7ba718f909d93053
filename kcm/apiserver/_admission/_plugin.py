"""What an admission plugin sees of a write (kube's ``admission.Attributes``) and the two
phases it may act in: ``admit`` (mutating, before the kind's validation) and ``validate``
(after it, just before the object is stored)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from kcm.clock import Clock

from .._registry import Resource
from .._store import Obj, Store

__all__ = ["Attributes", "Plugin"]


@dataclass
class Attributes:
    """One create or update as admission sees it.

    Attributes:
        operation: ``CREATE`` or ``UPDATE``.
        resource: the kind written.
        namespace: the request's namespace ("" for cluster-scoped kinds).
        obj: the object being written (plugins of the admit phase may change it).
        old: the stored object an update replaces.
        subresource: ``status``, ``scale``... or "".
        dry_run: a ``dryRun=All`` request: check, but change nothing else.
    """

    operation: str
    resource: Resource
    namespace: str
    obj: Obj
    store: Store
    clock: Clock
    old: Obj | None = None
    subresource: str = ""
    dry_run: bool = False

    @property
    def name(self) -> str:
        """The object's name, else its ``generateName`` (kube's names in 403 texts: a
        validating plugin runs after the name is generated)."""
        meta = self.obj.get("metadata") or {}
        return str(meta.get("name") or meta.get("generateName") or "")

    @property
    def is_pod(self) -> bool:
        return self.resource.group == "" and self.resource.kind == "Pod"

    def now(self) -> datetime:
        return self.clock.now()


class Plugin:
    """An admission plugin; both phases do nothing unless overridden."""

    name: ClassVar[str]

    def admit(self, a: Attributes) -> None:
        """Mutate ``a.obj`` (or refuse with a StatusError) before validation."""

    def validate(self, a: Attributes) -> None:
        """Refuse (a StatusError) after validation; may write other objects."""
