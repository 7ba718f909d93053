"""ReplicaController: a ReplicaManager on the subclass's kind, under its queue name."""

from __future__ import annotations

from typing import final

from kcm.client import ApiClient, ClientConfig
from kcm.controllerkit import ReplicaController, ReplicaKind
from kcm.informers import SharedInformerFactory
from kcm.models.apps_v1 import ReplicaSet, ReplicaSetCondition, ReplicaSetStatus
from kcm.selectors import LabelSelector
from kcm.testing import FakeClock, FakeRecorder

KIND: ReplicaKind[ReplicaSet] = ReplicaKind(
    model=ReplicaSet,
    api_version="apps/v1",
    kind="ReplicaSet",
    selector=lambda rs: LabelSelector.from_model(rs.spec.selector if rs.spec else None),
    status_type=ReplicaSetStatus,
    condition_type=ReplicaSetCondition,
)


@final
class _Mine(ReplicaController[ReplicaSet]):
    kind = KIND
    queue_name = "my-replicas"


def test_the_subclass_names_the_kind_and_the_queue_of_its_manager() -> None:
    client = ApiClient(ClientConfig(server="https://127.0.0.1:1"))
    controller = _Mine(
        client,
        SharedInformerFactory(client),
        recorder=FakeRecorder(),
        clock=FakeClock(),
        workers=3,
        burst_replicas=7,
    )
    manager = controller.manager
    assert manager.kind is KIND
    assert manager.name == "my-replicas"
    assert manager.controller.max_concurrent_reconciles == 3
    assert controller.expectations is manager.expectations
