"""What a strategy may use of the server it runs in (one :class:`Context` per :class:`Rest`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from kcm.clock import Clock

from .._authn import Authenticator
from .._registry import Registry, Resource
from .._store import Obj, Store
from .._tokens import TokenIssuer
from .core.addresses import ServiceAddresses

__all__ = ["Context", "Verbs"]


def _format_time(t: datetime) -> str:
    """A ``metav1.Time`` as kube-apiserver writes it (whole seconds, ``Z``)."""
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Context:
    """The clock, the storage, the served resources, the service account token signer and the
    address allocators of one server.

    Strategies are stateless; whatever outlives a request (the next free cluster IP) lives here.
    """

    clock: Clock
    store: Store
    registry: Registry
    tokens: TokenIssuer
    service_addresses: ServiceAddresses = field(default_factory=ServiceAddresses)
    default_service_accounts: bool = True
    """Whether an Active namespace gets its ``default`` ServiceAccount from the server."""
    verbs: Verbs | None = None
    """The verbs, for what a strategy does through them (a CRD deleting its objects)."""
    authenticator: Authenticator | None = None
    """Who a token is (TokenReview); the App's, set when the server is assembled."""
    finalizing: set[str] = field(default_factory=set)
    """CRDs whose objects are being deleted right now (their deletions must not finish the
    CRD from inside that loop)."""

    def now(self) -> str:
        return _format_time(self.clock.now())

    def time_in(self, seconds: int) -> str:
        """The time ``seconds`` from now (a graceful deletion's deadline)."""
        return _format_time(self.clock.now() + timedelta(seconds=seconds))


class Verbs(Protocol):
    """The verbs a subresource that acts on its object calls back into (the :class:`Rest`)."""

    ctx: Context
    """The server's clock, store and registry (a pod's node, for ``pods/log``)."""

    def now(self) -> str:
        """The current time as a ``metav1.Time``."""
        ...

    def existing(self, res: Resource, ns: str, name: str) -> Obj:
        """The stored object; 404 NotFound when there is none."""
        ...

    def commit(self, res: Resource, new: Obj, old: Obj) -> Obj:
        """Store ``new`` over ``old`` with the next generation; no other checks or hooks."""
        ...

    def delete(self, res: Resource, ns: str, name: str, options: Obj, query: dict[str, str]) -> Any:
        """The DELETE verb."""
        ...
