"""The node lifecycle controller against the embedded API server, on a FakeClock (§12)."""

from __future__ import annotations

import pytest

from kcm.errors import NotFound
from kcm.models import Taint
from kcm.testing import eventually

from .harness import Cluster, cluster, taint, tolerate

pytestmark = pytest.mark.anyio


async def _cached(c: Cluster, *names: str) -> None:
    await eventually(lambda: all(c.ctl.nodes.get_or_none(None, n) for n in names))


async def _pod_ready(c: Cluster, name: str) -> str:
    pod = await c.pods.get(name)
    ready = [x for x in (pod.status.conditions if pod.status else None) or () if x.type == "Ready"]
    return ready[0].status or "" if ready else ""


async def _gone(c: Cluster, name: str) -> bool:
    """Deleted: gone, or terminating (a pod bound to a node waits for its kubelet)."""
    try:
        pod = await c.pods.get(name)
    except NotFound:
        return True
    return pod.metadata.deletion_timestamp is not None


async def test_a_silent_node_goes_unknown_is_tainted_and_its_pods_evicted() -> None:
    async with cluster() as c:
        await c.add_node("n1")
        await c.add_node("n2")
        await c.renew("n1", "n2")
        await _cached(c, "n1", "n2")
        await c.add_pod("quick", "n1", tolerations=[tolerate("unreachable", 3)])
        await c.add_pod("patient", "n1")  # DefaultTolerationSeconds: 300 s
        await c.add_pod("forever", "n1", tolerations=[tolerate("unreachable", None)])
        await c.add_pod("elsewhere", "n2")
        await eventually(lambda: len(c.ctl.pods.list()) == 4)
        # n2 renews its Lease only (status never refreshed): the Lease alone keeps it Ready
        # first seen at the pass 1 s in: Unknown once more than 4 s passed since
        await c.tick(5, keep=("n2",))
        assert (await c.conditions("n1"))["Ready"] == ("True", "KubeletReady")
        await c.tick(1, keep=("n2",))
        assert await c.conditions("n1") == {
            "Ready": ("Unknown", "NodeStatusUnknown"),
            "MemoryPressure": ("Unknown", "NodeStatusNeverUpdated"),
            "DiskPressure": ("Unknown", "NodeStatusNeverUpdated"),
            "PIDPressure": ("Unknown", "NodeStatusNeverUpdated"),
        }
        assert (await c.conditions("n2"))["Ready"] == ("True", "KubeletReady")
        assert await _pod_ready(c, "quick") == "False"
        assert await _pod_ready(c, "elsewhere") == "True"
        assert "Warning NodeNotReady Node is not ready" in c.recorder.events
        assert "Normal NodeNotReady Node n1 status is now: NodeNotReady" in c.recorder.events
        await eventually(
            lambda: c.ctl.nodes.get_or_none(None, "n1").spec.taints is not None  # type: ignore[union-attr]
        )
        assert await c.taints("n1") == {taint("unreachable", "NoSchedule")}
        await c.tick(1, keep=("n2",))  # the next pass queues the NoExecute taint
        await eventually(lambda: _has(c, "n1", taint("unreachable")))
        assert await c.taints("n2") == set()
        await c.tick(2, keep=("n2",))
        assert not await _gone(c, "quick")
        await c.tick(1, keep=("n2",))  # 3 s after the taint
        await eventually(lambda: _gone(c, "quick"))
        assert "Normal TaintManagerEviction Marking for deletion Pod default/quick" in (
            c.recorder.events
        )
        assert not await _gone(c, "patient")
        assert not await _gone(c, "forever")
        # the node comes back: both NoExecute taints go, the pending eviction is cancelled
        await c.heartbeat("n1")
        await c.renew("n1")
        await c.tick(1, keep=("n1", "n2"))
        await eventually(lambda: _has_none(c, "n1"))
        await eventually(
            lambda: (
                "Normal TaintManagerEviction Cancelling deletion of Pod default/patient"
                in c.recorder.events
            )
        )
        assert not await _gone(c, "patient")


async def _has(c: Cluster, node: str, wanted: tuple[str, str]) -> bool:
    return wanted in await c.taints(node)


async def _has_none(c: Cluster, node: str) -> bool:
    return await c.taints(node) == set()


async def test_an_untolerated_no_execute_taint_evicts_at_once() -> None:
    async with cluster() as c:
        await c.add_node("n1")
        await _cached(c, "n1")
        await c.add_pod("p", "n1")
        await eventually(lambda: len(c.ctl.pods.list()) == 1)
        node = await c.nodes.get("n1")
        spec = node.spec
        assert spec is not None
        import msgspec

        await c.nodes.update(
            node,
            msgspec.structs.replace(
                node,
                spec=msgspec.structs.replace(spec, taints=[Taint(key="x", effect="NoExecute")]),
            ),
        )
        await eventually(lambda: _gone(c, "p"))


async def test_a_node_that_never_posted_status_goes_unknown_after_the_startup_grace() -> None:
    async with cluster() as c:
        await c.add_node("n1", ready=None)
        await c.add_node("n2")
        await _cached(c, "n1", "n2")
        await c.tick(6, keep=("n2",))  # created at 0: Unknown once more than 6 s passed
        assert await c.conditions("n1") == {}
        await c.tick(1, keep=("n2",))
        assert await c.conditions("n1") == {
            kind: ("Unknown", "NodeStatusNeverUpdated")
            for kind in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
        }


async def test_ready_false_gets_the_not_ready_taints_and_new_pods_are_marked() -> None:
    async with cluster() as c:
        await c.add_node("n1")
        await c.add_node("n2")
        await _cached(c, "n1", "n2")
        await c.heartbeat("n1", "False")
        await c.tick(2, keep=("n1", "n2"))
        await eventually(
            lambda: _equal(c, "n1", {taint("not-ready", "NoSchedule"), taint("not-ready")})
        )
        await c.add_pod("late", "n1", bind_later=True)
        await eventually(lambda: _ready_is(c, "late", "False"))


async def _label(c: Cluster, node: str, key: str, value: str) -> bool:
    return ((await c.nodes.get(node)).metadata.labels or {}).get(key) == value


async def _equal(c: Cluster, node: str, wanted: set[tuple[str, str]]) -> bool:
    return await c.taints(node) == wanted


async def _ready_is(c: Cluster, pod: str, status: str) -> bool:
    return await _pod_ready(c, pod) == status


async def test_a_single_node_cluster_is_never_tainted_no_execute() -> None:
    async with cluster() as c:
        await c.add_node("n1")
        await c.add_pod("p", "n1")
        await _cached(c, "n1")
        await c.tick(8)
        assert (await c.conditions("n1"))["Ready"] == ("Unknown", "NodeStatusUnknown")
        assert await c.taints("n1") == {taint("unreachable", "NoSchedule")}
        assert not await _gone(c, "p")


async def test_pressure_and_cordon_become_no_schedule_taints_and_labels_are_mirrored() -> None:
    async with cluster() as c:
        await c.add_node("n1", **{"kubernetes.io/os": "linux"})
        await _cached(c, "n1")
        await c.nodes.patch("n1", {"spec": {"unschedulable": True}})
        await eventually(lambda: _has(c, "n1", taint("unschedulable", "NoSchedule")))
        await eventually(lambda: _label(c, "n1", "beta.kubernetes.io/os", "linux"))
        await c.nodes.patch("n1", {"spec": {"unschedulable": False}})
        await eventually(lambda: _has_none(c, "n1"))
