"""``pods/log``, ``exec``, ``attach`` and ``portforward``: kube-apiserver's answers without a
kubelet.

kube-apiserver reads the options from the query (``PodLogOptions``, ``PodExecOptions``, ...),
finds the pod, its container and its node, and proxies to the kubelet at the node's preferred
address (``pkg/registry/core/pod/strategy.go``: ``LogLocation``, ``streamLocation``). kcm runs
no kubelet, so every step before the proxy answers as kube's does, and the proxy answers as
kube-apiserver does when the kubelet does not accept connections: a pod that was never
scheduled has no log (204, no body) and cannot be exec'd into (400); one on a node gets a 500
naming the kubelet address it could not dial (after a 400 ``Upgrade request required`` for an
exec, attach or port-forward that asked for no stream).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, NoReturn
from urllib.parse import urlencode

from ..._field_errors import Cause, forbidden, invalid
from ..._status import StatusError
from ..._store import Obj
from .._context import Verbs
from .._subresource import StreamReply, Subresource

__all__ = ["PodLog", "PodPortForward", "PodStream"]

_KUBELET_PORT = 10250
_PREFERRED_ADDRESSES = ("Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP")
"""kube-apiserver's default ``--kubelet-preferred-address-types``."""


# -- query parameters, converted as Go's url.Values conversions do ----------------------------


def _bool(query: dict[str, str], key: str) -> bool:
    """``Convert_Slice_string_To_bool``: anything but ``0`` and ``false`` is true."""
    value = query.get(key)
    return value is not None and value != "0" and value.lower() != "false"


def _int64(query: dict[str, str], key: str) -> int | None:
    """``Convert_Slice_string_To_Pointer_int64`` (``strconv.ParseInt``); 400 on a bad number."""
    text = query.get(key)
    if text is None:
        return None
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise StatusError.bad_request(f'strconv.ParseInt: parsing "{text}": invalid syntax')
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise StatusError.bad_request(f'strconv.ParseInt: parsing "{text}": value out of range')
    return value


_RFC3339 = ("2006", "-", "01", "-", "02", "T", "15", ":", "04", ":", "05", "Z07:00")
_ELEMENT = {
    "2006": r"\d{4}",
    "01": r"\d{2}",
    "02": r"\d{2}",
    "15": r"\d{2}",
    "04": r"\d{2}",
    "05": r"\d{2}(?:[.,]\d+)?",
    "Z07:00": r"Z|[+-]\d{2}:\d{2}",
}


def _time(query: dict[str, str], key: str) -> str | None:
    """``metav1.Time.UnmarshalQueryParameter``: RFC 3339; 400 with Go's ``time.Parse`` error."""
    text = query.get(key)
    if text is None or text in ("", "null"):
        return None
    rest = text
    for element in _RFC3339:
        pattern = _ELEMENT.get(element, re.escape(element))
        match = re.match(pattern, rest)
        if match is None:
            raise StatusError.bad_request(
                f'parsing time "{text}" as "2006-01-02T15:04:05Z07:00": cannot parse '
                f'"{rest}" as "{element}"'
            )
        rest = rest[match.end() :]
    if rest:
        raise StatusError.bad_request(f'parsing time "{text}": extra text: "{rest}"')
    return text


def _ports(query: dict[str, str]) -> list[int]:
    """``Convert_Slice_string_To_Slice_int32``: comma-separated 16-bit ports."""
    if "ports" not in query:
        return []
    ports = []
    for part in query["ports"].split(","):
        if not part.isdigit():
            raise StatusError.bad_request(
                f'cannot convert to []int32: strconv.ParseUint: parsing "{part}": invalid syntax'
            )
        if int(part) >= 2**16:
            raise StatusError.bad_request(
                f'cannot convert to []int32: strconv.ParseUint: parsing "{part}": value out of '
                "range"
            )
        ports.append(int(part))
    return ports


# -- the pod, its container and its kubelet -----------------------------------------------------


def _container(pod: Obj, container: str) -> str:
    """``validateContainer``: the named container, or the only one; 400 otherwise."""
    spec = pod.get("spec") or {}
    name = pod["metadata"]["name"]
    every = [
        str(c.get("name", ""))
        for key in ("initContainers", "containers", "ephemeralContainers")
        for c in spec.get(key) or ()
    ]
    if container:
        if container not in every:
            raise StatusError.bad_request(f"container {container} is not valid for pod {name}")
        return container
    containers = spec.get("containers") or []
    if len(containers) == 1:
        return str(containers[0].get("name", ""))
    if not containers:
        raise StatusError.bad_request(f"a container name must be specified for pod {name}")
    raise StatusError.bad_request(
        f"a container name must be specified for pod {name}, choose one of: [{' '.join(every)}]"
    )


def _kubelet(verbs: Verbs, pod: Obj) -> str:
    """``GetConnectionInfo``: ``host:port`` of the kubelet on the pod's node. A missing node
    is a 404 named as the request's resource (the pod's), as kube-apiserver reports it."""
    node_name = str((pod.get("spec") or {}).get("nodeName") or "")
    nodes = verbs.ctx.registry.lookup("", "v1", "nodes")
    node = verbs.ctx.store.get(nodes.storage_key, "", node_name) if nodes else None
    if node is None:
        raise StatusError.not_found("", "pods", node_name)
    status = node.get("status") or {}
    addresses = status.get("addresses") or []
    host = next(
        (
            str(a.get("address", ""))
            for kind in _PREFERRED_ADDRESSES
            for a in addresses
            if a.get("type") == kind
        ),
        None,
    )
    if host is None:
        known = " ".join(f"{{{a.get('type', '')} {a.get('address', '')}}}" for a in addresses)
        raise StatusError(500, "", f"no preferred addresses found; known addresses: [{known}]")
    endpoint = (status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}
    port = endpoint.get("Port")
    if not isinstance(port, int) or port <= 0:
        port = _KUBELET_PORT
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{port}"


def _unreachable(address: str) -> str:
    """Go's dial error for a kubelet that accepts no connections (kcm runs none)."""
    return f"dial tcp {address}: connect: connection refused"


def _dial(verbs: Verbs, pod: Obj, upgrade: bool) -> NoReturn:
    """The upgrade-aware proxy to the pod's kubelet: 400 for a pod without a node or a request
    without an upgrade, else the dial error."""
    if not (pod.get("spec") or {}).get("nodeName"):
        name = pod["metadata"]["name"]
        raise StatusError.bad_request(f"pod {name} does not have a host assigned")
    address = _kubelet(verbs, pod)
    if not upgrade:
        raise StatusError.bad_request("Upgrade request required")
    raise StatusError(500, "", f"error dialing backend: {_unreachable(address)}")


# -- the subresources ---------------------------------------------------------------------------


class PodLog(Subresource):
    """``GET pods/NAME/log``: ``PodLogOptions`` checked first (422), then the pod and container;
    204 for a pod without a node, else the kubelet's (unreachable) log endpoint."""

    connects: ClassVar[bool] = True

    def connect(
        self, verbs: Verbs, ns: str, name: str, query: dict[str, str], *, upgrade: bool
    ) -> StreamReply:
        options = _log_options(query)
        _raise_invalid_options(name, options)
        pod = verbs.existing(self.strategy.resource, ns, name)
        container = _container(pod, query.get("container", ""))
        if not (pod.get("spec") or {}).get("nodeName"):
            return StreamReply(204)
        address = _kubelet(verbs, pod)
        params = {k: str(v).lower() if isinstance(v, bool) else v for k, v in options.items()}
        params = {k: v for k, v in sorted(params.items()) if v not in (None, "false")}
        url = f"https://{address}/containerLogs/{ns}/{name}/{container}"
        if params:
            url += "?" + urlencode(params)
        raise StatusError(500, "", f'Get "{url}": {_unreachable(address)}')


def _log_options(query: dict[str, str]) -> dict[str, Any]:
    """``PodLogOptions`` from the query (400 for a value that does not convert)."""
    return {
        "follow": _bool(query, "follow"),
        "limitBytes": _int64(query, "limitBytes"),
        "previous": _bool(query, "previous"),
        "sinceSeconds": _int64(query, "sinceSeconds"),
        "sinceTime": _time(query, "sinceTime"),
        "tailLines": _int64(query, "tailLines"),
        "timestamps": _bool(query, "timestamps"),
    }


def _raise_invalid_options(name: str, options: dict[str, Any]) -> None:
    """``ValidatePodLogOptions``: 422 Invalid ``PodLogOptions``."""
    causes: list[Cause] = []
    tail, limit, since = options["tailLines"], options["limitBytes"], options["sinceSeconds"]
    if tail is not None and tail < 0:
        causes.append(invalid("tailLines", tail, "must be greater than or equal to 0"))
    if limit is not None and limit < 1:
        causes.append(invalid("limitBytes", limit, "must be greater than 0"))
    if since is not None and options["sinceTime"] is not None:
        only_one = "at most one of `sinceTime` or `sinceSeconds` may be specified"
        causes.append(forbidden("[]", only_one))
    elif since is not None and since < 1:
        causes.append(invalid("sinceSeconds", since, "must be greater than 0"))
    if causes:
        raise StatusError.invalid("", "PodLogOptions", name, [dict(c) for c in causes])


class PodStream(Subresource):
    """``pods/NAME/exec`` and ``attach`` (GET for websockets, POST for SPDY): a stream to a
    container through the kubelet; the pod, its container and its node must be there."""

    connects: ClassVar[bool] = True

    def connect(
        self, verbs: Verbs, ns: str, name: str, query: dict[str, str], *, upgrade: bool
    ) -> StreamReply:
        pod = verbs.existing(self.strategy.resource, ns, name)
        _container(pod, query.get("container", ""))
        _dial(verbs, pod, upgrade)


class PodPortForward(Subresource):
    """``pods/NAME/portforward``: no container to pick, ports must be 16-bit numbers."""

    connects: ClassVar[bool] = True

    def connect(
        self, verbs: Verbs, ns: str, name: str, query: dict[str, str], *, upgrade: bool
    ) -> StreamReply:
        _ports(query)
        _dial(verbs, verbs.existing(self.strategy.resource, ns, name), upgrade)
