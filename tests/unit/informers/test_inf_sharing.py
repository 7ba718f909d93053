"""PartSharer and compact(): equal results, shared parts, bounded table."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest

from kcm.informers import PartSharer, compact, strip_managed_fields
from kcm.models import decode
from kcm.models.core_v1 import (
    Container,
    ContainerPort,
    Pod,
    PodCondition,
    PodSpec,
    PodStatus,
    Toleration,
)
from kcm.models.meta_v1 import ManagedFieldsEntry, ObjectMeta


def pod(i: int, *, image: str = "registry.example/app:1", node: str = "node-1") -> Pod:
    # Built from JSON so that equal strings are distinct objects, as after a real decode.
    raw = msgspec.json.encode(
        Pod(
            metadata=ObjectMeta(
                name=f"p-{i}",
                namespace="default",
                uid=f"uid-{i}",
                labels={"app": "web", "tier": "frontend"},
                creation_timestamp=datetime(2024, 5, 1, tzinfo=UTC),
                managed_fields=[ManagedFieldsEntry(manager="kcm", operation="Update")],
            ),
            spec=PodSpec(
                containers=[
                    Container(
                        name="app",
                        image=image,
                        ports=[ContainerPort(container_port=8080, protocol="TCP")],
                    )
                ],
                node_name=node,
                tolerations=[Toleration(key="k", operator="Exists")],
            ),
            status=PodStatus(
                phase="Running",
                conditions=[
                    PodCondition(
                        type="Ready",
                        status="True",
                        last_transition_time=datetime(2024, 5, 1, 0, 0, i, tzinfo=UTC),
                    )
                ],
            ),
        )
    )
    return decode(Pod, raw)


def test_result_equals_input_and_equal_parts_are_shared() -> None:
    sharer = PartSharer()
    a, b = pod(1), pod(2)
    a_before = msgspec.json.encode(a)
    sa, sb = sharer(a), sharer(b)
    assert sa == a
    assert sb == b
    assert msgspec.json.encode(a) == a_before  # the input is never changed
    assert sa.spec is not None
    assert sb.spec is not None
    assert sa.spec.containers is not None
    assert sb.spec.containers is not None
    assert sa.spec.containers[0] is sb.spec.containers[0]
    assert sa.spec.tolerations is not None
    assert sb.spec.tolerations is not None
    assert sa.spec.tolerations[0] is sb.spec.tolerations[0]
    assert sa.metadata.labels is sb.metadata.labels
    assert sa.spec.node_name is sb.spec.node_name
    assert sa.status is not None
    assert sb.status is not None
    assert sa.status.phase is sb.status.phase
    # Conditions differ (timestamps) but their repeated strings are one object.
    assert sa.status.conditions is not None
    assert sb.status.conditions is not None
    ca, cb = sa.status.conditions[0], sb.status.conditions[0]
    assert ca is not cb
    assert ca.type is cb.type
    assert ca.status is cb.status


def test_different_parts_stay_different() -> None:
    sharer = PartSharer()
    sa = sharer(pod(1, image="a:1", node="n1"))
    sb = sharer(pod(2, image="a:2", node="n2"))
    assert sa.spec is not None
    assert sb.spec is not None
    assert sa.spec.containers is not None
    assert sb.spec.containers is not None
    assert sa.spec.containers[0].image == "a:1"
    assert sb.spec.containers[0].image == "a:2"
    assert sa.spec.node_name == "n1"
    assert sb.spec.node_name == "n2"


def test_the_table_is_bounded() -> None:
    sharer = PartSharer(max_entries=8)
    for i in range(50):
        p = pod(i, image=f"img:{i}", node=f"n{i}")
        assert sharer(p) == p
        assert len(sharer) <= 8
    sharer.clear()
    assert len(sharer) == 0
    with pytest.raises(ValueError, match="max_entries"):
        PartSharer(max_entries=0)


def test_non_struct_objects_are_returned_as_is() -> None:
    sharer = PartSharer()
    obj = {"metadata": {"name": "x"}}
    assert sharer(obj) is obj


def test_compact_strips_managed_fields_and_shares() -> None:
    a, b = compact(pod(1)), compact(pod(2))
    assert a.metadata.managed_fields is None
    assert a == strip_managed_fields(pod(1))
    assert a.spec is not None
    assert b.spec is not None
    assert a.spec.containers is not None
    assert b.spec.containers is not None
    assert a.spec.containers[0] is b.spec.containers[0]
