"""The REST protocol, driven over HTTP with httpx against an in-process server (both backends)."""

from __future__ import annotations

import base64
import json
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import yaml

from kcm.apiserver import ApiServer
from kcm.testing import FakeClock, client_config_for, crd_manifest

pytestmark = pytest.mark.anyio

CM = "/api/v1/namespaces/default/configmaps"
DEPLOY = "/apis/apps/v1/namespaces/default/deployments"


@pytest.fixture
async def http(api_server: ApiServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api_server.url, timeout=10) as client:
        yield client


def cm(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}}


def deployment(name: str, replicas: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


async def watch_lines(
    http: httpx.AsyncClient, path: str, count: int, **params: str
) -> list[dict[str, Any]]:
    """The events of a watch that the server ends after a second; there must be ``count``.

    (Reading to the end rather than breaking out keeps httpx's generators tidy on trio.)
    """
    out: list[dict[str, Any]] = []
    with anyio.fail_after(5):
        async with http.stream(
            "GET", path, params={"watch": "1", "timeoutSeconds": "1", **params}
        ) as resp:
            assert resp.status_code == 200
            out = [json.loads(line) async for line in resp.aiter_lines() if line]
    assert len(out) == count, out
    return out


async def test_create_sets_metadata_and_get_returns_it(http: httpx.AsyncClient) -> None:
    r = await http.post(CM, json={**cm("a"), "data": {"k": "v"}, "extra": {"kept": True}})
    assert r.status_code == 201
    created = r.json()
    meta = created["metadata"]
    assert meta["uid"]
    assert meta["creationTimestamp"].endswith("Z")
    assert "generation" not in meta  # kube-apiserver keeps one only for kinds with a spec
    assert int(meta["resourceVersion"]) > 0
    got = (await http.get(f"{CM}/a")).json()
    assert got == created
    assert "extra" not in got  # unknown fields are dropped, as kube-apiserver drops them


async def test_generate_name_and_conflicts(http: httpx.AsyncClient) -> None:
    r = await http.post(CM, json={"metadata": {"generateName": "gen-"}})
    assert r.status_code == 201
    name = r.json()["metadata"]["name"]
    assert name.startswith("gen-")
    assert len(name) == len("gen-") + 5
    r = await http.post(CM, json={"metadata": {"name": name}})
    assert r.status_code == 409
    body = r.json()
    assert body["kind"] == "Status"
    assert body["reason"] == "AlreadyExists"
    assert body["details"] == {"name": name, "kind": "configmaps"}


async def test_a_generated_name_that_is_taken_is_drawn_again(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kube-apiserver's RetryGenerateName: a taken generated name is drawn again, up to 8
    draws in all; only then does the create answer AlreadyExists."""
    from kcm.apiserver import _rest

    assert (await http.post(CM, json=cm("gen-taken"))).status_code == 201
    draws: list[str] = []

    def draw(prefix: str) -> str:
        draws.append(prefix)
        return f"{prefix}taken" if len(draws) < 3 else f"{prefix}free{len(draws)}"

    monkeypatch.setattr(_rest, "generate_name", draw)
    r = await http.post(CM, json={"metadata": {"generateName": "gen-"}})
    assert r.status_code == 201
    assert r.json()["metadata"]["name"] == "gen-free3"
    assert draws == ["gen-"] * 3

    draws.clear()
    monkeypatch.setattr(_rest, "generate_name", lambda prefix: draws.append(prefix) or "gen-taken")
    r = await http.post(CM, json={"metadata": {"generateName": "gen-"}})
    assert r.status_code == 409
    assert r.json()["reason"] == "AlreadyExists"
    assert len(draws) == 8


async def test_namespace_must_exist_and_name_is_validated(http: httpx.AsyncClient) -> None:
    r = await http.post("/api/v1/namespaces/nope/configmaps", json=cm("a"))
    assert r.status_code == 404
    assert r.json()["details"]["kind"] == "namespaces"
    r = await http.post(CM, json=cm("Bad_Name"))
    assert r.status_code == 422
    body = r.json()
    assert body["reason"] == "Invalid"
    assert body["details"]["causes"][0]["field"] == "metadata.name"


async def test_update_conflict_on_stale_resource_version(http: httpx.AsyncClient) -> None:
    created = (await http.post(CM, json=cm("a"))).json()
    fresh = {**created, "data": {"x": "1"}}
    r = await http.put(f"{CM}/a", json=fresh)
    assert r.status_code == 200
    assert int(r.json()["metadata"]["resourceVersion"]) > int(
        created["metadata"]["resourceVersion"]
    )
    stale = {**created, "data": {"x": "2"}}
    r = await http.put(f"{CM}/a", json=stale)
    assert r.status_code == 409
    assert r.json()["reason"] == "Conflict"
    # a no-op update does not write
    current = (await http.get(f"{CM}/a")).json()
    again = (await http.put(f"{CM}/a", json=current)).json()
    assert again["metadata"]["resourceVersion"] == current["metadata"]["resourceVersion"]


async def test_generation_bumps_only_on_spec_and_status_is_a_subresource(
    http: httpx.AsyncClient,
) -> None:
    created = (await http.post(DEPLOY, json={**deployment("d"), "status": {"replicas": 9}})).json()
    assert "replicas" not in created.get("status", {})  # status is reset on create
    r = await http.patch(
        f"{DEPLOY}/d",
        json={"metadata": {"labels": {"a": "b"}}, "status": {"replicas": 5}},
        headers={"content-type": "application/merge-patch+json"},
    )
    body = r.json()
    assert body["metadata"]["generation"] == 1
    assert body.get("status", {}).get("replicas") is None  # main resource ignores status
    r = await http.patch(
        f"{DEPLOY}/d/status",
        json={"status": {"replicas": 5}, "spec": {"replicas": 7}},
        headers={"content-type": "application/merge-patch+json"},
    )
    body = r.json()
    assert body["status"]["replicas"] == 5
    assert body["spec"]["replicas"] == 1
    r = await http.patch(
        f"{DEPLOY}/d",
        json={"spec": {"replicas": 3}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert r.json()["metadata"]["generation"] == 2


async def test_patch_types(http: httpx.AsyncClient) -> None:
    await http.post(DEPLOY, json=deployment("d"))
    r = await http.patch(
        f"{DEPLOY}/d",
        json=[{"op": "replace", "path": "/spec/replicas", "value": 4}],
        headers={"content-type": "application/json-patch+json"},
    )
    assert r.status_code == 200
    assert r.json()["spec"]["replicas"] == 4
    r = await http.patch(
        f"{DEPLOY}/d",
        json={"spec": {"template": {"spec": {"containers": [{"name": "side", "image": "b"}]}}}},
        headers={"content-type": "application/strategic-merge-patch+json"},
    )
    names = [c["name"] for c in r.json()["spec"]["template"]["spec"]["containers"]]
    assert names == ["c", "side"] or sorted(names) == ["c", "side"]
    r = await http.patch(
        f"{DEPLOY}/d",
        json=[{"op": "test", "path": "/spec/replicas", "value": 99}],
        headers={"content-type": "application/json-patch+json"},
    )
    assert r.status_code == 422
    r = await http.patch(
        f"{DEPLOY}/d",
        content=b"{}",
        headers={"content-type": "text/plain"},
    )
    assert r.status_code == 415


async def test_server_side_apply_conflicts_and_force(http: httpx.AsyncClient) -> None:
    apply = {"content-type": "application/apply-patch+yaml"}
    body = json.dumps(deployment("d", replicas=2))
    r = await http.patch(f"{DEPLOY}/d", content=body, headers=apply, params={"fieldManager": "a"})
    assert r.status_code == 201
    assert r.json()["metadata"]["managedFields"][0]["manager"] == "a"
    body = json.dumps(deployment("d", replicas=3))
    r = await http.patch(f"{DEPLOY}/d", content=body, headers=apply, params={"fieldManager": "b"})
    assert r.status_code == 409
    assert any(c["field"] == ".spec.replicas" for c in r.json()["details"]["causes"])
    r = await http.patch(
        f"{DEPLOY}/d", content=body, headers=apply, params={"fieldManager": "b", "force": "true"}
    )
    assert r.status_code == 200
    assert r.json()["spec"]["replicas"] == 3
    r = await http.patch(f"{DEPLOY}/d", content=body, headers=apply)
    assert r.status_code == 422  # PatchOptions: fieldManager is required for apply
    assert r.json()["details"]["causes"][0]["field"] == "fieldManager"


async def test_scale_subresource(http: httpx.AsyncClient) -> None:
    await http.post(DEPLOY, json=deployment("d", replicas=2))
    scale = (await http.get(f"{DEPLOY}/d/scale")).json()
    assert scale["kind"] == "Scale"
    assert scale["spec"]["replicas"] == 2
    assert scale["status"]["selector"] == "app=d"
    r = await http.patch(
        f"{DEPLOY}/d/scale",
        json={"spec": {"replicas": 6}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert r.json()["spec"]["replicas"] == 6
    assert (await http.get(f"{DEPLOY}/d")).json()["spec"]["replicas"] == 6


async def test_list_selectors_and_pagination(http: httpx.AsyncClient) -> None:
    for i in range(5):
        await http.post(CM, json=cm(f"c{i}", tier="a" if i % 2 else "b", n=str(i)))
    names = lambda r: [o["metadata"]["name"] for o in r.json()["items"]]  # noqa: E731
    assert names(await http.get(CM, params={"labelSelector": "tier=a"})) == ["c1", "c3"]
    assert names(await http.get(CM, params={"labelSelector": "tier!=a,n"})) == ["c0", "c2", "c4"]
    assert names(await http.get(CM, params={"labelSelector": "n in (1,2)"})) == ["c1", "c2"]
    assert names(await http.get(CM, params={"labelSelector": "n notin (1,2),!missing"})) == [
        "c0",
        "c3",
        "c4",
    ]
    assert names(await http.get(CM, params={"fieldSelector": "metadata.name=c3"})) == ["c3"]
    r = await http.get("/api/v1/pods", params={"fieldSelector": "spec.bogus=x"})
    assert r.status_code == 400
    page1 = await http.get(CM, params={"limit": "2"})
    meta = page1.json()["metadata"]
    assert names(page1) == ["c0", "c1"]
    assert meta["remainingItemCount"] == 3
    await http.delete(f"{CM}/c2")  # the snapshot does not change under the continue token
    page2 = await http.get(CM, params={"limit": "2", "continue": meta["continue"]})
    assert names(page2) == ["c2", "c3"]
    assert page2.json()["metadata"]["resourceVersion"] == meta["resourceVersion"]


async def test_expired_continue_and_exact_list(
    http: httpx.AsyncClient, api_server: ApiServer
) -> None:
    first = (await http.post(CM, json=cm("a"))).json()["metadata"]["resourceVersion"]
    await http.post(CM, json=cm("b"))
    exact = await http.get(CM, params={"resourceVersion": first, "resourceVersionMatch": "Exact"})
    assert [o["metadata"]["name"] for o in exact.json()["items"]] == ["a"]
    token = (await http.get(CM, params={"limit": "1"})).json()["metadata"]["continue"]
    api_server.faults.compact()
    r = await http.get(CM, params={"limit": "1", "continue": token})
    assert r.status_code == 410
    assert r.json()["reason"] == "Expired"
    r = await http.get(CM, params={"resourceVersion": "999999"})
    assert r.status_code == 504
    assert r.json()["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"


async def test_watch_from_resource_version_replays_then_streams(
    http: httpx.AsyncClient, api_server: ApiServer
) -> None:
    rv = (await http.post(CM, json=cm("a"))).json()["metadata"]["resourceVersion"]
    await http.post(CM, json=cm("b"))
    await http.delete(f"{CM}/a")

    async def later() -> None:
        await anyio.sleep(0.05)
        await http.post(CM, json=cm("c"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(later)
        events = await watch_lines(http, CM, 3, resourceVersion=rv)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "b"),
        ("DELETED", "a"),
        ("ADDED", "c"),
    ]
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs)


async def test_watch_too_old_gets_410_error_event(
    http: httpx.AsyncClient, api_server: ApiServer
) -> None:
    rv = (await http.post(CM, json=cm("a"))).json()["metadata"]["resourceVersion"]
    await http.post(CM, json=cm("b"))
    api_server.faults.compact()
    [event] = await watch_lines(http, CM, 1, resourceVersion=rv)
    assert event["type"] == "ERROR"
    assert event["object"]["code"] == 410
    assert event["object"]["reason"] == "Expired"
    assert "too old resource version" in event["object"]["message"]


async def test_watch_with_selector_sees_objects_leave(http: httpx.AsyncClient) -> None:
    await http.post(CM, json=cm("a", app="x"))
    rv = (await http.get(CM)).json()["metadata"]["resourceVersion"]
    await http.patch(
        f"{CM}/a",
        json={"metadata": {"labels": {"app": "y"}}},
        headers={"content-type": "application/merge-patch+json"},
    )
    moved = (await http.get(f"{CM}/a")).json()["metadata"]["resourceVersion"]
    [event] = await watch_lines(http, CM, 1, resourceVersion=rv, labelSelector="app=x")
    assert event["type"] == "DELETED"
    # as kube's watch cache: the state it was selected in, at the resourceVersion it left
    assert event["object"]["metadata"]["labels"]["app"] == "x"
    assert event["object"]["metadata"]["resourceVersion"] == moved


async def test_send_initial_events_ends_with_bookmark(http: httpx.AsyncClient) -> None:
    await http.post(CM, json=cm("a"))
    await http.post(CM, json=cm("b"))
    events = await watch_lines(
        http,
        CM,
        3,
        sendInitialEvents="true",
        resourceVersionMatch="NotOlderThan",
        allowWatchBookmarks="true",
    )
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "BOOKMARK"]
    bookmark = events[2]["object"]
    assert bookmark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert bookmark["kind"] == "ConfigMap"


async def test_watch_timeout_ends_stream_cleanly(http: httpx.AsyncClient) -> None:
    with anyio.fail_after(5):
        async with http.stream(
            "GET", CM, params={"watch": "1", "resourceVersion": "0", "timeoutSeconds": "1"}
        ) as resp:
            lines = [line async for line in resp.aiter_lines() if line]
    assert all(json.loads(line)["type"] == "ADDED" for line in lines)


@pytest.mark.parametrize("write", [False, True])
async def test_bookmarks_follow_the_clock_and_precede_the_timeout(write: bool) -> None:
    """As kube-apiserver's watch cache: a BOOKMARK every interval and one 2 s before
    timeoutSeconds, each only once the server is past the resourceVersion the watch started
    from (so none at all when nothing was written)."""
    clock = FakeClock()
    async with (
        ApiServer(clock=clock, bookmark_interval=30) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        rv = (await http.post(CM, json=cm("a"))).json()["metadata"]["resourceVersion"]
        got: list[dict[str, Any]] = []

        async def read() -> None:
            params = {
                "watch": "1",
                "resourceVersion": rv,
                "allowWatchBookmarks": "true",
                "timeoutSeconds": "45",
            }
            async with http.stream("GET", CM, params=params) as resp:
                got.extend([json.loads(line) async for line in resp.aiter_lines() if line])
            done.set()

        done = anyio.Event()
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(read)
                await server.wait_for_watches()
                await anyio.sleep(0.05)
                moved = rv
                if write:
                    patched = await http.patch(
                        f"{CM}/a",
                        json={"data": {"k": "v2"}},
                        headers={"content-type": "application/merge-patch+json"},
                    )
                    moved = patched.json()["metadata"]["resourceVersion"]
                while not done.is_set():
                    await clock.advance(1)
                    await anyio.sleep(0.02)
    if not write:
        assert got == []
        return
    assert [e["type"] for e in got] == ["MODIFIED", "BOOKMARK", "BOOKMARK"]  # at 30 s and 43 s
    assert [e["object"]["metadata"]["resourceVersion"] for e in got[1:]] == [moved, moved]


async def test_finalizers_and_propagation_policies(http: httpx.AsyncClient) -> None:
    await http.post(CM, json={**cm("a"), "metadata": {"name": "a", "finalizers": ["x/y"]}})
    r = await http.delete(f"{CM}/a")
    assert r.status_code == 200
    kept = (await http.get(f"{CM}/a")).json()
    assert kept["metadata"]["deletionTimestamp"]
    assert kept["metadata"]["finalizers"] == ["x/y"]
    r = await http.patch(
        f"{CM}/a",
        json={"metadata": {"finalizers": None}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert r.status_code == 200
    assert (await http.get(f"{CM}/a")).status_code == 404
    await http.post(CM, json=cm("b"))
    r = await http.request("DELETE", f"{CM}/b", json={"propagationPolicy": "Foreground"})
    assert r.json()["metadata"]["finalizers"] == ["foregroundDeletion"]
    await http.post(CM, json=cm("c"))
    r = await http.request("DELETE", f"{CM}/c", json={"propagationPolicy": "Orphan"})
    assert r.json()["metadata"]["finalizers"] == ["orphan"]
    await http.post(CM, json=cm("d"))
    r = await http.request("DELETE", f"{CM}/d", json={"preconditions": {"uid": "nope"}})
    assert r.status_code == 409
    r = await http.request("DELETE", f"{CM}/d", json={"propagationPolicy": "Background"})
    assert r.json()["status"] == "Success"
    assert (await http.get(f"{CM}/d")).status_code == 404


async def test_delete_collection(http: httpx.AsyncClient) -> None:
    for i in range(3):
        await http.post(CM, json=cm(f"c{i}", keep="yes" if i == 0 else "no"))
    r = await http.delete(CM, params={"labelSelector": "keep=no"})
    assert sorted(o["metadata"]["name"] for o in r.json()["items"]) == ["c1", "c2"]
    left = (await http.get(CM)).json()["items"]
    assert [o["metadata"]["name"] for o in left] == ["c0"]


async def test_namespace_termination(http: httpx.AsyncClient) -> None:
    await http.post("/api/v1/namespaces", json={"metadata": {"name": "tmp"}})
    await http.post("/api/v1/namespaces/tmp/configmaps", json=cm("a"))
    r = await http.delete("/api/v1/namespaces/tmp")
    ns = r.json()
    assert ns["status"]["phase"] == "Terminating"
    assert ns["spec"]["finalizers"] == ["kubernetes"]
    r = await http.post("/api/v1/namespaces/tmp/configmaps", json=cm("b"))
    assert r.status_code == 403
    assert r.json()["details"]["causes"][0]["reason"] == "NamespaceTerminating"
    ns["spec"]["finalizers"] = []
    r = await http.put("/api/v1/namespaces/tmp/finalize", json=ns)
    assert r.status_code == 200
    assert (await http.get("/api/v1/namespaces/tmp")).status_code == 404


async def test_discovery_documents(http: httpx.AsyncClient) -> None:
    assert (await http.get("/version")).json()["major"] == "1"
    assert (await http.get("/api")).json()["versions"] == ["v1"]
    groups = {g["name"] for g in (await http.get("/apis")).json()["groups"]}
    assert {"apps", "batch", "rbac.authorization.k8s.io", "coordination.k8s.io"} <= groups
    core = (await http.get("/api/v1")).json()
    pods = next(r for r in core["resources"] if r["name"] == "pods")
    assert pods["namespaced"]
    assert pods["kind"] == "Pod"
    assert "watch" in pods["verbs"]
    assert any(r["name"] == "pods/status" for r in core["resources"])
    apps = (await http.get("/apis/apps/v1")).json()
    scale = next(r for r in apps["resources"] if r["name"] == "deployments/scale")
    assert scale["kind"] == "Scale"
    assert scale["group"] == "autoscaling"
    r = await http.get(
        "/apis",
        headers={"accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
    )
    assert r.headers["content-type"].startswith("application/json;g=apidiscovery.k8s.io;v=v2")
    assert any(i["metadata"].get("name") == "apps" for i in r.json()["items"])
    assert (await http.get("/apis/nope/v1")).status_code == 404


async def test_paths_the_server_does_not_serve_are_404(http: httpx.AsyncClient) -> None:
    """Not a 500: a legacy watch path that names no resource used to index past its end."""
    for path in ("/api/v1/watch", "/apis/apps/v1/watch", "/api/v1/nope"):
        r = await http.get(path)
        assert r.status_code == 404, path
        assert r.json()["reason"] == "NotFound"
    # outside the APIs kube-apiserver serves: Go's plain text 404
    for path in ("/nope", "/apis/nope.example.com", "/apis/nope.example.com/v1/things"):
        r = await http.get(path)
        assert (r.status_code, r.text) == (404, "404 page not found\n"), path
        assert r.headers["content-type"] == "text/plain; charset=utf-8"
    watch = await http.get("/api/v1/watch/namespaces/default/configmaps?timeoutSeconds=1")
    assert watch.status_code == 200


async def test_discovery_categories(http: httpx.AsyncClient) -> None:
    """Categories as kube-apiserver serves them: every served version of a kind has them."""

    async def categories(path: str, name: str) -> list[str]:
        doc = (await http.get(path)).json()
        found: list[str] = next(r for r in doc["resources"] if r["name"] == name).get(
            "categories", []
        )
        return found

    hpa = "horizontalpodautoscalers"
    assert await categories("/apis/autoscaling/v2", hpa) == ["all"]
    assert await categories("/apis/autoscaling/v1", hpa) == ["all"]
    crds = "customresourcedefinitions"
    assert await categories("/apis/apiextensions.k8s.io/v1", crds) == ["api-extensions"]
    assert await categories("/api/v1", "configmaps") == []


async def test_custom_resource_definitions(http: httpx.AsyncClient) -> None:
    crd = crd_manifest(
        group="example.com",
        kind="Widget",
        status=True,
        scale=(".spec.size", ".status.size"),
    )
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    r = await http.post(crds, json=crd)
    assert r.status_code == 201
    assert r.json()["status"]["conditions"] is None  # the CRD controllers write them next
    got = (await http.get(f"{crds}/widgets.example.com")).json()
    conditions = {c["type"]: c["status"] for c in got["status"]["conditions"]}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    base = "/apis/example.com/v1/namespaces/default/widgets"
    widget = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"size": 1, "anything": {"goes": [1, 2]}},
        "status": {"size": 5},
    }
    r = await http.post(base, json=widget)
    assert r.status_code == 201
    assert "status" not in r.json()
    r = await http.put(f"{base}/w/status", json={**r.json(), "status": {"size": 1}})
    assert r.json()["status"] == {"size": 1}
    r = await http.patch(
        f"{base}/w/scale",
        json={"spec": {"replicas": 3}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert r.json()["spec"]["replicas"] == 3
    got = (await http.get(f"{base}/w")).json()
    assert got["spec"] == {"size": 3, "anything": {"goes": [1, 2]}}
    r = await http.patch(
        f"{base}/w", json={}, headers={"content-type": "application/strategic-merge-patch+json"}
    )
    assert r.status_code == 415
    resources = (await http.get("/apis/example.com/v1")).json()["resources"]
    assert {r["name"] for r in resources} == {"widgets", "widgets/status", "widgets/scale"}
    await http.delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
    assert (await http.get(f"{base}/w")).status_code == 404


async def test_faults_fail_next_and_close_watches(
    http: httpx.AsyncClient, api_server: ApiServer
) -> None:
    api_server.faults.fail_next(2, code=429, retry_after=3)
    r = await http.get(CM)
    assert r.status_code == 429
    assert r.headers["retry-after"] == "3"
    assert r.json()["details"]["retryAfterSeconds"] == 3
    assert (await http.get(CM)).status_code == 429
    assert (await http.get(CM)).status_code == 200
    api_server.faults.fail_next(1, code=500)
    assert (await http.get(CM)).status_code == 500
    with pytest.raises(ValueError, match="429 or 500"):
        api_server.faults.fail_next(1, code=503)

    ended = anyio.Event()

    async def watch() -> None:
        async with http.stream("GET", CM, params={"watch": "1"}) as resp:
            async for _ in resp.aiter_lines():
                pass
        ended.set()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            await api_server.wait_for_watches()
            assert api_server.faults.close_watches() == 1
            await ended.wait()


async def test_partition_holds_matching_clients(
    http: httpx.AsyncClient, api_server: ApiServer
) -> None:
    api_server.faults.partition(user_agent="victim")
    other = await http.get(CM)
    assert other.status_code == 200
    results: list[int] = []

    async def victim() -> None:
        r = await http.get(CM, headers={"user-agent": "victim/1.0"})
        results.append(r.status_code)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(victim)
            await api_server.faults.wait_held(1)  # the server has the request and holds it
            assert results == []
            api_server.faults.heal()
    assert results == [200]


async def test_restart_keeps_objects_and_forgets_history(
    http: httpx.AsyncClient, api_server: ApiServer
) -> None:
    rv = (await http.post(CM, json=cm("a"))).json()["metadata"]["resourceVersion"]
    port = api_server.port
    await api_server.restart()
    assert api_server.port == port
    async with httpx.AsyncClient(base_url=api_server.url) as fresh:
        assert (await fresh.get(f"{CM}/a")).status_code == 200
        created = (await fresh.post(CM, json=cm("b"))).json()
        assert int(created["metadata"]["resourceVersion"]) > int(rv)
        [event] = await watch_lines(fresh, CM, 1, resourceVersion=str(int(rv) - 1))
        assert event["type"] == "ERROR"
        assert event["object"]["code"] == 410


async def test_token_auth() -> None:
    async with ApiServer(token="s3cret") as server:
        async with httpx.AsyncClient(base_url=server.url) as http:
            r = await http.get("/api/v1/namespaces")
            assert r.status_code == 401
            assert r.json()["reason"] == "Unauthorized"
            r = await http.get("/api/v1/namespaces", headers={"authorization": "Bearer s3cret"})
            assert r.status_code == 200
        assert server.kubeconfig()["users"][0]["user"] == {"token": "s3cret"}


async def test_slow_watcher_is_dropped_not_waited_for() -> None:
    async with (
        ApiServer(watch_buffer=5) as server,
        httpx.AsyncClient(base_url=server.url) as http,
        http.stream("GET", CM, params={"watch": "1"}),
    ):
        with anyio.fail_after(5):
            await server.wait_for_watches()
        # writes go straight into the store, faster than the response can drain
        res = server.registry.lookup("", "v1", "configmaps")
        assert res is not None
        for i in range(50):
            server.rest.create(res, "default", cm(f"c{i}"), {})
        assert server.store.dropped_watchers == 1
        assert server.store.watch_count == 0


async def test_tls_with_generated_ca(tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    async with ApiServer(tls=True, token="t") as server:
        assert server.url.startswith("https://127.0.0.1:")
        assert server.ca_pem is not None
        context = ssl.create_default_context(cadata=server.ca_pem.decode())
        async with httpx.AsyncClient(
            base_url=server.url, verify=context, headers={"authorization": "Bearer t"}
        ) as http:
            assert (await http.get("/api/v1/namespaces/default")).status_code == 200
        kubeconfig = yaml.safe_load(server.write_kubeconfig(tmp_path / "kc").read_text())
        cluster = kubeconfig["clusters"][0]["cluster"]
        assert base64.b64decode(cluster["certificate-authority-data"]) == server.ca_pem


async def test_client_config_points_at_the_server(api_server: ApiServer) -> None:
    config = client_config_for(api_server)
    server = config["server"] if isinstance(config, dict) else config.server
    assert server == api_server.url


async def test_immutable_selector_is_rejected_on_update(http: httpx.AsyncClient) -> None:
    await http.post(DEPLOY, json=deployment("d"))
    r = await http.patch(
        f"{DEPLOY}/d",
        json={"spec": {"selector": {"matchLabels": {"app": "other"}}}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert r.status_code == 422
    assert "spec.selector" in {c["field"] for c in r.json()["details"]["causes"]}


POD = "/api/v1/namespaces/default/pods"


def pod(name: str, node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


async def test_pod_binding_and_graceful_deletion(http: httpx.AsyncClient) -> None:
    created = (await http.post(POD, json=pod("p"))).json()
    assert created["status"]["phase"] == "Pending"
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p"},
        "target": {"kind": "Node", "name": "n1"},
    }
    r = await http.post(f"{POD}/p/binding", json=binding)
    assert r.status_code == 201
    bound = (await http.get(f"{POD}/p")).json()
    assert bound["spec"]["nodeName"] == "n1"
    assert (await http.post(f"{POD}/p/binding", json=binding)).status_code == 409
    assert [
        o["metadata"]["name"]
        for o in (await http.get(POD, params={"fieldSelector": "spec.nodeName=n1"})).json()["items"]
    ] == ["p"]
    r = await http.delete(f"{POD}/p")  # bound: graceful, the kubelet finishes it
    assert r.json()["metadata"]["deletionGracePeriodSeconds"] == 30
    assert (await http.get(f"{POD}/p")).status_code == 200
    r = await http.request("DELETE", f"{POD}/p", json={"gracePeriodSeconds": 0})
    assert (await http.get(f"{POD}/p")).status_code == 404
    rv = (await http.post(POD, json=pod("q"))).json()["metadata"]["resourceVersion"]
    gone = (await http.delete(f"{POD}/q")).json()  # unscheduled pods go at once...
    assert (await http.get(f"{POD}/q")).status_code == 404
    # ...but gracefully all the same (CheckGracefulDelete): a grace period of 0, written before
    # the pod is removed, so watchers see the MODIFIED and then the DELETED
    assert gone["metadata"]["deletionGracePeriodSeconds"] == 0
    assert gone["metadata"]["deletionTimestamp"]
    events = await watch_lines(http, POD, 2, resourceVersion=rv, fieldSelector="metadata.name=q")
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]
    assert events[0]["object"]["metadata"]["deletionGracePeriodSeconds"] == 0


async def test_partition_holds_open_watch_events(
    http: httpx.AsyncClient, api_server: ApiServer
) -> None:
    rv = (await http.get(CM)).json()["metadata"]["resourceVersion"]
    got: list[str] = []
    done = anyio.Event()

    async def watch() -> None:
        params = {"watch": "1", "resourceVersion": rv, "timeoutSeconds": "2"}
        async with http.stream("GET", CM, params=params, headers={"user-agent": "slowpoke"}) as r:
            async for line in r.aiter_lines():
                if line:
                    got.append(json.loads(line)["object"]["metadata"]["name"])
        done.set()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            await api_server.wait_for_watches()
            api_server.faults.partition(user_agent="slowpoke")
            await http.post(CM, json=cm("held"))
            await api_server.faults.wait_held(1)  # the event reached the watch and is held
            assert got == []
            api_server.faults.heal("slowpoke")
            await done.wait()
    assert got == ["held"]


async def test_services_get_cluster_ips_and_node_ports(http: httpx.AsyncClient) -> None:
    svc = {
        "metadata": {"name": "s"},
        "spec": {"type": "NodePort", "selector": {"app": "x"}, "ports": [{"port": 80}]},
    }
    created = (await http.post("/api/v1/namespaces/default/services", json=svc)).json()
    [port] = created["spec"]["ports"]
    assert 30000 <= port["nodePort"] <= 32767
    assert port["targetPort"] == 80
    assert created["spec"]["clusterIP"].startswith("10.0.")


async def test_status_lines_carry_reason_phrases(api_server: ApiServer) -> None:
    """``HTTP/1.1 404 Not Found``, as Go writes it (hypercorn alone writes ``HTTP/1.1 404 ``)."""
    async with httpx.AsyncClient(base_url=api_server.url) as http:
        missing = await http.get("/api/v1/namespaces/default/configmaps/nope")
        created = await http.post(
            "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "phrase"}}
        )
        again = await http.post(
            "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "phrase"}}
        )
    assert (missing.status_code, missing.reason_phrase) == (404, "Not Found")
    assert (created.status_code, created.reason_phrase) == (201, "Created")
    assert (again.status_code, again.reason_phrase) == (409, "Conflict")
