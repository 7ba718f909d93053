"""The one exception hierarchy of kcm.

Every error kcm raises on purpose is a :class:`KcmError`. HTTP failures are turned into these
types in exactly one place (``kcm.client``), so callers never see an httpx exception::

    KcmError
    ├── ConfigError                 bad kubeconfig / in-cluster environment / exec plugin
    ├── TransportError              the server could not be reached (names the server)   [retryable]
    │   ├── ConnectionFailed        refused or unresolvable: not retried per request    [retryable]
    │   ├── TlsVerificationFailed   the server's certificate was not trusted
    │   └── RequestTimeout          no answer within the client timeout                 [retryable]
    ├── ApiError                    the server answered with a failure Status
    │   ├── BadRequest              400
    │   ├── Unauthorized            401 (credentials are refreshed and the request retried once)
    │   ├── Forbidden               403
    │   ├── NotFound                404
    │   ├── MethodNotAllowed        405
    │   ├── AlreadyExists           409, reason AlreadyExists
    │   ├── Conflict                409, stale resourceVersion: re-read and retry
    │   ├── ResourceExpired         410, "too old resource version" / expired continue: relist
    │   ├── Invalid                 422, with per-field causes
    │   ├── TooManyRequests         429, with retry_after                                [retryable]
    │   ├── InternalError           500                                                 [retryable]
    │   ├── ServiceUnavailable      503                                                 [retryable]
    │   └── ServerTimeout           504 or reason Timeout                               [retryable]
    │       └── ResourceVersionTooLarge   the server has not caught up with a resourceVersion
    ├── DecodeError                 a response body did not match the expected type
    │   └── WatchDecodeError        one malformed line in a watch stream (carries the line)
    ├── VeryShortWatchError         a watch ended within a second with no event (reflector relists)
    ├── WatchListTimeoutError       no initial-events-end bookmark in time (reflector lists instead)
    ├── AlreadyOwnedError           an object already has another controller (ownerReference)
    ├── ShutDown                    a work queue was shut down
    ├── CacheSyncTimeoutError       a controller's caches did not sync in time (a TimeoutError)
    ├── GracefulShutdownTimeout     a manager's shutdown outlived its grace period (a TimeoutError)
    ├── LeaderElectionLost          this process lost (or never held) the leader lease
    ├── MissingExtra                an optional dependency is not installed (an ImportError)
    └── CloudProviderError          a cloud provider's sentinel errors (kcm.cloudprovider)
        ├── CloudNotImplemented     the provider does not implement this call (Go's NotImplemented)
        ├── InstanceNotFound        the cloud has no instance for the node
        ├── ImplementedElsewhere    another controller does this (the caller skips it silently)
        └── DiskNotFound            the cloud has no such disk

``retryable`` on each class tells generic retry loops whether trying the same request again
can succeed without anything else changing.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "AlreadyExists",
    "AlreadyOwnedError",
    "ApiError",
    "BadRequest",
    "CacheSyncTimeoutError",
    "CloudNotImplemented",
    "CloudProviderError",
    "ConfigError",
    "Conflict",
    "ConnectionFailed",
    "DecodeError",
    "DiskNotFound",
    "Forbidden",
    "GracefulShutdownTimeout",
    "ImplementedElsewhere",
    "InstanceNotFound",
    "InternalError",
    "Invalid",
    "KcmError",
    "LeaderElectionLost",
    "MethodNotAllowed",
    "MissingExtra",
    "NotFound",
    "RequestTimeout",
    "ResourceExpired",
    "ResourceVersionTooLarge",
    "ServerTimeout",
    "ServiceUnavailable",
    "ShutDown",
    "StatusCause",
    "TlsVerificationFailed",
    "TooManyRequests",
    "TransportError",
    "Unauthorized",
    "VeryShortWatchError",
    "WatchDecodeError",
    "WatchListTimeoutError",
    "api_error_from_status",
]


class KcmError(Exception):
    """Base class of every error kcm raises on purpose."""

    retryable: ClassVar[bool] = False


class ConfigError(KcmError):
    """The client configuration could not be loaded.

    The message names the file, context or field at fault and says what to do about it.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        context: str | None = None,
        field: str | None = None,
    ) -> None:
        where = ", ".join(
            part
            for part in (
                f"file {path!r}" if path else "",
                f"context {context!r}" if context else "",
                f"field {field!r}" if field else "",
            )
            if part
        )
        super().__init__(f"{message} ({where})" if where else message)
        self.path = path
        self.context = context
        self.field = field


class TransportError(KcmError):
    """The API server could not be reached (connection refused, reset, TLS failure...)."""

    retryable = True

    def __init__(self, message: str, *, server: str | None = None) -> None:
        super().__init__(f"{message} (server {server})" if server else message)
        self.server = server


class ConnectionFailed(TransportError):
    """No connection could be opened: refused, or the host name does not resolve.

    The client does not retry the request (client-go retries only resets and EOFs of GETs):
    a bad URL fails at once. Loops that outlive a server restart (the reflector, leader
    election) still retry with their own backoff, hence ``retryable``.
    """


class TlsVerificationFailed(TransportError):
    """The server's certificate did not verify against the configured CA (or its name did not
    match): fix ``certificate-authority``/``tls-server-name`` in the kubeconfig; retrying
    cannot help."""

    retryable = False


class RequestTimeout(TransportError):
    """The server did not answer within the client-side timeout."""


class StatusCause:
    """One cause of an ``Invalid`` (or other) Status: which field, why, and a message."""

    __slots__ = ("field", "message", "reason")

    def __init__(self, *, reason: str = "", message: str = "", field: str = "") -> None:
        self.reason = reason
        self.message = message
        self.field = field

    def __repr__(self) -> str:
        return (
            f"StatusCause(reason={self.reason!r}, message={self.message!r}, field={self.field!r})"
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StatusCause) and (self.reason, self.message, self.field) == (
            other.reason,
            other.message,
            other.field,
        )

    def __hash__(self) -> int:
        return hash((self.reason, self.message, self.field))


class ApiError(KcmError):
    """The API server answered with a failure ``Status``.

    Attributes:
        code: the HTTP status code (``Status.code``).
        reason: the machine-readable ``Status.reason`` (``NotFound``, ``Conflict`` ...).
        message: the human-readable ``Status.message``.
        status: the whole Status object as a dict, exactly as the server sent it.
        causes: ``Status.details.causes``, e.g. the fields an ``Invalid`` object got wrong.
    """

    default_code: ClassVar[int] = 0

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        reason: str = "",
        status: dict[str, Any] | None = None,
        causes: list[StatusCause] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code if code is not None else self.default_code
        self.reason = reason
        self.status: dict[str, Any] = status if status is not None else {}
        self.causes: list[StatusCause] = causes or []

    def __str__(self) -> str:
        text = f"{self.code} {self.reason}: {self.message}" if self.reason else self.message
        if self.causes:
            text += " [" + "; ".join(f"{c.field}: {c.message}" for c in self.causes) + "]"
        return text


class BadRequest(ApiError):
    """400: the request is malformed (bad body, bad query parameter); retrying will not help."""

    default_code = 400


class Unauthorized(ApiError):
    """401: the server does not know who is calling (no, expired or wrong credentials)."""

    default_code = 401


class Forbidden(ApiError):
    """403: the caller is known but not allowed this verb on this resource (RBAC), or an admission
    plugin refused it."""

    default_code = 403


class NotFound(ApiError):
    """404: the object, namespace or resource type is not there (or a new CRD is not yet served)."""

    default_code = 404


class MethodNotAllowed(ApiError):
    """405: the resource does not support this verb (e.g. a PATCH of a read-only subresource)."""

    default_code = 405


class AlreadyExists(ApiError):
    """409: an object with this name exists already (a create); get it, or create under another
    name."""

    default_code = 409


class Conflict(ApiError):
    """409: the object changed since it was read. Re-read it and apply the change again."""

    default_code = 409


class ResourceExpired(ApiError):
    """410: the resourceVersion or continue token is older than the server's history. Relist."""

    default_code = 410


class Invalid(ApiError):
    """422: the object failed validation; ``causes`` names each bad field."""

    default_code = 422


class TooManyRequests(ApiError):
    """429: the server is throttling. ``retry_after`` is its hint in seconds (or None)."""

    default_code = 429
    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class InternalError(ApiError):
    """500: the server failed; retryable."""

    default_code = 500
    retryable = True


class ServiceUnavailable(ApiError):
    """503: the server cannot serve now (starting, overloaded, a backend down); retryable."""

    default_code = 503
    retryable = True


class ServerTimeout(ApiError):
    """504: the server gave up waiting (a slow backend or admission); retryable."""

    default_code = 504
    retryable = True


class ResourceVersionTooLarge(ServerTimeout):
    """The server has not yet caught up with the requested resourceVersion; retry later."""


class DecodeError(KcmError):
    """A response body did not match the expected type (the message keeps msgspec's JSON path)."""


class WatchDecodeError(DecodeError):
    """One line of a watch stream was not a valid watch event. The stream is not resumed.

    Attributes:
        line: the offending line (truncated to 1 KiB).
    """

    def __init__(self, message: str, *, line: bytes = b"") -> None:
        super().__init__(message)
        self.line = line[:1024]


class VeryShortWatchError(KcmError):
    """A watch ended after less than a second without any event: something is wrong (R17).

    The reflector reports it to the watch-error handler and relists after a backoff.
    """


class WatchListTimeoutError(KcmError):
    """A watch-list stream sent no ``initial-events-end`` bookmark in time.

    The reflector falls back to a paged LIST (B25, D9) and remembers to.
    """


class AlreadyOwnedError(KcmError):
    """An object already has a controller ``ownerReference`` to a different owner.

    Raised by ``kcm.runtime.set_controller_reference``: an object has at most one controller.
    Leave the object alone (another controller manages it) or remove that reference first.

    Attributes:
        existing: the conflicting ``OwnerReference``.
        object_name: ``namespace/name`` of the object that is already owned.
    """

    def __init__(self, message: str, *, existing: Any = None, object_name: str = "") -> None:
        super().__init__(message)
        self.existing = existing
        self.object_name = object_name


class MissingExtra(KcmError, ImportError):
    """A feature needs an optional dependency that is not installed; the message is one line
    that names the extra to install (``... needs kcm[server]: pip install 'pykcm[server]'``).

    Also a builtin :class:`ImportError`, so code that probes for an optional module with
    ``except ImportError`` keeps working.

    Attributes:
        extra: the extra that provides the module (``server``).
        module: the module that could not be imported.
    """

    def __init__(self, message: str, *, extra: str, module: str) -> None:
        super().__init__(message, name=module)
        self.extra = extra
        self.module = module


class ShutDown(KcmError):
    """The work queue was shut down; no more items will be handed out."""


class CacheSyncTimeoutError(KcmError, TimeoutError):
    """A controller's watched informers did not sync within its ``cache_sync_timeout``.

    Also a builtin :class:`TimeoutError`, so ``except TimeoutError`` still catches it. Usually
    the informers cannot list or watch: missing RBAC permissions, an unknown kind (CRD not
    installed), or an unreachable server; a very large cache may just need a longer timeout.

    Attributes:
        controller: the controller's name.
        kinds: the watched resources (``group/version/plural``-ish labels) not synced yet.
        timeout: the timeout that ran out, in seconds.
    """

    def __init__(
        self,
        message: str,
        *,
        controller: str = "",
        kinds: tuple[str, ...] = (),
        timeout: float = 0.0,
    ) -> None:
        super().__init__(message)
        self.controller = controller
        self.kinds = kinds
        self.timeout = timeout


class GracefulShutdownTimeout(KcmError, TimeoutError):
    """A manager's shutdown did not finish within its ``graceful_shutdown_timeout``.

    Raised by ``kcm.runtime.Manager.run`` once everything still running at the deadline has
    been cancelled (controller-runtime's "failed waiting for all runnables to end within grace
    period"), so work in flight was cut short. Also a builtin :class:`TimeoutError`. Usually a
    reconcile (or a runnable's cleanup) that ignores cancellation or waits on something slow;
    make it return sooner or give the manager a longer ``graceful_shutdown_timeout``.

    Attributes:
        timeout: the grace period that ran out, in seconds.
        runnables: the runnables still running at the deadline (e.g. ``controller replicaset``).
        stages: the manager's stages still running then (``leader``, ``runnables``,
            ``caches``, ...), in the order they were stopped.
    """

    def __init__(
        self,
        message: str,
        *,
        timeout: float = 0.0,
        runnables: tuple[str, ...] = (),
        stages: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.timeout = timeout
        self.runnables = runnables
        self.stages = stages


class LeaderElectionLost(KcmError):
    """Leadership was lost (or never acquired) while leader-only work was running."""


class CloudProviderError(KcmError):
    """A cloud provider's sentinel error (k8s.io/cloud-provider's ``cloudprovider.Err*``).

    Providers raise the subclasses; the cloud controllers treat each as the real ones do.
    Any other exception from a provider is an ordinary failure (retried with backoff).
    """


class CloudNotImplemented(CloudProviderError):
    """The provider does not implement this call (Go's ``cloudprovider.NotImplemented``;
    named so it does not shadow Python's ``NotImplemented``)."""


class InstanceNotFound(CloudProviderError):
    """The cloud has no instance for the node (the node-lifecycle controller deletes it)."""


class ImplementedElsewhere(CloudProviderError):
    """Another component does this (the service controller then skips the Service silently)."""


class DiskNotFound(CloudProviderError):
    """The cloud has no such disk."""


_BY_REASON: dict[str, type[ApiError]] = {
    "BadRequest": BadRequest,
    "Unauthorized": Unauthorized,
    "Forbidden": Forbidden,
    "NotFound": NotFound,
    "MethodNotAllowed": MethodNotAllowed,
    "AlreadyExists": AlreadyExists,
    "Conflict": Conflict,
    "Gone": ResourceExpired,
    "Expired": ResourceExpired,
    "Invalid": Invalid,
    "TooManyRequests": TooManyRequests,
    "InternalError": InternalError,
    "ServiceUnavailable": ServiceUnavailable,
    "Timeout": ServerTimeout,
    "ServerTimeout": ServerTimeout,
}

_BY_CODE: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    405: MethodNotAllowed,
    409: Conflict,
    410: ResourceExpired,
    422: Invalid,
    429: TooManyRequests,
    500: InternalError,
    503: ServiceUnavailable,
    504: ServerTimeout,
}


def _status_code(value: Any, fallback: int | None) -> int:
    """The Status' ``code`` if it is a number, else the HTTP code: a malformed Status must
    still give a typed error, never a ValueError."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return fallback or 0


def api_error_from_status(
    status: dict[str, Any], *, code: int | None = None, retry_after: float | None = None
) -> ApiError:
    """Build the most specific :class:`ApiError` for a ``Status`` dict.

    The reason decides first (a 409 may be ``AlreadyExists`` or ``Conflict``), then the code.
    Malformed fields (a non-numeric ``code``, ``details`` or ``causes`` of the wrong type) are
    ignored rather than raised, so a broken server still yields a typed error.
    A 504 (or reason ``Timeout``) whose causes include ``ResourceVersionTooLarge`` becomes
    :class:`ResourceVersionTooLarge`.
    """
    reason = str(status.get("reason") or "")
    status_code = _status_code(status.get("code"), code)
    message = str(status.get("message") or reason or f"HTTP {status_code}")
    details = status.get("details")
    if not isinstance(details, dict):
        details = {}
    raw_causes = details.get("causes")
    causes = [
        StatusCause(
            reason=str(c.get("reason", "")),
            message=str(c.get("message", "")),
            field=str(c.get("field", "")),
        )
        for c in (raw_causes if isinstance(raw_causes, list) else [])
        if isinstance(c, dict)
    ]
    cls = _BY_REASON.get(reason) or _BY_CODE.get(status_code) or ApiError
    if cls is ServerTimeout and (
        any(c.reason == "ResourceVersionTooLarge" for c in causes)
        or "too large resource version" in message.lower()
    ):
        cls = ResourceVersionTooLarge
    if cls is TooManyRequests:
        if retry_after is None:
            hint = details.get("retryAfterSeconds")
            retry_after = float(hint) if isinstance(hint, int | float) else None
        return TooManyRequests(
            message,
            retry_after=retry_after,
            code=status_code or 429,
            reason=reason,
            status=status,
            causes=causes,
        )
    return cls(message, code=status_code or None, reason=reason, status=status, causes=causes)
