"""Simulation building blocks that need no server: config, durations, requests, taints."""

from __future__ import annotations

from decimal import Decimal

import pytest

from kcm.models import (
    Container,
    Node,
    NodeSpec,
    ObjectMeta,
    Pod,
    PodSpec,
    ResourceRequirements,
    Taint,
    Toleration,
)
from kcm.simulation import SimulationConfig, parse_duration
from kcm.simulation._filters import taint_reason
from kcm.simulation._resources import pod_requests


def test_config_defaults_and_names() -> None:
    config = SimulationConfig()
    assert config.node_names() == ["kcm-node-1", "kcm-node-2", "kcm-node-3"]
    assert (config.heartbeat_period, config.lease_duration) == (10.0, 40)
    assert SimulationConfig(nodes=0).node_names() == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"nodes": -1}, "nodes must not be negative"),
        ({"node_pods": 0}, "node_pods must be at least 1"),
        ({"heartbeat_period": 0}, "heartbeat_period must be positive"),
        ({"job_duration": -1}, "job_duration must not be negative"),
        ({"node_memory": "lots"}, "node_memory 'lots' is not a quantity"),
        ({"lease_duration": 0}, "lease_duration must be at least 1"),
    ],
)
def test_config_validation(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SimulationConfig(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("3", 3.0), ("2.5", 2.5), ("90s", 90.0), ("1m30s", 90.0), ("250ms", 0.25), ("1h", 3600.0)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "5 s", "1m30", "-2", "s"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def _container(cpu: str | None = None, memory: str | None = None) -> Container:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    return Container(name="c", image="i", resources=ResourceRequirements(requests=requests))


def test_pod_requests_sum_containers_and_take_the_largest_init_container() -> None:
    pod = Pod(
        metadata=ObjectMeta(name="p"),
        spec=PodSpec(
            containers=[_container("250m", "1Gi"), _container("500m"), Container(name="x")],
            init_containers=[_container("2", "512Mi")],
        ),
    )
    assert pod_requests(pod) == (Decimal(2), Decimal(1024**3))
    assert pod_requests(Pod(metadata=ObjectMeta(name="empty"))) == (0, 0)


def test_taints_and_tolerations() -> None:
    node = Node(
        metadata=ObjectMeta(name="n"),
        spec=NodeSpec(
            taints=[
                Taint(key="dedicated", value="gpu", effect="NoSchedule"),
                Taint(key="soft", effect="PreferNoSchedule"),
            ]
        ),
    )
    plain = Pod(metadata=ObjectMeta(name="p"), spec=PodSpec(containers=[]))
    assert taint_reason(plain, node) == "node(s) had untolerated taint {dedicated: gpu}"
    equal = Pod(
        metadata=ObjectMeta(name="p"),
        spec=PodSpec(tolerations=[Toleration(key="dedicated", value="gpu", operator="Equal")]),
    )
    assert taint_reason(equal, node) is None
    wrong = Pod(
        metadata=ObjectMeta(name="p"),
        spec=PodSpec(tolerations=[Toleration(key="dedicated", value="cpu")]),
    )
    assert taint_reason(wrong, node) == "node(s) had untolerated taint {dedicated: gpu}"
    everything = Pod(
        metadata=ObjectMeta(name="p"), spec=PodSpec(tolerations=[Toleration(operator="Exists")])
    )
    assert taint_reason(everything, node) is None
