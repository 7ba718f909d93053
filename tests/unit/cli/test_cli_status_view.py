"""The live status view: metrics → rows → a rendered frame."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge

from kcm.testing import FakeClock

pytest.importorskip("rich")
from rich.console import Console

from kcm.cli._status import RateTracker, StatusSnapshot, StatusView, read_metrics, render


def registry_with_metrics() -> CollectorRegistry:
    registry = CollectorRegistry()
    total = Counter(
        "controller_runtime_reconcile_total", "", ["controller", "result"], registry=registry
    )
    errors = Counter(
        "controller_runtime_reconcile_errors_total", "", ["controller"], registry=registry
    )
    active = Gauge("controller_runtime_active_workers", "", ["controller"], registry=registry)
    workers = Gauge(
        "controller_runtime_max_concurrent_reconciles", "", ["controller"], registry=registry
    )
    depth = Gauge("workqueue_depth", "", ["name"], registry=registry)
    total.labels("deployment", "success").inc(40)
    total.labels("deployment", "error").inc(2)
    errors.labels("deployment").inc(2)
    active.labels("deployment").set(1)
    workers.labels("deployment").set(5)
    depth.labels("deployment").set(3)
    workers.labels("sim-kubelet").set(8)
    for part in ("garbage_collector_attempt_to_delete", "garbage_collector_attempt_to_orphan"):
        workers.labels(part).set(20)
        total.labels(part, "success").inc(1)
    return registry


def test_read_metrics_sums_results_per_controller() -> None:
    m = read_metrics(registry_with_metrics())
    assert m.totals["deployment"] == 42.0
    assert m.errors == {"deployment": 2.0}
    assert (m.active["deployment"], m.workers["deployment"], m.depth["deployment"]) == (1, 5, 3)


def test_rates_over_a_sliding_window() -> None:
    rates = RateTracker(window=10)
    assert rates.update(0.0, {"a": 0.0}) == {"a": 0.0}
    assert rates.update(2.0, {"a": 10.0}) == {"a": 5.0}
    assert rates.update(5.0, {"a": 16.0})["a"] == 16.0 / 5.0
    assert rates.update(12.0, {"a": 16.0})["a"] == (16.0 - 10.0) / 10.0  # base: t=2
    assert rates.update(30.0, {"a": 10.0})["a"] == 0.0  # old samples dropped


def test_snapshot_and_render(monkeypatch: object) -> None:
    manager = SimpleNamespace(
        registry=registry_with_metrics(),
        elector=SimpleNamespace(leader="host_1234"),
        leader_election=object(),
        is_leader=False,
        factory=SimpleNamespace(informers=dict),
    )
    view = StatusView(
        manager,
        controllers=["deployment", "garbagecollector", "job"],
        server="http://127.0.0.1:1",
        simulated=True,
    )
    snap = view.snapshot()
    names = [r.name for r in snap.controllers]
    assert names == ["deployment", "garbagecollector", "job", "sim-kubelet"]
    deployment, gc, job, _ = snap.controllers
    assert (gc.workers, gc.total) == (40, 2)  # its two runtime controllers, summed
    assert (deployment.active, deployment.workers, deployment.queue) == (1, 5, 3)
    assert (deployment.errors, deployment.total, deployment.running) == (2, 42, True)
    assert job.running is False
    assert (snap.is_leader, snap.leader) == (False, "host_1234")
    console = Console(record=True, width=100)
    console.print(render(snap))
    text = console.export_text()
    assert "standby (leader: host_1234)" in text
    assert "nodes: 0/0 ready" not in text  # no node informer: no cluster line
    rows = {line.split()[0]: line.split()[1] for line in text.splitlines()[2:] if line.strip()}
    assert rows == dict.fromkeys(names, "waiting")

    manager.is_leader = True
    console = Console(record=True, width=100)
    console.print(render(view.snapshot()))
    rows = {
        line.split()[0]: line.split()[1]
        for line in console.export_text().splitlines()[2:]
        if line.strip()
    }
    assert rows == {
        "deployment": "1/5",
        "garbagecollector": "0/40",
        "job": "-",  # leading, without runtime metrics (podgc's single loop is such a one)
        "sim-kubelet": "0/8",
    }


def test_standby_rows_wait_even_with_registered_metrics() -> None:
    """A controller's worker gauge exists from when it was added, before the lease: a
    standby process shows "waiting", never "0/5"."""
    registry = CollectorRegistry()
    workers = Gauge(
        "controller_runtime_max_concurrent_reconciles", "", ["controller"], registry=registry
    )
    workers.labels("deployment").set(5)
    manager = SimpleNamespace(
        registry=registry,
        elector=SimpleNamespace(leader=None),
        leader_election=object(),
        is_leader=False,
        factory=SimpleNamespace(informers=dict),
    )
    view = StatusView(manager, controllers=["deployment"], server="http://s", simulated=False)
    console = Console(record=True, width=100)
    console.print(render(view.snapshot()))
    text = console.export_text()
    assert "standby (leader: nobody yet)" in text
    assert "0/5" not in text
    assert text.splitlines()[2].split()[:2] == ["deployment", "waiting"]


def test_the_header_keeps_the_kubeconfig_export_line() -> None:
    snap = StatusSnapshot(
        server="http://127.0.0.1:4",
        leader_election=False,
        is_leader=True,
        leader=None,
        uptime=1,
        kubeconfig="/home/me/.local/share/kcm/kubeconfig",
    )
    console = Console(record=True, width=120)
    console.print(render(snap))
    lines = console.export_text().splitlines()
    assert lines[0].startswith("kcm http://127.0.0.1:4")
    assert lines[1] == "kubectl: export KUBECONFIG=/home/me/.local/share/kcm/kubeconfig"
    assert lines[2].split()[0] == "controller"


def test_render_leader_and_cluster_line() -> None:
    snap = StatusSnapshot(
        server="http://x",
        leader_election=True,
        is_leader=True,
        leader="me",
        uptime=3725,
        nodes=(3, 3),
        pods={"Running": 4, "Succeeded": 1},
    )
    console = Console(record=True, width=100)
    console.print(render(snap))
    text = console.export_text()
    assert "leader: this process" in text
    assert "up 1:02:05" in text
    assert "nodes: 3/3 ready   pods: 4 running, 1 succeeded" in text


@pytest.mark.anyio
async def test_the_live_view_redraws_until_cancelled(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    import anyio

    from kcm.cli import _logging

    buffer = io.StringIO()
    monkeypatch.setattr(_logging, "_console", Console(file=buffer, force_terminal=True, width=100))
    manager = SimpleNamespace(
        registry=registry_with_metrics(),
        elector=None,
        leader_election=None,
        is_leader=True,
        factory=SimpleNamespace(informers=dict),
    )
    clock = FakeClock()
    view = StatusView(
        manager,
        controllers=["deployment"],
        server="http://s",
        simulated=False,
        interval=1.0,
        clock=clock,
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(view.run)
        await clock.advance(0)
        assert buffer.getvalue().count("leader election off") == 1  # the first frame
        assert "up 0:00:00" in buffer.getvalue()
        await clock.advance(0.9)
        assert buffer.getvalue().count("leader election off") == 1  # not yet a second
        await clock.advance(2.1)
        text = buffer.getvalue()
        assert text.count("leader election off") == 4  # the first frame, a redraw a second
        assert "up 0:00:03" in text
        tg.cancel_scope.cancel()
    assert "deployment" in text
