"""pods/log, exec, attach and portforward without a kubelet: kube-apiserver's answers, rule by
rule (the conformance scenarios in ``logs/`` cover the unscheduled and missing cases)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from kcm.apiserver import ApiServer

pytestmark = pytest.mark.anyio

PODS = "/api/v1/namespaces/default/pods"
NODES = "/api/v1/nodes"
UPGRADE = {"Connection": "Upgrade", "Upgrade": "SPDY/3.1"}


@pytest.fixture
async def http(api_server: ApiServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api_server.url, timeout=10) as client:
        yield client


async def make_pod(http: httpx.AsyncClient, name: str = "p", **spec: Any) -> None:
    containers = [{"name": "c", "image": "busybox"}]
    body = {"metadata": {"name": name}, "spec": {"containers": containers, **spec}}
    assert (await http.post(PODS, json=body)).status_code == 201


async def make_node(http: httpx.AsyncClient, name: str, status: dict[str, Any]) -> None:
    response = await http.post(NODES, json={"metadata": {"name": name}, "status": status})
    assert response.status_code == 201


async def failure(response: httpx.Response) -> tuple[int, str, str]:
    body = response.json()
    assert body["kind"] == "Status"
    return response.status_code, body.get("reason", ""), body["message"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"tailLines": "abc"}, 'strconv.ParseInt: parsing "abc": invalid syntax'),
        ({"limitBytes": "9" * 20}, f'strconv.ParseInt: parsing "{"9" * 20}": value out of range'),
        (
            {"sinceTime": "yesterday"},
            'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" '
            'as "2006"',
        ),
        (
            {"sinceTime": "2001-02-03 04:05:06Z"},
            'parsing time "2001-02-03 04:05:06Z" as "2006-01-02T15:04:05Z07:00": cannot parse '
            '" 04:05:06Z" as "T"',
        ),
    ],
)
async def test_log_options_that_do_not_convert_are_400(
    http: httpx.AsyncClient, query: dict[str, str], message: str
) -> None:
    """Before the pod is even looked up."""
    response = await http.get(f"{PODS}/nope/log", params=query)
    assert await failure(response) == (400, "BadRequest", message)


async def test_log_options_are_validated_before_the_pod_is_looked_up(
    http: httpx.AsyncClient,
) -> None:
    query = {"limitBytes": "0", "sinceSeconds": "5", "sinceTime": "2001-02-03T04:05:06Z"}
    body = (await http.get(f"{PODS}/nope/log", params=query)).json()
    assert body["code"] == 422
    assert body["message"] == (
        'PodLogOptions "nope" is invalid: [limitBytes: Invalid value: 0: must be greater than 0, '
        "[]: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified]"
    )
    assert [c["field"] for c in body["details"]["causes"]] == ["limitBytes", "[]"]


async def test_log_of_a_pod_on_a_node_names_the_kubelet_it_cannot_reach(
    http: httpx.AsyncClient,
) -> None:
    """The preferred address type (Hostname before InternalIP) and the kubelet's port; the log
    options go to the kubelet as its query."""
    status = {
        "addresses": [
            {"type": "InternalIP", "address": "10.0.0.7"},
            {"type": "Hostname", "address": "node-a"},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10999}},
    }
    await make_node(http, "node-a", status)
    await make_pod(http, nodeName="node-a")
    response = await http.get(f"{PODS}/p/log", params={"tailLines": "3", "follow": "yes"})
    code, _, message = await failure(response)
    assert code == 500
    assert message == (
        'Get "https://node-a:10999/containerLogs/default/p/c?follow=true&tailLines=3": '
        "dial tcp node-a:10999: connect: connection refused"
    )


async def test_a_node_without_addresses_is_a_500(http: httpx.AsyncClient) -> None:
    await make_node(http, "bare", {})
    await make_pod(http, nodeName="bare")
    for response in (
        await http.get(f"{PODS}/p/log"),
        await http.post(f"{PODS}/p/exec", params={"command": "ls"}),
    ):
        code, _, message = await failure(response)
        assert (code, message) == (500, "no preferred addresses found; known addresses: []")
        assert "reason" not in response.json()  # Go's empty StatusReasonUnknown is omitted


async def test_exec_attach_portforward_need_an_upgrade_then_fail_to_dial(
    http: httpx.AsyncClient,
) -> None:
    await make_node(http, "n", {"addresses": [{"type": "InternalIP", "address": "10.0.0.9"}]})
    await make_pod(http, nodeName="n")
    for sub, query in (
        ("exec", {"command": "ls"}),
        ("attach", {}),
        ("portforward", {"ports": "80"}),
    ):
        plain = await http.post(f"{PODS}/p/{sub}", params=query)
        assert await failure(plain) == (400, "BadRequest", "Upgrade request required")
        upgraded = await http.post(f"{PODS}/p/{sub}", params=query, headers=UPGRADE)
        code, _, message = await failure(upgraded)
        assert code == 500
        assert (
            message == "error dialing backend: dial tcp 10.0.0.9:10250: connect: connection refused"
        )


async def test_exec_checks_the_container_and_portforward_the_ports(
    http: httpx.AsyncClient,
) -> None:
    await make_pod(http)
    exec_ = await http.post(f"{PODS}/p/exec", params={"container": "x", "command": "ls"})
    assert await failure(exec_) == (400, "BadRequest", "container x is not valid for pod p")
    forward = await http.post(f"{PODS}/p/portforward", params={"ports": "80,http"})
    assert await failure(forward) == (
        400,
        "BadRequest",
        'cannot convert to []int32: strconv.ParseUint: parsing "http": invalid syntax',
    )


async def test_a_websocket_upgrade_gets_the_status_as_a_plain_response(
    api_server: ApiServer, http: httpx.AsyncClient
) -> None:
    """kubectl exec tries a websocket first; kcm refuses it with kube's Status (not a bare 500
    from the ASGI server), so kubectl reports the real reason."""
    await make_pod(http)
    host, port = api_server.url.removeprefix("http://").rsplit(":", 1)
    request = (
        f"GET {PODS}/p/exec?command=ls&stdout=true HTTP/1.1\r\nHost: {host}\r\n"
        "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n"
    )
    async with await anyio.connect_tcp(host, int(port)) as stream:
        await stream.send(request.encode())
        reply = b""
        with anyio.fail_after(5):
            while b"pod p does not have a host assigned" not in reply:
                reply += await stream.receive()
    assert reply.startswith(b"HTTP/1.1 400 ")
