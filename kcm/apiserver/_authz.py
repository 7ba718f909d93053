"""Authorization: what a request asks for, whether its user may, and kube's 403.

kube-apiserver decides before it routes: the attributes come from the URL alone (kube's
``RequestInfoFactory``), so a user who may not list a resource that does not exist gets 403,
not 404. The verb is the HTTP method's (``get``/``list``/``watch``, ``create``, ``update``,
``patch``, ``delete``/``deletecollection``; ``watch`` for ``/watch/`` paths), a namespaces
path names its namespace, and a list or watch whose field selector requires one
``metadata.name`` is asked for that name. Paths outside ``/api`` and ``/apis`` resources
(discovery, ``/healthz``, ``/version``) are non-resource requests, their verb the lower-case
method. The decision is :func:`._rbac.authorize`'s (``system:masters`` always allowed).
"""

from __future__ import annotations

import json

from ._rbac import Attributes, authorize
from ._requester import Requester
from ._status import StatusError
from ._store import Store

__all__ = ["check", "check_impersonation", "forbidden", "request_attributes"]

_METHOD_VERBS = {
    "POST": "create",
    "GET": "get",
    "HEAD": "get",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}
_NAMESPACE_SUBRESOURCES = ("status", "finalize")
_SERVICE_ACCOUNT = "system:serviceaccount:"
_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def request_attributes(method: str, path: str, params: dict[str, list[str]]) -> Attributes:
    """The attributes of a request, as kube's ``NewRequestInfo`` reads them."""
    trimmed = path.strip("/")
    parts = trimmed.split("/") if trimmed else []  # Go's splitPath
    non_resource = Attributes(verb=method.lower(), path=path)
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return non_resource
    group = ""
    rest = parts[1:]
    if parts[0] == "apis":
        if len(rest) < 3:
            return non_resource
        group, rest = rest[0], rest[1:]
    rest = rest[1:]  # the version
    if rest[0] in ("watch", "proxy"):
        if len(rest) < 2:
            return non_resource  # kube answers an error here; nobody is allowed anything
        verb, rest = rest[0], rest[1:]
    else:
        verb = _METHOD_VERBS.get(method, "")
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) >= 2 else ""
    subresource = rest[2] if len(rest) >= 3 and verb != "proxy" else ""
    if not name and verb == "get":
        verb = "watch" if _watching(params) else "list"
        name = _selected_name(params)
    if not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(
        verb=verb,
        namespace=namespace,
        group=group,
        resource=resource,
        subresource=subresource,
        name=name,
        resource_request=True,
    )


def _watching(params: dict[str, list[str]]) -> bool:
    values = params.get("watch") or []
    return bool(values) and values[0].lower() not in ("false", "0", "")


def _selected_name(params: dict[str, list[str]]) -> str:
    """The name a ``fieldSelector`` requires exactly (``metadata.name=x``), if any."""
    from kcm.selectors import FieldSelector, SelectorParseError

    text = (params.get("fieldSelector") or [""])[0]
    if not text:
        return ""
    try:
        selector = FieldSelector.parse(text)
    except SelectorParseError:
        return ""
    for requirement in selector.requirements:
        if requirement.field == "metadata.name" and requirement.operator in ("=", "=="):
            name = requirement.value
            valid = name not in (".", "..") and "/" not in name and "%" not in name
            return name if valid else ""
    return ""


def forbidden(who: Requester, asked: Attributes, reason: str = "") -> StatusError:
    """kube's 403: ``<resource> "<name>" is forbidden: User "u" cannot <verb> resource ...``."""
    if not asked.is_resource:
        message = f"User {_q(who.name)} cannot {asked.verb} path {_q(asked.path)}"
    else:
        resource = asked.resource
        if asked.subresource:
            resource += "/" + asked.subresource
        message = (
            f"User {_q(who.name)} cannot {asked.verb} resource {_q(resource)} in API group "
            f"{_q(asked.group)}"
        )
        if asked.namespace:
            message += f" in the namespace {_q(asked.namespace)}"
        else:
            message += " at the cluster scope"
    message = message.translate(_HTML)
    if reason:
        message += f": {reason}"
    headers = {"X-Content-Type-Options": "nosniff"}
    if not asked.is_resource:
        return StatusError(403, "Forbidden", f"forbidden: {message}", details={}, headers=headers)
    qualified = f"{asked.resource}.{asked.group}" if asked.group else asked.resource
    details: dict[str, str] = {}
    if asked.name:
        details["name"] = asked.name
        text = f"{qualified} {_q(asked.name)} is forbidden: {message}"
    else:
        text = f"{qualified} is forbidden: {message}"
    if asked.group:
        details["group"] = asked.group
    details["kind"] = asked.resource
    return StatusError(403, "Forbidden", text, details=details, headers=headers)


def _q(text: str) -> str:
    """Go's ``%q`` of a string."""
    return json.dumps(text, ensure_ascii=False)


def check(store: Store, who: Requester, asked: Attributes) -> None:
    """Raises kube's 403 unless ``who`` may do what is ``asked``."""
    allowed, reason = authorize(store, who, asked)
    if not allowed:
        raise forbidden(who, asked, reason)


def check_impersonation(store: Store, caller: Requester, headers: dict[str, str]) -> None:
    """kube's impersonation filter: the caller needs ``impersonate`` on the user (or the
    ServiceAccount) and on each group it asks to act as.

    Raises:
        StatusError: 403 for the first one it may not impersonate.
    """
    user = headers.get("impersonate-user", "")
    wanted: list[Attributes] = []
    if user.startswith(_SERVICE_ACCOUNT) and user.count(":") == 3:
        namespace, name = user.removeprefix(_SERVICE_ACCOUNT).split(":", 1)
        sa = Attributes("impersonate", namespace, "", "serviceaccounts", name=name)
        wanted.append(sa)
    elif user:
        wanted.append(Attributes("impersonate", resource="users", name=user, resource_request=True))
    for group in (g for g in headers.get("impersonate-group", "").split(",") if g):
        wanted.append(
            Attributes("impersonate", resource="groups", name=group, resource_request=True)
        )
    uid = headers.get("impersonate-uid", "")
    if uid:
        wanted.append(
            Attributes(
                "impersonate",
                group="authentication.k8s.io",
                resource="uids",
                name=uid,
                resource_request=True,
            )
        )
    for asked in wanted:
        check(store, caller, asked)
