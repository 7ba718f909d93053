"""Failure ``Status`` objects exactly as kube-apiserver writes them, raised as one exception."""

from __future__ import annotations

from typing import Any

__all__ = ["StatusError", "status_success"]


class StatusError(Exception):
    """A request failed; :meth:`to_status` is the ``Status`` body sent with ``code``.

    Raised anywhere inside request handling and turned into the response by the ASGI app.
    """

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = dict(headers or {})
        retry = (details or {}).get("retryAfterSeconds")
        if retry and not any(k.lower() == "retry-after" for k in self.headers):
            self.headers["Retry-After"] = str(retry)  # as kube's response writer adds it

    def to_status(self) -> dict[str, Any]:
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:  # Go's StatusReasonUnknown ("") is omitted
            status["reason"] = self.reason
        if self.details is not None:  # a generic 404/405 carries an empty ``details: {}``
            status["details"] = self.details
        status["code"] = self.code
        return status

    @classmethod
    def from_status(cls, status: dict[str, Any]) -> StatusError:
        """Wrap a failure Status dict built elsewhere (the semantics modules build their own)."""
        return cls(
            int(status.get("code") or 500),
            str(status.get("reason") or ""),
            str(status.get("message") or ""),
            details=status.get("details"),
        )

    # -- constructors named for the reason -------------------------------------------------

    @staticmethod
    def _details(group: str, resource: str, name: str | None) -> dict[str, Any]:
        details: dict[str, Any] = {}
        if name:
            details["name"] = name
        if group:
            details["group"] = group
        details["kind"] = resource
        return details

    @classmethod
    def not_found(cls, group: str, resource: str, name: str) -> StatusError:
        qualified = f"{resource}.{group}" if group else resource
        return cls(
            404,
            "NotFound",
            f'{qualified} "{name}" not found',
            details=cls._details(group, resource, name),
        )

    @classmethod
    def already_exists(cls, group: str, resource: str, name: str) -> StatusError:
        qualified = f"{resource}.{group}" if group else resource
        return cls(
            409,
            "AlreadyExists",
            f'{qualified} "{name}" already exists',
            details=cls._details(group, resource, name),
        )

    @classmethod
    def conflict(cls, group: str, resource: str, name: str, why: str) -> StatusError:
        qualified = f"{resource}.{group}" if group else resource
        return cls(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {qualified} "{name}": {why}',
            details=cls._details(group, resource, name),
        )

    @classmethod
    def stale(cls, group: str, resource: str, name: str) -> StatusError:
        return cls.conflict(
            group,
            resource,
            name,
            "the object has been modified; please apply your changes to the latest version "
            "and try again",
        )

    @classmethod
    def invalid(cls, group: str, kind: str, name: str, causes: list[dict[str, Any]]) -> StatusError:
        qualified = f"{kind}.{group}" if group else kind
        texts: list[str] = []
        for c in causes:  # the message lists each error once, as Go's ToAggregate does
            line = (
                f"{c.get('field', '')}: {c.get('message', '')}" if c.get("field") else c["message"]
            )
            if line not in texts:
                texts.append(line)
        text = ", ".join(texts)
        if len(texts) > 1:
            text = f"[{text}]"
        details: dict[str, Any] = {"name": name} if name else {}
        if group:
            details["group"] = group
        details["kind"] = kind
        details["causes"] = causes
        return cls(422, "Invalid", f'{qualified} "{name}" is invalid: {text}', details=details)

    @classmethod
    def forbidden(
        cls, group: str, resource: str, name: str, why: str, *, causes: list[Any] | None = None
    ) -> StatusError:
        qualified = f"{resource}.{group}" if group else resource
        details = cls._details(group, resource, name)
        if causes:
            details["causes"] = causes
        return cls(403, "Forbidden", f'{qualified} "{name}" is forbidden: {why}', details=details)

    @classmethod
    def bad_request(cls, message: str) -> StatusError:
        return cls(400, "BadRequest", message)

    @classmethod
    def gone(cls, message: str) -> StatusError:
        return cls(410, "Expired", message)

    @classmethod
    def path_not_found(cls) -> StatusError:
        """The 404 for a path the server does not serve (``NewGenericServerResponse``)."""
        return cls(404, "NotFound", "the server could not find the requested resource", details={})

    @classmethod
    def method_not_allowed(cls) -> StatusError:
        """The 405 for a method a served path does not take (``NewGenericServerResponse``)."""
        return cls(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
            details={},
        )

    @classmethod
    def method_not_supported(cls, group: str, resource: str, action: str) -> StatusError:
        """``NewMethodNotSupported``: a verb the resource does not serve (``watch``)."""
        qualified = f"{resource}.{group}" if group else resource
        details: dict[str, Any] = {"group": group} if group else {}
        details["kind"] = resource
        return cls(
            405,
            "MethodNotAllowed",
            f'{action} is not supported on resources of kind "{qualified}"',
            details=details,
        )

    @classmethod
    def internal(cls, message: str) -> StatusError:
        """A plain Go error turned into a Status: 500, no reason, the error's text."""
        return cls(500, "", message)

    @classmethod
    def unsupported_media(cls, content_type: str) -> StatusError:
        return cls(
            415,
            "UnsupportedMediaType",
            f"the body of the request was in an unknown format ({content_type}) - accepted media "
            "types include: application/json, application/yaml, application/json-patch+json, "
            "application/merge-patch+json, application/strategic-merge-patch+json, "
            "application/apply-patch+yaml",
        )


def status_success(details: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``Status`` with ``status: Success`` that some deletes return."""
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
    }
    if details:
        status["details"] = details
    return status
