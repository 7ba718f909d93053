"""Request limits, as kube-apiserver's flags and filters set them: body size, time to send a
body, requests in flight.

One misbehaving client must not take the server down: a 300 MB body is refused before it is
read (413), a body that never arrives is given up on (504), and beyond ``--max-requests-inflight``
(``--max-mutating-requests-inflight`` for writes) concurrent requests the server answers 429 at
once instead of queueing without bound. Long-running requests (watches, logs, exec, attach,
port-forward, proxy) do not count, as in kube-apiserver.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._options import go_bool

__all__ = ["MAX_REQUEST_BODY_BYTES", "InFlight", "Limits", "long_running"]

MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024
"""kube-apiserver's ``--max-request-body-bytes`` default (``MaxRequestBodyBytes``: 3 MiB)."""

_LONG_RUNNING_SUBRESOURCES = frozenset({"attach", "exec", "log", "portforward", "proxy"})
_READ_ONLY_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True, slots=True)
class Limits:
    """What one request, and all requests together, may take. 0 turns a limit off.

    Attributes:
        max_request_body_bytes: a bigger body is 413 RequestEntityTooLarge.
        request_timeout: seconds a client has to send the whole body (504 Timeout after).
        max_requests_inflight: concurrent read requests before 429.
        max_mutating_requests_inflight: concurrent writes before 429.
    """

    max_request_body_bytes: int = MAX_REQUEST_BODY_BYTES
    request_timeout: float = 60.0
    max_requests_inflight: int = 400
    max_mutating_requests_inflight: int = 200

    def __post_init__(self) -> None:
        for name in (
            "max_request_body_bytes",
            "request_timeout",
            "max_requests_inflight",
            "max_mutating_requests_inflight",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")


def long_running(method: str, parts: list[str], params: dict[str, list[str]]) -> bool:
    """Whether kube-apiserver's long-running check exempts the request from the in-flight
    limit: a watch (``?watch=`` or the ``/watch/`` path) or a streaming subresource."""
    if not parts or parts[0] not in ("api", "apis"):
        return False
    rest = parts[2:] if parts[0] == "api" else parts[3:]
    if rest[:1] == ["watch"]:
        return True
    if method == "GET" and go_bool(params.get("watch")):
        return True
    if rest[:1] == ["namespaces"] and len(rest) >= 3:
        rest = rest[2:]  # a namespace's own subresources ("namespaces/x/status") stay below
    return len(rest) >= 3 and rest[2] in _LONG_RUNNING_SUBRESOURCES


class InFlight:
    """Counts the requests being served, reads and writes apart (kube's two channels).

    Synchronous on purpose: a check and its increment happen with no await in between.
    """

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.reading = 0
        self.mutating = 0

    @staticmethod
    def mutates(method: str) -> bool:
        return method not in _READ_ONLY_METHODS

    def try_acquire(self, method: str) -> bool:
        """Take a slot for a request of ``method``; False when that kind is at its limit."""
        if self.mutates(method):
            limit = self.limits.max_mutating_requests_inflight
            if limit and self.mutating >= limit:
                return False
            self.mutating += 1
        else:
            limit = self.limits.max_requests_inflight
            if limit and self.reading >= limit:
                return False
            self.reading += 1
        return True

    def release(self, method: str) -> None:
        if self.mutates(method):
            self.mutating -= 1
        else:
            self.reading -= 1
