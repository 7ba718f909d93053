"""``kcm bench`` end to end on the embedded API server, and its informer measurement."""

from __future__ import annotations

import pytest

from kcm.apiserver import ApiServer
from kcm.cli._bench_informer import measure_informer
from kcm.cli._bench_load import create_objects, ensure_namespace, update_objects
from kcm.cli._main import main
from kcm.client import ApiClient
from kcm.models.core_v1 import ConfigMap
from kcm.testing import client_config_for


@pytest.mark.anyio
async def test_the_watch_replays_updates_made_after_the_list(api_server: ApiServer) -> None:
    """The watch opens only after the updates, from the list's RV: the informer sees them all
    as updates, in one replay, and the cache holds every object once."""
    async with ApiClient(client_config_for(api_server)) as client:
        await ensure_namespace(client, "bench")
        api = client.api(ConfigMap, "bench")
        created: list[int] = []
        await create_objects(api, "configmaps", 20, created.append)
        assert sum(created) == 20
        listed: list[int] = []
        events: list[int] = []
        updated: list[int] = []

        async def make_updates() -> None:
            assert listed == [20]  # the list came first
            await update_objects(api, 20, 30, updated.append)

        result = await measure_informer(
            api,
            updates=30,
            make_updates=make_updates,
            on_listed=listed.append,
            on_event=events.append,
        )
        assert (result.objects, result.events, sum(updated)) == (20, 30, 30)
        assert events[-1] == 30
        assert int(result.list_resource_version) > 0
        assert result.bytes_per_object >= 0


def test_kcm_bench_on_the_embedded_server_prints_the_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bench", "--objects", "200", "--updates", "200"]) == 0
    out = capsys.readouterr().out
    assert "kcm bench: pods on embedded API server at http://127.0.0.1:" in out
    assert "informer throughput" in out
    line = next(line for line in out.splitlines() if "kcm informer" in line)
    assert "200" in line
