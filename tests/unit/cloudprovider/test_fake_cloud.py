"""FakeCloud: recorded calls, injected failures, switchable parts."""

from __future__ import annotations

import pytest

from kcm.cloudprovider import FakeCall, FakeCloud, default_load_balancer_name
from kcm.errors import InstanceNotFound
from kcm.models.core_v1 import Service
from kcm.models.meta_v1 import ObjectMeta

pytestmark = pytest.mark.anyio


async def test_failures_are_injected_for_a_number_of_calls_then_heal() -> None:
    cloud = FakeCloud()
    cloud.fail("list_clusters", RuntimeError("down"), times=2)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="down"):
            await cloud.list_clusters()
    assert await cloud.list_clusters() == ["kubernetes"]
    cloud.fail("list_clusters", RuntimeError("down"))
    with pytest.raises(RuntimeError):
        await cloud.list_clusters()
    cloud.heal("list_clusters")
    await cloud.list_clusters()
    assert cloud.calls == [FakeCall("list_clusters")] * 5


async def test_instances_and_parts() -> None:
    cloud = FakeCloud(routes=False, zones=False)
    assert cloud.routes() is None
    assert cloud.zones() is None
    assert cloud.load_balancer() is cloud
    cloud.add_instance("n1", instance_type="m1")
    assert await cloud.instance_id("n1") == "n1"
    assert await cloud.instance_exists_by_provider_id("fake://n1")
    with pytest.raises(InstanceNotFound):
        await cloud.instance_type("n2")


def test_default_load_balancer_name_is_a_and_the_uid_cut_to_32() -> None:
    service = Service(metadata=ObjectMeta(uid="0123abcd-4567-89ef-0123-456789abcdef"))
    assert default_load_balancer_name(service) == "a0123abcd456789ef0123456789abcde"
    assert len(default_load_balancer_name(service)) == 32
