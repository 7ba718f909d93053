"""``delete_pods`` against the embedded API server: deleted, already gone, refused."""

from __future__ import annotations

import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllerkit import UIDTrackingControllerExpectations, delete_pods
from kcm.errors import InternalError
from kcm.models import object_key
from kcm.models.core_v1 import ConfigMap, Container, Pod, PodSpec
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import FakeClock, FakeRecorder, client_config_for

pytestmark = pytest.mark.anyio

NS = "default"
OWNER = ConfigMap(metadata=ObjectMeta(name="owner", namespace=NS))
KEY = "default/owner"


def pod(name: str) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace=NS, uid=f"uid-{name}"),
        spec=PodSpec(containers=[Container(name="c", image="nginx")]),
    )


async def test_deleted_and_gone_pods_count_as_deleted_and_only_real_deletes_are_awaited(
    api_server: ApiServer,
) -> None:
    expectations = UIDTrackingControllerExpectations(clock=FakeClock())
    recorder = FakeRecorder()
    async with ApiClient(client_config_for(api_server)) as client:
        created = await client.api(Pod, NS).create(pod("a"))
        victims = [created, pod("gone")]
        expectations.expect_deletions(KEY, [object_key(p) for p in victims])
        result = await delete_pods(
            client, NS, victims, owner=OWNER, key=KEY, expectations=expectations, recorder=recorder
        )
        assert result.deleted == {created.metadata.uid, "uid-gone"}
        assert result.errors == []
        assert recorder.events == ["Normal SuccessfulDelete Deleted pod: a"]
        assert [p.metadata.name for p in (await client.api(Pod, NS).list()).items] == []
        # the gone pod is observed at once; the real delete waits for the informer
        assert not expectations.satisfied(KEY)
        expectations.deletion_observed(KEY, object_key(created))
        assert expectations.satisfied(KEY)


async def test_a_refused_delete_is_an_error_a_warning_and_not_awaited(
    api_server: ApiServer,
) -> None:
    expectations = UIDTrackingControllerExpectations(clock=FakeClock())
    recorder = FakeRecorder()
    async with ApiClient(client_config_for(api_server)) as client:
        created = await client.api(Pod, NS).create(pod("b"))
        expectations.expect_deletions(KEY, [object_key(created)])
        api_server.faults.fail_next(1, code=500)
        result = await delete_pods(
            client,
            NS,
            [created],
            owner=OWNER,
            key=KEY,
            expectations=expectations,
            recorder=recorder,
        )
        assert result.deleted == set()
        assert [type(e) for e in result.errors] == [InternalError]
        assert len(recorder.events) == 1
        assert recorder.events[0].startswith("Warning FailedDelete Error deleting: ")
        assert "500" not in recorder.events[0]  # the Status message alone, as Go prints it
        assert recorder.objects == [OWNER]
        assert expectations.satisfied(KEY)
        assert [p.metadata.name for p in (await client.api(Pod, NS).list()).items] == ["b"]
