"""SQLite persistence: state and resourceVersions survive restarts; a failed write leaves none."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from kcm.apiserver import ApiServer
from kcm.apiserver._store import SqliteBackend, Store

pytestmark = pytest.mark.anyio

CM = "/api/v1/namespaces/default/configmaps"


async def test_state_survives_restart_and_new_process(tmp_path: Path) -> None:
    async with ApiServer(data_dir=tmp_path) as server:
        async with httpx.AsyncClient(base_url=server.url) as http:
            await http.post("/api/v1/namespaces", json={"metadata": {"name": "p"}})
            r = await http.post(CM, json={"metadata": {"name": "a"}, "data": {"k": "v"}})
            rv_a = int(r.json()["metadata"]["resourceVersion"])
            await http.post(CM, json={"metadata": {"name": "b"}})
            await http.delete(f"{CM}/b")
        await server.restart()
        async with httpx.AsyncClient(base_url=server.url) as http:
            assert (await http.get(f"{CM}/a")).json()["data"] == {"k": "v"}
            assert (await http.get(f"{CM}/b")).status_code == 404
            r = await http.post(CM, json={"metadata": {"name": "c"}})
            rv_c = int(r.json()["metadata"]["resourceVersion"])
            assert rv_c > rv_a + 2
    async with ApiServer(data_dir=tmp_path) as again, httpx.AsyncClient(base_url=again.url) as http:
        names = [o["metadata"]["name"] for o in (await http.get(CM)).json()["items"]]
        assert names == ["a", "c"]
        assert (await http.get("/api/v1/namespaces/p")).status_code == 200
        listed = (await http.get(CM)).json()
        assert int(listed["metadata"]["resourceVersion"]) >= rv_c


async def test_custom_resources_are_served_after_restart(tmp_path: Path) -> None:
    crd = {
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Cluster",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                }
            ],
        },
    }
    async with (
        ApiServer(data_dir=tmp_path) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        r = await http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd)
        assert r.status_code == 201
        r = await http.post("/apis/example.com/v1/things", json={"metadata": {"name": "t"}})
        assert r.status_code == 201
    async with (
        ApiServer(data_dir=tmp_path) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        assert (await http.get("/apis/example.com/v1/things/t")).status_code == 200


def test_failed_write_leaves_previous_state(tmp_path: Path) -> None:
    store = Store(SqliteBackend(tmp_path))
    store.create(("", "configmaps"), {"metadata": {"name": "a", "namespace": "x"}})

    class Boom(Exception):
        pass

    backend = store.backend
    assert isinstance(backend, SqliteBackend)
    db = backend._db
    real_execute = db.execute
    calls = 0

    class Crashing:
        def execute(self, sql: str, *args: object) -> object:
            nonlocal calls
            calls += 1
            if calls == 3:  # after BEGIN and the row write, before the RV and the COMMIT
                raise Boom
            return real_execute(sql, *args)

    backend._db = Crashing()  # type: ignore[assignment]
    with pytest.raises(Boom):
        store.create(("", "configmaps"), {"metadata": {"name": "b", "namespace": "x"}})
    backend._db = db
    assert store.rv == 1
    assert store.get(("", "configmaps"), "x", "b") is None
    store.close()
    reopened = Store(SqliteBackend(tmp_path))
    assert reopened.rv == 1
    assert set(reopened.objects[("", "configmaps")]) == {("x", "a")}
    reopened.close()
